//! An SSE answer to a POST goes out in one write when its message is quick.
//!
//! A legacy session answers each POST with a short SSE stream: rmcp puts a
//! priming event (an event id and a retry interval, no data, so that the
//! client can resume) in it at once, and the message only once the handler has
//! run. On a serving thread the handler runs after hyper has polled the new
//! stream, so hyper wrote the head and the priming event, and then the message
//! and the stream's end: two writes, two segments and two reads for the client
//! per call, where a JSON answer takes one. That was the largest cost a legacy
//! request had over a 2026-07-28 one.
//!
//! So a serving thread holds such an answer until its first event that carries
//! data (a message) or its end, then hands hyper the held events with the rest
//! of the stream: head, priming event, message and end then leave in one write.
//! An answer is never held for longer than its thread has other work: when the
//! thread runs out of work (its park hook) or at its heartbeat, every held
//! answer goes out as it is, so a long call's head and priming event wait at
//! most until then, not until the call ends. Only serving threads hold
//! ([`hold_on_this_thread`]); elsewhere answers pass untouched.

use std::cell::RefCell;
use std::sync::{Arc, Weak};

use axum::body::{Body, Bytes};
use axum::http::header;
use axum::response::Response;
use futures::StreamExt as _;
use tokio::sync::Notify;

thread_local! {
    /// The answers this thread holds, if it holds any (a serving thread).
    static HELD: RefCell<Option<Vec<Weak<Notify>>>> = const { RefCell::new(None) };
}

/// How many finished holds may pile up before the list drops them.
const PRUNE_AT: usize = 64;

/// Makes this thread hold SSE answers; it must then call [`release_held`]
/// whenever it runs out of work and periodically.
pub(crate) fn hold_on_this_thread() {
    HELD.with(|held| held.borrow_mut().get_or_insert_with(Vec::new).clear());
}

/// Sends every answer this thread holds as it is.
pub(crate) fn release_held() {
    HELD.with(|held| {
        if let Some(list) = held.borrow_mut().as_mut() {
            for hold in list.drain(..) {
                if let Some(release) = hold.upgrade() {
                    release.notify_one();
                }
            }
        }
    });
}

/// A new hold on this thread, or `None` where answers are not held.
fn new_hold() -> Option<Arc<Notify>> {
    HELD.with(|held| {
        let mut held = held.borrow_mut();
        let list = held.as_mut()?;
        if list.len() >= PRUNE_AT {
            list.retain(|hold| hold.strong_count() > 0);
        }
        let release = Arc::new(Notify::new());
        list.push(Arc::downgrade(&release));
        Some(release)
    })
}

/// `response`, with its SSE body's events up to the first message (or its
/// end) already read, when this thread holds answers; else `response` itself.
pub async fn first_message(response: Response) -> Response {
    if !is_event_stream(&response) {
        return response;
    }
    let Some(release) = new_hold() else {
        return response;
    };
    let (parts, body) = response.into_parts();
    let mut stream = body.into_data_stream();
    let mut held: Vec<Result<Bytes, axum::Error>> = Vec::new();
    loop {
        let event = tokio::select! {
            biased;
            event = stream.next() => event,
            () = release.notified() => break,
        };
        match event {
            Some(Ok(event)) => {
                let message = carries_message(&event);
                held.push(Ok(event));
                if message {
                    break;
                }
            }
            Some(Err(error)) => {
                held.push(Err(error));
                break;
            }
            None => break,
        }
    }
    // Once the held events are written, hyper polls the stream, which has
    // usually ended by then: one write for all.
    let body = Body::from_stream(futures::stream::iter(held).chain(stream));
    Response::from_parts(parts, body)
}

fn is_event_stream(response: &Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|value| value.as_bytes().starts_with(b"text/event-stream"))
}

/// Whether an encoded SSE event has data (a message), unlike a priming event
/// (`data:` with nothing after it) or a comment.
fn carries_message(event: &[u8]) -> bool {
    event.split(|&b| b == b'\n').any(|line| {
        line.strip_prefix(b"data:")
            .map(|rest| rest.strip_prefix(b" ").unwrap_or(rest))
            .is_some_and(|data| !data.is_empty() && data != b"\r")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::channel::mpsc;
    use std::convert::Infallible;
    use std::time::Duration;

    const PRIMING: &str = "data: \nid: 0/0\nretry: 3000\n\n";
    const MESSAGE: &str = "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\nid: 1/0\n\n";

    /// An SSE response whose events come from the returned sender.
    fn sse_response() -> (mpsc::UnboundedSender<&'static str>, Response) {
        let (events, rx) = mpsc::unbounded::<&'static str>();
        let stream = rx.map(|event| Ok::<_, Infallible>(Bytes::from_static(event.as_bytes())));
        let response = Response::builder()
            .header(header::CONTENT_TYPE, "text/event-stream")
            .body(Body::from_stream(stream))
            .unwrap();
        (events, response)
    }

    /// The body's chunks that are ready now, and whether it has ended.
    async fn ready_chunks(response: Response) -> (Vec<String>, bool) {
        let mut stream = response.into_body().into_data_stream();
        let mut chunks = Vec::new();
        loop {
            match futures::FutureExt::now_or_never(stream.next()) {
                Some(Some(chunk)) => {
                    chunks.push(String::from_utf8(chunk.unwrap().to_vec()).unwrap())
                }
                Some(None) => return (chunks, true),
                None => return (chunks, false),
            }
        }
    }

    #[test]
    fn only_events_with_data_carry_a_message() {
        assert!(!carries_message(PRIMING.as_bytes()));
        assert!(!carries_message(b"data:\nid: 0/0\n\n"));
        assert!(!carries_message(b": keep-alive\n\n"));
        assert!(carries_message(MESSAGE.as_bytes()));
        assert!(carries_message(b"id: 3\ndata:{}\n\n"));
    }

    #[tokio::test]
    async fn a_thread_that_does_not_hold_passes_answers_on() {
        HELD.with(|held| *held.borrow_mut() = None);
        let (events, response) = sse_response();
        events.unbounded_send(PRIMING).unwrap();
        let response = first_message(response).await;
        let (chunks, ended) = ready_chunks(response).await;
        assert_eq!(chunks, [PRIMING]);
        assert!(!ended);
    }

    /// An SSE answer with its priming event sent, held by this thread (run
    /// once, so it waits); and the sender of its further events.
    async fn held_answer() -> (
        mpsc::UnboundedSender<&'static str>,
        tokio::task::JoinHandle<Response>,
    ) {
        hold_on_this_thread();
        let (events, response) = sse_response();
        events.unbounded_send(PRIMING).unwrap();
        let answer = tokio::spawn(first_message(response));
        tokio::task::yield_now().await;
        (events, answer)
    }

    #[tokio::test]
    async fn the_priming_event_waits_for_the_message_and_the_end() {
        let (events, answer) = held_answer().await;
        assert!(!answer.is_finished(), "answered before the message");
        events.unbounded_send(MESSAGE).unwrap();
        drop(events);
        let (chunks, ended) = ready_chunks(answer.await.unwrap()).await;
        assert_eq!(chunks, [PRIMING, MESSAGE]);
        assert!(ended);
    }

    #[tokio::test]
    async fn a_release_sends_what_is_held_and_streams_the_rest() {
        let (events, answer) = held_answer().await;
        release_held();
        let response = answer.await.unwrap();
        let mut stream = response.into_body().into_data_stream();
        assert_eq!(stream.next().await.unwrap().unwrap(), PRIMING.as_bytes());
        events.unbounded_send(MESSAGE).unwrap();
        drop(events);
        assert_eq!(stream.next().await.unwrap().unwrap(), MESSAGE.as_bytes());
        assert!(stream.next().await.is_none());
    }

    #[tokio::test]
    async fn other_answers_are_not_held() {
        hold_on_this_thread();
        let response = Response::builder()
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from("{}"))
            .unwrap();
        let response = tokio::time::timeout(Duration::from_secs(5), first_message(response))
            .await
            .expect("a JSON answer was held");
        assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
    }

    #[test]
    fn a_thread_that_runs_out_of_work_releases_what_it_holds() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .on_thread_park(release_held)
            .build()
            .unwrap();
        runtime.block_on(async {
            hold_on_this_thread();
            let (events, response) = sse_response();
            events.unbounded_send(PRIMING).unwrap();
            // No message ever comes: the idle thread releases the priming event.
            let response = tokio::time::timeout(Duration::from_secs(5), first_message(response))
                .await
                .expect("the idle thread kept the answer");
            let (chunks, ended) = ready_chunks(response).await;
            assert_eq!(chunks, [PRIMING]);
            assert!(!ended);
            drop(events);
        });
    }
}
