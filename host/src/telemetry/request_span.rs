//! The server span of one MCP request, for both protocol eras and both
//! transports: each request handler of the server runs in one
//! ([`request_span`], [`traced`]).
//!
//! The span continues the client's trace: its parent is `_meta.traceparent`
//! (SEP-414) when valid, else the HTTP `traceparent` header, else none (a new
//! root). It is named and attributed per the OpenTelemetry semantic
//! conventions for MCP: `{mcp.method.name} {target}`, kind server,
//! `mcp.method.name`, `gen_ai.tool.name` and `gen_ai.operation.name`
//! (`tools/call`), `gen_ai.prompt.name` (`prompts/get`), `mcp.protocol.version`,
//! `jsonrpc.request.id`, `mcp.session.id` (legacy HTTP sessions),
//! `network.transport`, and `error.type` (the JSON-RPC error code, or
//! `tool_error` for a result with `isError`), and `mcp.resource.uri` for the
//! requests about one resource (read, subscribe, unsubscribe).

use futures::FutureExt;
use futures::future::Either;
use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use tracing::Instrument;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use crate::trace_context::SPAN_TARGET;

/// The header of a legacy Streamable HTTP session.
const SESSION_HEADER: &str = "mcp-session-id";

/// Runs `handle` (the handler of one request) in `span`, and marks the span
/// failed with the JSON-RPC error code if it answers with an error.
///
/// The handler is boxed: rmcp spawns one task per request whose future is
/// sized by the largest handler (`tools/call`'s, about 5 KiB with a plugin
/// call's wasmtime futures inside), and tokio moves a task's whole future
/// three times per request (into the task, then out as its output is stored
/// and taken). Boxed, each request allocates its handler once and the task
/// moves a pointer. Not an `async fn` either: one that awaits the future it
/// is given holds it twice (the argument and the copy being awaited).
pub fn traced<'a, T: 'a>(
    span: tracing::Span,
    handle: impl Future<Output = Result<T, McpError>> + Send + 'a,
) -> impl Future<Output = Result<T, McpError>> + Send + 'a {
    let handle = if span.is_disabled() {
        Either::Left(handle)
    } else {
        Either::Right(handle.instrument(span.clone()))
    };
    Box::pin(handle.inspect(move |result| {
        if let Err(error) = result
            && !span.is_disabled()
        {
            span.record("error.type", error.code.0.to_string());
            span.record("otel.status_code", "error");
        }
    }))
}

/// Marks the current request span failed as a tool execution error (a
/// `tools/call` result with `isError`).
pub fn record_tool_error() {
    let span = tracing::Span::current();
    if !span.is_disabled() {
        span.record("error.type", "tool_error");
        span.record("otel.status_code", "error");
    }
}

/// Records the protocol version on the current request span, for a request
/// that settles it (`initialize`).
pub fn record_protocol_version(version: &str) {
    let span = tracing::Span::current();
    if !span.is_disabled() {
        span.record("mcp.protocol.version", version);
    }
}

/// The server span of a request for `method` (with `target`, the tool,
/// prompt or resource URI it names), parented by the client's trace context; disabled (and
/// built from nothing) when export is off.
pub fn request_span(
    method: &str,
    target: Option<&str>,
    context: &RequestContext<RoleServer>,
) -> tracing::Span {
    let tool = target.filter(|_| method == "tools/call");
    let prompt = target.filter(|_| method == "prompts/get");
    let resource = target.filter(|_| {
        matches!(
            method,
            "resources/read" | "resources/subscribe" | "resources/unsubscribe"
        )
    });
    // Span names carry a low-cardinality target only: a tool or prompt name.
    let target = tool.or(prompt);
    let span = tracing::info_span!(
        target: SPAN_TARGET,
        "mcp.request",
        "otel.name" = %match target {
            Some(target) => format!("{method} {target}"),
            None => method.to_string(),
        },
        "otel.kind" = "server",
        "otel.status_code" = tracing::field::Empty,
        "mcp.method.name" = method,
        "gen_ai.tool.name" = tool,
        "gen_ai.operation.name" = tool.map(|_| "execute_tool"),
        "gen_ai.prompt.name" = prompt,
        "mcp.resource.uri" = resource,
        "mcp.protocol.version" = tracing::field::Empty,
        "jsonrpc.request.id" = %context.id,
        "mcp.session.id" = tracing::field::Empty,
        "network.transport" = tracing::field::Empty,
        "error.type" = tracing::field::Empty,
    );
    if span.is_disabled() {
        return span;
    }
    if let Some(version) = context.protocol_version() {
        span.record("mcp.protocol.version", version.as_str());
    }
    let parts = context.extensions.get::<http::request::Parts>();
    span.record(
        "network.transport",
        if parts.is_some() { "tcp" } else { "pipe" },
    );
    let header = |name: &str| {
        parts
            .and_then(|p| p.headers.get(name))
            .and_then(|v| v.to_str().ok())
    };
    if let Some(session) = header(SESSION_HEADER) {
        span.record("mcp.session.id", session);
    }
    // `_meta` first, then the HTTP headers; each pair taken whole.
    let meta = &context.meta.0;
    let carrier = match meta.get_traceparent() {
        Some(traceparent) => Carrier {
            traceparent: Some(traceparent),
            tracestate: meta.get_tracestate(),
        },
        None => Carrier {
            traceparent: header("traceparent"),
            tracestate: header("tracestate"),
        },
    };
    if carrier
        .traceparent
        .is_some_and(|t| crate::trace_context::trace_id(t).is_some())
    {
        let parent = TraceContextPropagator::new().extract(&carrier);
        let _ = span.set_parent(parent);
    }
    span
}

/// A request's `traceparent` and `tracestate`, for the W3C propagator.
struct Carrier<'a> {
    traceparent: Option<&'a str>,
    tracestate: Option<&'a str>,
}

impl Extractor for Carrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        match key {
            "traceparent" => self.traceparent,
            "tracestate" => self.tracestate,
            _ => None,
        }
    }

    fn keys(&self) -> Vec<&str> {
        vec!["traceparent", "tracestate"]
    }
}

/// The `traceparent` of the current span, to carry the trace into what a
/// call does next (a plugin's outbound HTTP requests); `None` when export is
/// off or the span is not sampled.
pub fn current_traceparent() -> Option<String> {
    use opentelemetry::trace::TraceContextExt;
    let span = tracing::Span::current();
    if span.is_disabled() {
        return None;
    }
    let context = span.context();
    let span_context = context.span().span_context().clone();
    span_context.is_valid().then(|| {
        format!(
            "00-{}-{}-{:02x}",
            span_context.trace_id(),
            span_context.span_id(),
            span_context.trace_flags().to_u8()
        )
    })
}

/// The trace id of the current span, when export is on.
pub fn current_trace_id() -> Option<String> {
    use opentelemetry::trace::TraceContextExt;
    let span = tracing::Span::current();
    if span.is_disabled() {
        return None;
    }
    let context = span.context();
    let span_context = context.span().span_context().clone();
    span_context
        .is_valid()
        .then(|| span_context.trace_id().to_string())
}
