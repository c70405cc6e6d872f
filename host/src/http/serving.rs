//! Serving threads: one single-threaded runtime per core, each serving whole
//! connections.
//!
//! Why: on tokio's work-stealing runtime a request crosses threads several
//! times (the connection task, rmcp's per-request tasks, the response), and
//! every crossing is a futex or eventfd wake-up and a context switch. On two
//! cores those wake-ups cost more CPU than the tool call itself: a trivial
//! call took about 60 µs of server CPU there, and about 42 µs on one
//! single-threaded runtime. Here a connection lives on one thread from accept
//! to close, so a short call never leaves it; calls that run long move to the
//! worker pool (see [`Placement`](crate::runtime::Placement)), so they never
//! hold up the other connections of their thread.
//!
//! A serving thread also holds an SSE answer until its first message, so that
//! both leave in one write ([`coalesce`](super::coalesce)): its park hook and
//! a heartbeat release what it holds.
//!
//! One acceptor hands accepted connections to the threads in turn (round
//! robin), which spreads even a few clients over every core, where
//! `SO_REUSEPORT` hashing could put two clients on one thread. It also keeps
//! the number of open connections under `--max-connections`; each connection
//! is served by [`connection`](super::connection), which bounds how long it
//! may sit idle or stall.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;

use super::connection::{self, ConnectionLimits, Held};

/// A connection on its way from the acceptor to a serving thread, with its
/// place under the connection cap.
type Accepted = (std::net::TcpStream, OwnedSemaphorePermit);

/// Threads serving HTTP connections, and the acceptor feeding them.
pub(crate) struct ServingThreads {
    finished: Vec<oneshot::Receiver<()>>,
    /// Cancelled to drop every connection still open (see [`stop`](Self::stop)).
    abort: CancellationToken,
}

impl ServingThreads {
    /// Starts `count` serving threads running `app`, and an acceptor task on
    /// the current runtime that hands them what `listener` accepts until
    /// `stop_accepting` is cancelled, at most `max_connections` open at once.
    /// Each thread then stops serving gracefully: open connections finish
    /// their requests.
    pub(crate) fn start(
        count: usize,
        listener: TcpListener,
        app: Router,
        limits: ConnectionLimits,
        max_connections: usize,
        stop_accepting: CancellationToken,
    ) -> io::Result<Self> {
        let abort = CancellationToken::new();
        let mut inboxes = Vec::with_capacity(count);
        let mut finished = Vec::with_capacity(count);
        for index in 0..count.max(1) {
            let (inbox, connections) = mpsc::unbounded_channel();
            let (done, finished_rx) = oneshot::channel();
            let app = app.clone();
            let stop = stop_accepting.clone();
            let abort = abort.clone();
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .on_thread_park(super::coalesce::release_held)
                .build()?;
            std::thread::Builder::new()
                .name(format!("wharf-http-{index}"))
                .spawn(move || {
                    runtime.block_on(async move {
                        // Request deadlines use this runtime's timers; the
                        // heartbeat, which also bounds how long a busy thread
                        // holds an SSE answer, ends when the runtime is dropped.
                        super::coalesce::hold_on_this_thread();
                        tokio::spawn(super::deadline::keep_timers_due(
                            super::coalesce::release_held,
                        ));
                        tokio::select! {
                            () = serve_connections(connections, app, limits, stop) => {}
                            () = abort.cancelled() => {}
                        }
                    });
                    // Dropping the runtime drops the connections still open.
                    drop(runtime);
                    let _ = done.send(());
                })?;
            inboxes.push(inbox);
            finished.push(finished_rx);
        }
        let slots = Arc::new(Semaphore::new(max_connections.max(1)));
        tokio::spawn(accept(listener, inboxes, slots, stop_accepting));
        Ok(Self { finished, abort })
    }

    /// Waits until every thread has finished serving, at most `grace`; then
    /// drops the connections still open. Returns whether all finished in time.
    pub(crate) async fn stop(self, grace: Duration) -> bool {
        let all = futures::future::join_all(self.finished);
        let in_time = tokio::time::timeout(grace, all).await.is_ok();
        self.abort.cancel();
        in_time
    }
}

/// A serving thread's loop: serves each connection handed to it, until
/// `stop`; then waits until every one of them has closed gracefully.
async fn serve_connections(
    mut inbox: mpsc::UnboundedReceiver<Accepted>,
    app: Router,
    limits: ConnectionLimits,
    stop: CancellationToken,
) {
    let (all_closed, open) = watch::channel(());
    // Until the acceptor has stopped (it does at once on `stop`) and every
    // connection it handed over has been taken: one accepted just before the
    // stop holds a request its client has sent, and is served too.
    while let Some((stream, permit)) = inbox.recv().await {
        let stream = match TcpStream::from_std(stream) {
            Ok(stream) => stream,
            Err(error) => {
                tracing::debug!(%error, "cannot take over a connection");
                continue;
            }
        };
        let held = Held {
            _permit: permit,
            _open: open.clone(),
        };
        tokio::spawn(connection::serve(
            stream,
            app.clone(),
            limits,
            stop.clone(),
            held,
        ));
    }
    drop(open);
    all_closed.closed().await;
}

/// Accepts connections and hands each to the next serving thread.
///
/// At most `slots` connections are open at once: when all are taken the
/// acceptor stops accepting (new connections wait in the kernel's backlog)
/// until one closes. Idle connections close after the header timeout, so a
/// crowd of idle sockets holds the others back for at most that long.
///
/// On `stop`, the connections already in the backlog are accepted and served
/// before the listener closes: closing it with them inside would reset them,
/// and their clients have sent requests that a balancer does not send again
/// (a POST). Only a connection that arrives in the instant between that last
/// accept and the close is refused.
async fn accept(
    listener: TcpListener,
    mut inboxes: Vec<mpsc::UnboundedSender<Accepted>>,
    slots: Arc<Semaphore>,
    stop: CancellationToken,
) {
    let mut next = 0;
    let mut full = false;
    loop {
        let Some(permit) = connection_slot(&slots, &mut full, &stop).await else {
            break;
        };
        let accepted = tokio::select! {
            () = stop.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted.and_then(|(stream, _peer)| stream.into_std()) {
            Ok(stream) => stream,
            Err(error) => {
                accept_failed(error).await;
                continue;
            }
        };
        if !hand_over(stream, permit, &mut inboxes, &mut next) {
            return;
        }
    }
    let listener = match listener.into_std() {
        Ok(listener) => listener,
        Err(error) => {
            tracing::debug!(%error, "cannot take the listener back to empty its backlog");
            return;
        }
    };
    loop {
        match listener.accept() {
            Ok((stream, _peer)) => {
                // Past the connection cap if need be: each is one request,
                // answered with `Connection: close` while draining.
                let permit = slots.clone().try_acquire_owned().unwrap_or_else(|_| {
                    slots.add_permits(1);
                    slots
                        .clone()
                        .try_acquire_owned()
                        .expect("the permit just added")
                });
                if let Err(error) = stream.set_nonblocking(true) {
                    tracing::debug!(%error, "cannot make a connection non-blocking");
                    continue;
                }
                if !hand_over(stream, permit, &mut inboxes, &mut next) {
                    return;
                }
            }
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error)
                if matches!(
                    error.kind(),
                    io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset
                ) => {}
            // `WouldBlock`: the backlog is empty.
            Err(_) => return,
        }
    }
}

/// Hands an accepted connection to the next serving thread; `false` once no
/// thread is left.
fn hand_over(
    stream: std::net::TcpStream,
    permit: OwnedSemaphorePermit,
    inboxes: &mut Vec<mpsc::UnboundedSender<Accepted>>,
    next: &mut usize,
) -> bool {
    // Responses are written in several small pieces (SSE framing): with
    // Nagle on, each waits for the peer's delayed ACK (about 40 ms).
    if let Err(error) = stream.set_nodelay(true) {
        tracing::debug!(%error, "cannot set TCP_NODELAY");
    }
    let mut handed = (stream, permit);
    loop {
        match inboxes[*next].send(handed) {
            Ok(()) => {
                *next = (*next + 1) % inboxes.len();
                return true;
            }
            // Only a thread that died stops receiving before the acceptor
            // stops (a bug): the others take its share.
            Err(mpsc::error::SendError(back)) => {
                tracing::error!("a serving thread has stopped; serving on the others");
                inboxes.remove(*next);
                if inboxes.is_empty() {
                    tracing::error!("no serving thread is left; no longer accepting");
                    return false;
                }
                *next %= inboxes.len();
                handed = back;
            }
        }
    }
}

/// A place for the next connection: at once when one is free; else once an
/// open connection closes, with a log line when the limit is first reached
/// (`full` remembers that until a place is free at once again). `None` once
/// `stop` is cancelled.
async fn connection_slot(
    slots: &Arc<Semaphore>,
    full: &mut bool,
    stop: &CancellationToken,
) -> Option<OwnedSemaphorePermit> {
    if let Ok(permit) = slots.clone().try_acquire_owned() {
        *full = false;
        return Some(permit);
    }
    if !*full {
        *full = true;
        tracing::warn!(
            "connection limit reached (--max-connections); new connections wait until an \
             open one closes"
        );
    }
    tokio::select! {
        () = stop.cancelled() => None,
        permit = slots.clone().acquire_owned() => permit.ok(),
    }
}

/// After a failed accept: a connection reset before it was accepted is
/// nothing; anything else (out of file descriptors, say) is logged and
/// retried after a pause, so the loop does not spin.
async fn accept_failed(error: io::Error) {
    use io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(
        error.kind(),
        ConnectionAborted | ConnectionRefused | ConnectionReset
    ) {
        return;
    }
    tracing::error!(%error, "accepting a connection failed; retrying in a second");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::routing::get;
    use std::net::SocketAddr;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// The name of the thread that answered a `GET /` on a new connection.
    async fn answering_thread(addr: SocketAddr) -> String {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).await.unwrap();
        response.rsplit("\r\n\r\n").next().unwrap().to_string()
    }

    const LIMITS: ConnectionLimits = ConnectionLimits {
        header_timeout: Duration::from_secs(30),
        write_stall_timeout: Duration::from_secs(30),
    };

    fn start(
        threads: usize,
        listener: TcpListener,
        app: Router,
        max_connections: usize,
        stop: CancellationToken,
    ) -> ServingThreads {
        ServingThreads::start(threads, listener, app, LIMITS, max_connections, stop).unwrap()
    }

    fn thread_name_app() -> Router {
        Router::new().route(
            "/",
            get(|| async { std::thread::current().name().unwrap_or("").to_string() }),
        )
    }

    #[tokio::test]
    async fn connections_go_to_the_threads_in_turn() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = CancellationToken::new();
        let threads = start(3, listener, thread_name_app(), 100, stop.clone());
        let mut seen = Vec::new();
        for _ in 0..6 {
            seen.push(answering_thread(addr).await);
        }
        assert_eq!(
            seen,
            [
                "wharf-http-0",
                "wharf-http-1",
                "wharf-http-2",
                "wharf-http-0",
                "wharf-http-1",
                "wharf-http-2"
            ]
        );
        stop.cancel();
        assert!(threads.stop(Duration::from_secs(5)).await);
        assert!(TcpStream::connect(addr).await.is_err(), "still accepting");
    }

    #[tokio::test]
    async fn a_connection_waiting_in_the_backlog_at_the_stop_is_served() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = CancellationToken::new();
        // One place, taken by an idle connection: the next waits in the backlog.
        let threads = start(1, listener, thread_name_app(), 1, stop.clone());
        let idle = TcpStream::connect(addr).await.unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut waiting = TcpStream::connect(addr).await.unwrap();
        waiting
            .write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        stop.cancel();
        let mut response = String::new();
        tokio::time::timeout(
            Duration::from_secs(5),
            waiting.read_to_string(&mut response),
        )
        .await
        .expect("an answer, not a hang")
        .expect("an answer, not a reset");
        assert!(response.starts_with("HTTP/1.1 200 OK"), "{response}");
        assert!(response.ends_with("wharf-http-0"), "{response}");
        drop(idle);
        assert!(threads.stop(Duration::from_secs(5)).await);
        assert!(TcpStream::connect(addr).await.is_err(), "still accepting");
    }

    #[tokio::test]
    async fn connections_skip_a_thread_that_stopped_receiving() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (dead, dropped) = mpsc::unbounded_channel();
        drop(dropped);
        let (live, mut received) = mpsc::unbounded_channel();
        let stop = CancellationToken::new();
        let slots = Arc::new(Semaphore::new(10));
        let acceptor = tokio::spawn(accept(listener, vec![dead, live], slots, stop.clone()));
        let _first = TcpStream::connect(addr).await.unwrap();
        let _second = TcpStream::connect(addr).await.unwrap();
        for _ in 0..2 {
            let handed = tokio::time::timeout(Duration::from_secs(5), received.recv()).await;
            assert!(matches!(handed, Ok(Some(_))), "a connection was lost");
        }
        stop.cancel();
        acceptor.await.unwrap();
    }

    #[tokio::test]
    async fn stop_drops_connections_that_outlast_the_grace_period() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = Router::new().route(
            "/",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(60)).await;
                "late"
            }),
        );
        let stop = CancellationToken::new();
        let threads = start(1, listener, app, 100, stop.clone());
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        stop.cancel();
        assert!(!threads.stop(Duration::from_millis(200)).await);
        // The request in flight was dropped with its thread's runtime.
        let mut rest = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut rest))
            .await
            .expect("the connection was not closed");
        assert!(read.is_err() || rest.is_empty(), "{rest:?}");
    }
}
