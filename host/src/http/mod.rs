//! The Streamable HTTP transport: MCP at `/mcp` for both eras, plus `/healthz`,
//! `/readyz` and `/metrics`.
//!
//! rmcp's `StreamableHttpService` does the protocol: 2026-07-28 stateless POSTs
//! (header and `_meta` validation, JSON or request-scoped SSE answers, cancel on
//! disconnect, `subscriptions/listen` streams) and legacy sessions
//! (`Mcp-Session-Id`, GET stream, DELETE, idle expiry). This module mounts it in
//! an axum router and closes the gaps a default rmcp server leaves open, each a
//! check applied by one tower layer ([`gate`]): Origin/Host checks ([`origin`]),
//! a bearer token ([`auth`]), a per-request time limit ([`deadline`]), body
//! size, JSON and era checks ([`envelope`]), the legacy session rules and the
//! status of a session `DELETE` ([`session`]), `Mcp-Param-*` headers against
//! the body ([`param_headers`]), a listen request's `taskIds` ([`task_ids`]),
//! a cap on open streams ([`streams`]), and one write for a short SSE answer ([`coalesce`]). Legacy
//! sessions are kept, counted and capped in a [`SessionTable`]. Also status
//! endpoints ([`status`]), and graceful shutdown (here). Connections are
//! served on one single-threaded runtime per core ([`serving`]), each with a
//! header timeout, a write-stall timeout, and a cap on their number
//! ([`connection`]).
//!
//! The transport knows nothing of plugins: it serves any rmcp `ServerHandler`.
//!
//! Strategy for shutdown (a drain): a signal first marks the server draining
//! ([`ServiceStatus`]: `/readyz` answers 503, every response closes its
//! connection, so a load balancer stops sending work and keeps no idle
//! connection to it), keeps serving for the drain delay (while the balancer
//! notices), then stops accepting connections (those already in the kernel's
//! backlog are served; requests on open connections finish), lets the
//! requests of those last connections begin, waits for the tool calls in flight
//! ([`Metrics::calls_in_flight`]) up to a grace period, and only then cancels
//! rmcp's token, which ends the long-lived SSE streams (listen, legacy GET)
//! and the legacy sessions that would otherwise keep the server up forever.

pub mod auth;
mod coalesce;
mod connection;
pub mod deadline;
pub mod envelope;
pub mod gate;
#[cfg(test)]
mod listen_tests;
pub mod origin;
pub mod param_headers;
pub mod protected;
mod serving;
pub mod session;
pub mod session_table;
pub mod status;
pub mod streams;
pub mod task_ids;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rmcp::ServerHandler;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::metrics::Metrics;
pub use auth::BearerToken;
pub use connection::ConnectionLimits;
use gate::GateLayer;
pub use origin::OriginPolicy;
pub use param_headers::{ParamHeader, ParamHeaderCheck, ParamHeaders};
pub use protected::{Protection, ScopePolicy};
use serving::ServingThreads;
pub use session_table::SessionTable;
pub use status::ServiceStatus;
pub use task_ids::TaskIdCheck;

/// The path of the MCP endpoint.
pub const MCP_PATH: &str = "/mcp";

/// Default of `--max-sessions`.
pub const DEFAULT_MAX_SESSIONS: usize = 1000;
/// Default of `--max-streams`.
pub const DEFAULT_MAX_STREAMS: usize = 256;
/// Default of `--max-connections`.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// Default of `--header-timeout-ms`.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Default of `--write-stall-timeout-ms`.
pub const DEFAULT_WRITE_STALL_TIMEOUT: Duration = Duration::from_secs(30);

/// Settings of the HTTP transport.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Which `Host` and `Origin` values are accepted.
    pub origins: OriginPolicy,
    /// Required bearer token on `/mcp` and `/metrics`, if any.
    pub token: Option<BearerToken>,
    /// OAuth access tokens required on `/mcp` and `/metrics` instead, if set
    /// (exclusive with `token`).
    pub protection: Option<Protection>,
    /// The tools' `x-mcp-header` arguments, which a 2026-07-28 `tools/call`'s
    /// `Mcp-Param-*` headers must match (unchecked without it).
    pub param_headers: Option<ParamHeaderCheck>,
    /// The server's tasks, for a listen request's `taskIds` (ignored
    /// without it; see [`task_ids`]).
    pub task_ids: Option<TaskIdCheck>,
    /// Largest accepted request body (413 above).
    pub max_body_bytes: usize,
    /// The most JSON values a body may hold (413 and -32600 above; see
    /// [`crate::json_values`]).
    pub max_json_values: usize,
    /// Longest a request may take to produce its response head (408 above).
    pub request_timeout: Duration,
    /// A legacy session with no traffic for this long is closed.
    pub session_idle: Duration,
    /// The most legacy sessions open at once (503 for an `initialize` past it).
    pub max_sessions: usize,
    /// The prefix of every legacy session id, so a balancer can route a
    /// session to this replica ([`session_table::check_session_route`]).
    pub session_route: Option<String>,
    /// The most long-lived SSE streams open at once (listen and legacy GET
    /// streams; 503 past it).
    pub max_streams: usize,
    /// The most connections open at once; past it, new connections wait in
    /// the kernel's backlog until one closes.
    pub max_connections: usize,
    /// The header and write-stall timeouts of each connection.
    pub connection: ConnectionLimits,
    /// How long shutdown waits for calls in flight before closing everything.
    pub shutdown_grace: Duration,
    /// How long a draining server keeps accepting (answering `/readyz` with
    /// 503) before it stops, so that load balancers notice first.
    pub drain_delay: Duration,
    /// Draining and the served digest, as the status endpoints report them.
    pub status: Arc<ServiceStatus>,
    /// Threads serving connections (see [`serving`]): one per core by default.
    pub serving_threads: usize,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            origins: OriginPolicy {
                local: true,
                ..OriginPolicy::default()
            },
            token: None,
            protection: None,
            param_headers: None,
            task_ids: None,
            max_body_bytes: 4 << 20,
            max_json_values: crate::json_values::DEFAULT_MAX_JSON_VALUES,
            request_timeout: Duration::from_secs(60),
            session_idle: Duration::from_secs(30 * 60),
            max_sessions: DEFAULT_MAX_SESSIONS,
            session_route: None,
            max_streams: DEFAULT_MAX_STREAMS,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            connection: ConnectionLimits {
                header_timeout: DEFAULT_HEADER_TIMEOUT,
                write_stall_timeout: DEFAULT_WRITE_STALL_TIMEOUT,
            },
            shutdown_grace: Duration::from_secs(30),
            drain_delay: Duration::ZERO,
            status: Arc::default(),
            serving_threads: crate::cores::cores(),
        }
    }
}

/// Failures of the HTTP transport.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("HTTP server failed: {0}")]
    Serve(#[source] std::io::Error),
}

/// The router: `/mcp` (rmcp) and `/metrics` behind the token, `/healthz` and
/// `/readyz` open, all behind the Origin/Host check. `streams` ends every long-lived SSE
/// stream and legacy session when cancelled. `new_session` makes the handler
/// of each legacy session (and of each stateless request).
pub fn router<S, F>(
    new_session: F,
    metrics: Arc<Metrics>,
    options: &HttpOptions,
    streams: CancellationToken,
) -> Router
where
    S: ServerHandler + Send + Sync + 'static,
    F: Fn() -> S + Send + Sync + 'static,
{
    // Origin and Host are checked by `origin::check_origin` for every route, so
    // rmcp's own (narrower, and Origin-off-by-default) checks are disabled.
    let config = StreamableHttpServerConfig::default()
        .with_json_response(true)
        .with_legacy_session_mode(true)
        .with_max_request_body_bytes(options.max_body_bytes)
        .with_cancellation_token(streams)
        .disable_allowed_hosts()
        .disable_allowed_origins();
    let sessions = Arc::new(
        SessionTable::new(options.max_sessions, options.session_idle)
            .with_route(options.session_route.clone()),
    );
    let mcp = StreamableHttpService::new(move || Ok(new_session()), sessions.clone(), config);

    let state = status::StatusState {
        metrics,
        started: Instant::now(),
        service: options.status.clone(),
    };
    let mut router = Router::new()
        .route_service(MCP_PATH, mcp)
        .route("/metrics", get(status::metrics))
        .route(gate::HEALTHZ_PATH, get(status::healthz))
        .route(status::READYZ_PATH, get(status::readyz));
    if let Some(protection) = &options.protection {
        for path in protection.metadata_paths() {
            let protection = protection.clone();
            router = router.route(&path, get(move || async move { protection.metadata() }));
        }
    }
    router
        .with_state(state)
        .layer(GateLayer::new(options, sessions))
}

/// Serves MCP over HTTP on `addr` until `shutdown` resolves, then shuts down
/// gracefully (see the module comment).
pub async fn serve<S, F>(
    new_session: F,
    metrics: Arc<Metrics>,
    addr: SocketAddr,
    options: HttpOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), HttpError>
where
    S: ServerHandler + Send + Sync + 'static,
    F: Fn() -> S + Send + Sync + 'static,
{
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| HttpError::Bind { addr, source })?;
    let local = listener.local_addr().map_err(HttpError::Serve)?;
    if !local.ip().is_loopback() {
        tracing::warn!(
            "!!! Wharf is listening on {local}, which is NOT a loopback address: any host \
             that can reach this port can call your tools{}. Bind 127.0.0.1 unless you mean it.",
            if options.protection.is_some() {
                " with a token from a trusted issuer"
            } else if options.token.is_some() {
                " if it knows the token"
            } else {
                ", and there is no --auth-token"
            }
        );
    }
    let streams = CancellationToken::new();
    let app = router(new_session, metrics.clone(), &options, streams.clone());
    let stop_accepting = CancellationToken::new();
    let threads = ServingThreads::start(
        options.serving_threads,
        listener,
        app,
        options.connection,
        options.max_connections,
        stop_accepting.clone(),
    )
    .map_err(HttpError::Serve)?;
    tracing::info!("listening on http://{local}{MCP_PATH}");

    shutdown.await;
    options.status.start_draining();
    if !options.drain_delay.is_zero() {
        tracing::info!(
            drain_delay_ms = options.drain_delay.as_millis() as u64,
            "draining: /readyz answers 503; still serving until the drain delay ends"
        );
        tokio::time::sleep(options.drain_delay).await;
    }
    tracing::info!(
        calls_in_flight = metrics.calls_in_flight(),
        "shutting down: no new connections, letting calls in flight finish"
    );
    stop_accepting.cancel();
    // The connections that were waiting in the backlog are served now, each
    // given a moment to read its request (`connection::STOP_GRACE`): let
    // their calls begin, or the count below could read 0 while they are on
    // their way and the streams (theirs among them) would end under them.
    tokio::time::sleep(connection::STOP_GRACE * 2).await;
    let deadline = Instant::now() + options.shutdown_grace;
    while metrics.calls_in_flight() > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Give the last responses a moment to be written before streams close.
    tokio::time::sleep(Duration::from_millis(50)).await;
    streams.cancel();
    if !threads.stop(Duration::from_secs(5)).await {
        tracing::warn!("connections still open after shutdown; closed them");
    }
    tracing::info!(
        calls_in_flight = metrics.calls_in_flight(),
        "drained: streams and sessions ended"
    );
    Ok(())
}

/// A refusal by one of Wharf's layers: the status, and a JSON-RPC error
/// without an `id` as the body (which MCP allows for transport-level refusals).
pub(crate) fn rejection(status: StatusCode, message: &str) -> Response {
    let body = json!({
        "jsonrpc": "2.0",
        "error": {"code": -32600, "message": message},
    });
    let mut response = (status, body.to_string()).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}
