//! One HTTP connection, from its first byte to its close, with the bounds
//! that keep an idle, slow or absent client from holding it forever.
//!
//! Why not `axum::serve`: it builds hyper's connection without a timer, so
//! hyper's header-read timeout never runs, and a client that opens a socket
//! and sends nothing (or a header a byte a minute: slowloris) keeps it open
//! for good. Here hyper's HTTP/1.1 connection is built directly, with:
//!
//! - **the header timeout** ([`ConnectionLimits::header_timeout`]): hyper's
//!   `header_read_timeout`, which runs whenever the connection waits for a
//!   request head: from the accept, and again after each answer on a
//!   kept-alive connection. So it bounds a slowloris head *and* an idle
//!   connection, new or kept alive. It never runs while a response is being
//!   written, so an open SSE stream (`subscriptions/listen`, a legacy GET) is
//!   not cut, however quiet.
//! - **the write-stall timeout** ([`ConnectionLimits::write_stall_timeout`],
//!   [`StallBound`]): a client that takes none of a response's bytes for that
//!   long (an SSE stream it never reads, say) is disconnected with a log line.
//!   Until then what waits for it is bounded: the socket's buffer, hyper's
//!   write buffer, and the stream's channel in rmcp.
//!
//! A slow request *body* is bounded by the request time limit
//! ([`deadline`](super::deadline)), and the number of connections by the
//! acceptor ([`serving`](super::serving)).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, watch};
use tokio::time::Sleep;
use tokio_util::sync::CancellationToken;

/// The bounds of one connection.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// How long the connection may wait for a complete request head: from the
    /// accept, and after each answer while kept alive.
    pub header_timeout: Duration,
    /// How long a response may wait for the client to take any of its bytes.
    pub write_stall_timeout: Duration,
}

/// What a serving thread's connection task holds, unread, until the
/// connection closes.
pub(crate) struct Held {
    /// The connection's place under `--max-connections`.
    pub(crate) _permit: OwnedSemaphorePermit,
    /// Dropped when the connection closes: its thread waits for all of them.
    pub(crate) _open: watch::Receiver<()>,
}

/// How long a connection may go on after the stop before it is asked to
/// close gracefully: enough to read a request that has already arrived.
pub(crate) const STOP_GRACE: Duration = Duration::from_millis(50);

/// Serves HTTP/1.1 on `stream` until it closes, or until `stop` asks for a
/// graceful close (the request in progress is finished first).
pub(crate) async fn serve(
    stream: TcpStream,
    app: Router,
    limits: ConnectionLimits,
    stop: CancellationToken,
    held: Held,
) {
    let io = TokioIo::new(StallBound::new(stream, limits.write_stall_timeout));
    let service = TowerToHyperService::new(app);
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    let connection = builder.serve_connection(io, service);
    tokio::pin!(connection);
    let served = tokio::select! {
        served = connection.as_mut() => served,
        () = stop.cancelled() => {
            // A request already received (on a connection accepted just
            // before the stop, say) is read on hyper's next poll; shut down
            // before that, the connection would close with it unread, which
            // resets it. So the connection gets a moment first.
            match tokio::time::timeout(STOP_GRACE, connection.as_mut()).await {
                Ok(served) => served,
                Err(_) => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            }
        }
    };
    match served {
        Ok(()) => {}
        Err(error) if error.is_timeout() => tracing::debug!(
            timeout_ms = limits.header_timeout.as_millis() as u64,
            "closed a connection that sent no complete request head in time"
        ),
        Err(error) => tracing::debug!(%error, "connection ended with an error"),
    }
    drop(held);
}

/// A socket whose writes fail once they have made no progress for `limit`.
///
/// hyper polls a write only when it has bytes to send, so the clock runs
/// only while the client is not taking them; any progress restarts it.
pub(crate) struct StallBound<T> {
    inner: T,
    limit: Duration,
    /// Running while the socket refuses bytes.
    stalled: Option<Pin<Box<Sleep>>>,
}

impl<T> StallBound<T> {
    pub(crate) fn new(inner: T, limit: Duration) -> Self {
        Self {
            inner,
            limit,
            stalled: None,
        }
    }

    /// `write`'s result, or a `TimedOut` error once the stall has lasted.
    fn bound<R>(
        &mut self,
        cx: &mut Context<'_>,
        write: impl FnOnce(&mut T, &mut Context<'_>) -> Poll<io::Result<R>>,
    ) -> Poll<io::Result<R>> {
        match write(&mut self.inner, cx) {
            Poll::Pending => {
                let limit = self.limit;
                let stall = self
                    .stalled
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
                if stall.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                tracing::warn!(
                    timeout_ms = limit.as_millis() as u64,
                    "a client took none of its response for the write-stall timeout; \
                     closing its connection"
                );
                Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the client stopped reading",
                )))
            }
            ready => {
                self.stalled = None;
                ready
            }
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for StallBound<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for StallBound<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut()
            .bound(cx, |inner, cx| Pin::new(inner).poll_write(cx, buf))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().bound(cx, |inner, cx| {
            Pin::new(inner).poll_write_vectored(cx, bufs)
        })
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut()
            .bound(cx, |inner, cx| Pin::new(inner).poll_flush(cx))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    const LIMIT: Duration = Duration::from_millis(300);

    #[tokio::test]
    async fn a_write_the_reader_never_takes_fails_after_the_limit() {
        // A pipe with room for 8 bytes that nobody reads.
        let (writer, _reader) = tokio::io::duplex(8);
        let mut bounded = StallBound::new(writer, LIMIT);
        bounded.write_all(b"12345678").await.unwrap();
        let started = std::time::Instant::now();
        let error = bounded.write_all(b"more").await.unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        assert_eq!(error.to_string(), "the client stopped reading");
        assert!(started.elapsed() >= LIMIT, "{:?}", started.elapsed());
        assert!(started.elapsed() < LIMIT * 10, "{:?}", started.elapsed());
    }

    #[tokio::test]
    async fn progress_restarts_the_clock() {
        let (writer, mut reader) = tokio::io::duplex(4);
        let mut bounded = StallBound::new(writer, LIMIT);
        let slow_reader = tokio::spawn(async move {
            let mut all = Vec::new();
            let mut byte = [0; 1];
            // A byte every 100 ms: slower than the data comes (so writes
            // wait), but never idle for the limit; 12 bytes take 1.2 s,
            // four times the limit.
            while reader.read(&mut byte).await.unwrap() > 0 {
                all.push(byte[0]);
                tokio::time::sleep(LIMIT / 3).await;
            }
            all
        });
        bounded.write_all(b"0123456789ab").await.unwrap();
        bounded.shutdown().await.unwrap();
        drop(bounded);
        assert_eq!(slow_reader.await.unwrap(), b"0123456789ab");
    }
}
