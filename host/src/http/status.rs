//! `GET /healthz` (liveness), `GET /readyz` (readiness) and `GET /metrics`
//! (Prometheus text exposition).
//!
//! Liveness and readiness differ on purpose: a draining server is alive (an
//! orchestrator must not kill it while calls finish) but not ready (a load
//! balancer must send it nothing new). Both report the digest of what the
//! server serves, so replicas serving different sets can be told apart.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::metrics::Metrics;

/// The path of the readiness probe.
pub const READYZ_PATH: &str = "/readyz";

/// The live state the status endpoints report beyond the metrics: whether the
/// server drains, and the digest of what it serves. Shared between the
/// transport (which drains on shutdown) and whoever serves (which knows the
/// digest); the transport never learns what the digest is a digest of.
pub struct ServiceStatus {
    draining: AtomicBool,
    digest: Box<dyn Fn() -> Option<String> + Send + Sync>,
}

impl ServiceStatus {
    /// A ready server whose digest `digest` reads at each probe (so it is
    /// current after a reload).
    pub fn new(digest: impl Fn() -> Option<String> + Send + Sync + 'static) -> Self {
        Self {
            draining: AtomicBool::new(false),
            digest: Box::new(digest),
        }
    }

    /// From now on `/readyz` answers 503 and every response closes its
    /// connection. There is no way back: a drain ends in exit.
    pub fn start_draining(&self) {
        self.draining.store(true, Ordering::Release);
    }

    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Acquire)
    }

    /// The served set's digest, if the server has one.
    pub fn digest(&self) -> Option<String> {
        (self.digest)()
    }
}

impl Default for ServiceStatus {
    fn default() -> Self {
        Self::new(|| None)
    }
}

impl std::fmt::Debug for ServiceStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceStatus")
            .field("draining", &self.is_draining())
            .finish_non_exhaustive()
    }
}

/// What the status endpoints read.
#[derive(Clone)]
pub struct StatusState {
    pub metrics: Arc<Metrics>,
    pub started: Instant,
    pub service: Arc<ServiceStatus>,
}

/// Liveness: the process is up and its HTTP stack answers (also while it
/// drains). Cheap and unauthenticated, so orchestrators and load balancers
/// can probe it.
pub async fn healthz(State(state): State<StatusState>) -> Response {
    let mut body = json!({
        "status": "ok",
        "version": env!("CARGO_PKG_VERSION"),
        "uptimeSeconds": state.started.elapsed().as_secs(),
        "callsInFlight": state.metrics.calls_in_flight(),
        "draining": state.service.is_draining(),
    });
    add_digest(&mut body, &state.service);
    json_response(StatusCode::OK, &body)
}

/// Readiness: 200 while the server takes new work, 503 once it drains. The
/// port opens only after the plugin folder has loaded, so the first answer
/// here is already a ready one.
pub async fn readyz(State(state): State<StatusState>) -> Response {
    let (status, word) = if state.service.is_draining() {
        (StatusCode::SERVICE_UNAVAILABLE, "draining")
    } else {
        (StatusCode::OK, "ready")
    };
    let mut body = json!({"status": word});
    add_digest(&mut body, &state.service);
    json_response(status, &body)
}

fn add_digest(body: &mut Value, service: &ServiceStatus) {
    if let Some(digest) = service.digest() {
        body["pluginSetDigest"] = Value::String(digest);
    }
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    (
        status,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn state(service: ServiceStatus) -> StatusState {
        StatusState {
            metrics: Arc::new(Metrics::new()),
            started: Instant::now(),
            service: Arc::new(service),
        }
    }

    async fn body(response: Response) -> (StatusCode, Value) {
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .unwrap();
        (status, serde_json::from_slice(&bytes).unwrap())
    }

    #[tokio::test]
    async fn readyz_is_200_until_draining_then_503_while_healthz_stays_200() {
        let state = state(ServiceStatus::new(|| Some("sha256:ab".into())));
        assert_eq!(
            body(readyz(State(state.clone())).await).await,
            (
                StatusCode::OK,
                json!({"status": "ready", "pluginSetDigest": "sha256:ab"})
            )
        );
        state.service.start_draining();
        assert_eq!(
            body(readyz(State(state.clone())).await).await,
            (
                StatusCode::SERVICE_UNAVAILABLE,
                json!({"status": "draining", "pluginSetDigest": "sha256:ab"})
            )
        );
        let (status, health) = body(healthz(State(state)).await).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(health["status"], "ok");
        assert_eq!(health["draining"], true);
        assert_eq!(health["pluginSetDigest"], "sha256:ab");
    }

    #[tokio::test]
    async fn without_a_digest_none_is_reported() {
        let (status, ready) = body(readyz(State(state(ServiceStatus::default()))).await).await;
        assert_eq!(
            (status, ready),
            (StatusCode::OK, json!({"status": "ready"}))
        );
    }
}
