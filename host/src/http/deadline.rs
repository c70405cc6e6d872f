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

/// How often [`keep_timers_due`] fires.
pub(crate) const HEARTBEAT: Duration = Duration::from_secs(1);

/// Keeps a timer due within [`HEARTBEAT`], for as long as its runtime runs,
/// and calls `on_beat` at each beat (the serving threads' periodic chores).
///
/// Why: tokio wakes the thread parked on its timer driver (an eventfd write, an
/// `epoll_wait` return and a context switch) whenever a new timer is due before
/// the driver's next wake-up. With no other timer pending, every request's
/// deadline is, so each request paid that wake-up, a sizeable part of a trivial
/// call. With this timer pending, a deadline longer than the heartbeat never is.
pub async fn keep_timers_due(on_beat: fn()) {
    let mut beat = tokio::time::interval(HEARTBEAT);
    beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        beat.tick().await;
        on_beat();
    }
}
