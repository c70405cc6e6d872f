//! The per-request time limit.
//!
//! Bounds how long a request may take to produce its response head: a JSON
//! answer, or the first event of an SSE stream (so a long-lived
//! `subscriptions/listen` or legacy GET stream is not cut once it is open). A
//! request past its limit is answered 408 and its handler future is dropped,
//! which rmcp turns into cancellation of the call.

use std::time::Duration;

use axum::http::StatusCode;
use axum::response::Response;

use super::rejection;

/// The bound: 408 when the response head is not ready within the limit.
pub async fn bound(limit: Duration, answer: impl Future<Output = Response>) -> Response {
    match tokio::time::timeout(limit, answer).await {
        Ok(response) => response,
        Err(_) => {
            tracing::warn!(limit_ms = limit.as_millis() as u64, "request timed out");
            rejection(
                StatusCode::REQUEST_TIMEOUT,
                "Request Timeout: the server did not answer in time",
            )
        }
    }
}
