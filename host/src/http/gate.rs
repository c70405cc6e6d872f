//! The one tower layer in front of every route: Wharf's checks, in order.
//!
//! Every request gets the Origin/Host check ([`origin`]). Every route but
//! `/healthz` then gets the bearer token ([`auth`]), and the time limit
//! ([`deadline`]) over reading the body ([`envelope`]) and answering, with a
//! successful session `DELETE` answered 200 ([`session`]) and an SSE answer to
//! a POST held until its first message ([`coalesce`]).
//!
//! Why one hand-written layer rather than a `from_fn` middleware per check:
//! each `from_fn` boxes the inner service and its future for every request,
//! and five of them cost about a tenth of the HTTP throughput of a trivial
//! tool call. Here a request costs one boxed future.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::extract::Request;
use axum::http::Method;
use axum::response::Response;
use futures::future::BoxFuture;
use tower_layer::Layer;
use tower_service::Service;

use super::{HttpOptions, auth, coalesce, deadline, envelope, origin, session};

/// The path that answers without a token (liveness probes carry none).
pub const OPEN_PATH: &str = "/healthz";

/// Wraps a router's routes in a [`Gate`].
#[derive(Clone)]
pub struct GateLayer(Arc<HttpOptions>);

impl GateLayer {
    /// A gate enforcing `options` (origins, token, body limit, request time).
    pub fn new(options: &HttpOptions) -> Self {
        Self(Arc::new(options.clone()))
    }
}

impl<S> Layer<S> for GateLayer {
    type Service = Gate<S>;

    fn layer(&self, inner: S) -> Gate<S> {
        Gate {
            inner,
            options: self.0.clone(),
        }
    }
}

/// A route behind Wharf's checks.
#[derive(Clone)]
pub struct Gate<S> {
    inner: S,
    options: Arc<HttpOptions>,
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
        let options = self.options.clone();
        Box::pin(async move { Ok(pass(&options, inner, request).await) })
    }
}

/// The response to `request`: a refusal, or what `inner` answers.
async fn pass<S>(options: &HttpOptions, mut inner: S, request: Request) -> Response
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    if let Some(refusal) = origin::refusal(&options.origins, &request) {
        return refusal;
    }
    if request.uri().path() == OPEN_PATH {
        return answer(inner.call(request).await);
    }
    if let Some(token) = &options.token
        && let Some(refusal) = auth::refusal(token, &request)
    {
        return refusal;
    }
    deadline::bound(options.request_timeout, async {
        let method = request.method().clone();
        let request = match envelope::admit(options.max_body_bytes, request).await {
            Ok(request) => request,
            Err(refusal) => return refusal,
        };
        let mut response = answer(inner.call(request).await);
        if method == Method::POST {
            response = coalesce::first_message(response).await;
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
