//! `GET /healthz` (liveness) and `GET /metrics` (Prometheus text exposition).

use std::sync::Arc;
use std::time::Instant;

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::metrics::Metrics;

/// What the status endpoints read.
#[derive(Clone)]
pub struct StatusState {
    pub metrics: Arc<Metrics>,
    pub started: Instant,
}

/// Liveness: the process is up and its HTTP stack answers. Cheap and
/// unauthenticated, so orchestrators and load balancers can probe it.
pub async fn healthz(State(state): State<StatusState>) -> Response {
    let body = json!({
        "status": "ok",
        "version": env!("CARGO_PKG_VERSION"),
        "uptimeSeconds": state.started.elapsed().as_secs(),
        "callsInFlight": state.metrics.calls_in_flight(),
    });
    (
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// Every metric in the Prometheus text format, version 0.0.4.
pub async fn metrics(State(state): State<StatusState>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        state.metrics.render(),
    )
        .into_response()
}
