//! The one tower layer in front of every route: Wharf's checks, in order.
//!
//! Every request gets the Origin/Host check ([`origin`]). Every route but
//! `/healthz` and the Protected Resource Metadata then gets the bearer token
//! ([`auth`], or an OAuth access token: [`protected`]), and the time limit
//! ([`deadline`]) over reading the body ([`envelope`]) and answering. On
//! `/mcp`, the legacy session rules come next ([`session`]: a live session
//! where one is needed, room for a new one), then a `tools/call`'s
//! `Mcp-Param-*` headers against its body ([`param_headers`](super::param_headers)), then the cap on open streams
//! ([`streams`]); after rmcp has answered, a successful session `DELETE` is
//! answered 200 ([`session`]) and an SSE answer to a POST held until its
//! first message ([`coalesce`]).
//!
//! Why one hand-written layer rather than a `from_fn` middleware per check:
//! each `from_fn` boxes the inner service and its future for every request,
//! and five of them cost about a tenth of the HTTP throughput of a trivial
//! tool call. Here a request costs one boxed future.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::extract::Request;
use axum::http::{HeaderValue, Method, header};
use axum::response::Response;
use futures::future::BoxFuture;
use tower_layer::Layer;
use tower_service::Service;

use super::session_table::SessionTable;
use super::streams::{self, StreamSlots};
use super::{
    HttpOptions, MCP_PATH, auth, coalesce, deadline, envelope, origin, protected, session, task_ids,
};
use crate::caller::Caller;

/// The liveness probe's path.
pub const HEALTHZ_PATH: &str = "/healthz";

/// The paths that answer without a token (probes carry none).
const OPEN_PATHS: [&str; 2] = [HEALTHZ_PATH, super::status::READYZ_PATH];

/// Wraps a router's routes in a [`Gate`].
#[derive(Clone)]
pub struct GateLayer(Arc<GateState>);

/// What the gate checks against.
pub struct GateState {
    options: HttpOptions,
    sessions: Arc<SessionTable>,
    streams: StreamSlots,
}

impl GateLayer {
    /// A gate enforcing `options` (origins, token, body limit, request time,
    /// open streams) and the session rules against `sessions`.
    pub fn new(options: &HttpOptions, sessions: Arc<SessionTable>) -> Self {
        Self(Arc::new(GateState {
            options: options.clone(),
            sessions,
            streams: StreamSlots::new(options.max_streams),
        }))
    }
}

impl<S> Layer<S> for GateLayer {
    type Service = Gate<S>;

    fn layer(&self, inner: S) -> Gate<S> {
        Gate {
            inner,
            state: self.0.clone(),
        }
    }
}

/// A route behind Wharf's checks.
#[derive(Clone)]
pub struct Gate<S> {
    inner: S,
    state: Arc<GateState>,
}

impl<S> Service<Request> for Gate<S>
where
    S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send,
{
    type Response = Response;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response, Infallible>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        // The service that was polled ready answers; its clone waits for the next.
        let ready = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, ready);
        let state = self.state.clone();
        Box::pin(async move {
            let mut response = pass(&state, inner, request).await;
            if state.options.status.is_draining() {
                // A balancer's idle keep-alive connection would otherwise race
                // the shutdown with its next request.
                response
                    .headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            Ok(response)
        })
    }
}

/// The response to `request`: a refusal, or what `inner` answers.
async fn pass<S>(state: &GateState, mut inner: S, request: Request) -> Response
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    let options = &state.options;
    if let Some(refusal) = origin::refusal(&options.origins, &request) {
        return refusal;
    }
    if OPEN_PATHS.contains(&request.uri().path())
        || request.uri().path().starts_with(protected::METADATA_PATH)
    {
        return answer(inner.call(request).await);
    }
    let mut request = request;
    if let Some(token) = &options.token {
        if let Some(refusal) = auth::refusal(token, &request) {
            return refusal;
        }
        // For the audit trail: who was let in (rmcp passes the extensions on).
        request.extensions_mut().insert(Caller::static_token());
    }
    deadline::bound(options.request_timeout, async {
        // Inside the time limit: checking a token may fetch the issuer's keys.
        if let Some(protection) = &options.protection
            && let Err(refusal) = protection.admit(&mut request).await
        {
            return refusal;
        }
        let method = request.method().clone();
        let request =
            match envelope::admit(options.max_body_bytes, options.max_json_values, request).await {
                Ok(request) => request,
                Err(refusal) => return refusal,
            };
        if request.uri().path() != MCP_PATH {
            return answer(inner.call(request).await);
        }
        let mut admitted = match session::admit(&state.sessions, request).await {
            Ok(admitted) => admitted,
            Err(refusal) => return refusal,
        };
        if let Some(check) = &options.param_headers {
            admitted = match check.admit(admitted).await {
                Ok(admitted) => admitted,
                Err(refusal) => return refusal,
            };
        }
        let mut granted = None;
        if let Some(check) = &options.task_ids {
            (admitted, granted) = match check.admit(admitted).await {
                Ok(admitted) => admitted,
                Err(refusal) => return refusal,
            };
        }
        if let Some(protection) = &options.protection
            && admitted.method.as_deref() == Some("tools/call")
            && let Some(tool) = &admitted.name
            && let Some(refusal) = protection.forbidden_call(&admitted.request, tool)
        {
            return refusal;
        }
        let stream = if method == Method::GET || admitted.method.as_deref() == Some(streams::LISTEN)
        {
            match state.streams.take() {
                Some(slot) => Some(slot),
                None => return state.streams.refusal(admitted.id),
            }
        } else {
            None
        };
        let owner = admitted
            .session
            .as_ref()
            .and_then(|_| session::owner(&admitted.request));
        let mut response = answer(inner.call(admitted.request).await);
        // rmcp has created the session by now (or refused to).
        if let Some(owner) = owner
            && let Some(id) = response
                .headers()
                .get(session::SESSION_ID)
                .and_then(|v| v.to_str().ok())
        {
            state.sessions.bind(id, owner);
        }
        drop(admitted.session);
        if let Some(granted) = granted {
            response = task_ids::acknowledge_in(response, granted);
        }
        if method == Method::POST {
            response = coalesce::first_message(response).await;
        }
        if let Some(slot) = stream {
            response = streams::hold(slot, response);
        }
        session::delete_answers_ok(&method, &mut response);
        response
    })
    .await
}

fn answer(result: Result<Response, Infallible>) -> Response {
    match result {
        Ok(response) => response,
        Err(never) => match never {},
    }
}
