//! The long-lived SSE streams, counted and capped (`--max-streams`).
//!
//! A 2026-07-28 `subscriptions/listen` and a legacy session's `GET` stream
//! stay open until the client leaves, each holding a connection, a task and a
//! channel. Without a cap, streams could take every connection the server
//! allows and leave none for calls. A request for one more stream than the
//! cap is refused 503 with `Retry-After`; a stream's place is given back when
//! its response body is dropped (the client left, the stream ended, or the
//! server shut down).
//!
//! rmcp also bounds the GET streams of one legacy session: the first is the
//! session's, and up to 32 more are kept alive but idle, the oldest dropped
//! past that.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt as _;
use serde_json::{Value, json};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// How long a client refused for too many streams is asked to wait.
pub const RETRY_AFTER_SECS: u64 = 5;

/// The JSON-RPC method that opens a 2026-07-28 stream.
pub const LISTEN: &str = "subscriptions/listen";

/// The places for open streams.
#[derive(Debug)]
pub struct StreamSlots {
    slots: Arc<Semaphore>,
    max: usize,
}

/// One stream's place, held (unread) by its response body.
#[derive(Debug)]
pub struct StreamSlot {
    _permit: OwnedSemaphorePermit,
}

impl StreamSlots {
    pub fn new(max: usize) -> Self {
        Self {
            slots: Arc::new(Semaphore::new(max)),
            max,
        }
    }

    /// A place for one more stream; `None` when all are taken.
    pub fn take(&self) -> Option<StreamSlot> {
        let permit = self.slots.clone().try_acquire_owned().ok();
        if permit.is_none() {
            tracing::debug!(max_streams = self.max, "refused a stream: too many open");
        }
        permit.map(|permit| StreamSlot { _permit: permit })
    }

    /// The 503 refusal (with `Retry-After`) of request `id` when none is left.
    pub fn refusal(&self, id: Value) -> Response {
        full(id, self.max)
    }

    /// How many streams are open.
    pub fn open(&self) -> usize {
        self.max - self.slots.available_permits()
    }
}

/// `response` holding `slot` for as long as its body lives, when it is an
/// SSE stream; otherwise the slot is given back at once.
pub fn hold(slot: StreamSlot, response: Response) -> Response {
    let is_stream = response.status() == StatusCode::OK
        && response
            .headers()
            .get(header::CONTENT_TYPE)
            .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    if !is_stream {
        return response;
    }
    let (parts, body) = response.into_parts();
    let held = body.into_data_stream().map(move |chunk| {
        let _slot = &slot;
        chunk
    });
    Response::from_parts(parts, Body::from_stream(held))
}

/// 503 with `Retry-After`: no room for another stream.
fn full(id: Value, max: usize) -> Response {
    let body = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": -32600, "message": format!(
            "Service Unavailable: the server already has its limit of {max} open streams \
             (--max-streams); retry later, or close an unused stream"
        )},
    });
    let mut response = (StatusCode::SERVICE_UNAVAILABLE, body.to_string()).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sse() -> Response {
        let mut response = (StatusCode::OK, "data: x\n\n").into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/event-stream"),
        );
        response
    }

    #[tokio::test]
    async fn a_stream_holds_its_place_until_its_body_is_dropped() {
        let slots = StreamSlots::new(1);
        let stream = hold(slots.take().unwrap(), sse());
        assert_eq!(slots.open(), 1);
        assert!(slots.take().is_none());
        let refused = slots.refusal(json!(9));
        assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(refused.headers()[header::RETRY_AFTER], "5");
        let body = axum::body::to_bytes(refused.into_body(), 4096)
            .await
            .unwrap();
        let body: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["id"], 9);
        assert_eq!(body["error"]["code"], -32600);
        assert_eq!(
            body["error"]["message"],
            "Service Unavailable: the server already has its limit of 1 open streams \
             (--max-streams); retry later, or close an unused stream"
        );
        let text = axum::body::to_bytes(stream.into_body(), 4096)
            .await
            .unwrap();
        assert_eq!(text, "data: x\n\n");
        assert_eq!(slots.open(), 0);
    }

    #[test]
    fn an_answer_that_is_not_a_stream_gives_its_place_back() {
        let slots = StreamSlots::new(1);
        let answer = hold(
            slots.take().unwrap(),
            (StatusCode::OK, "{}").into_response(),
        );
        assert_eq!(slots.open(), 0);
        drop(answer);
    }
}
