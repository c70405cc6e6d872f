//! The context a plugin runs a request in: the request's cancellation, its
//! progress reports and logs forwarded to the client, and whoever answers the
//! plugin's questions to the client.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::service::RequestContext;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::WharfServer;
use super::events::{EventRoute, forward_events};
use super::logging::wanted_log_level;
use crate::runtime::{CallContext, CallTrace, CallerIdentity, InputBroker};
use crate::telemetry::request_span::current_traceparent;

impl WharfServer {
    /// The context a plugin runs a request in: the request's cancellation, and
    /// its progress reports and logs forwarded to the client (until the
    /// returned task ends, which it does once the call context is dropped).
    ///
    /// The forwarder would drop every event of a request that asked for
    /// neither progress nor logs (the usual case): its task and channel, a
    /// spawn and a cross-thread wake-up per call, are skipped then. Plugin logs
    /// still reach Wharf's own log from the runtime.
    pub(super) fn call_context(
        &self,
        context: &RequestContext<RoleServer>,
        plugin: &str,
    ) -> (CallContext, Option<JoinHandle<()>>) {
        let route = EventRoute {
            progress_token: context.meta.get_progress_token(),
            log_level: wanted_log_level(self, context),
            logger: plugin.to_string(),
        };
        let (events, forwarder) = if route.progress_token.is_none() && route.log_level.is_none() {
            (None, None)
        } else {
            let (events_tx, events_rx) = mpsc::unbounded_channel();
            let forwarder = tokio::spawn(forward_events(events_rx, route, context.peer.clone()));
            (Some(events_tx), Some(forwarder))
        };
        let call = CallContext {
            cancel: context.ct.clone(),
            events,
            input: None,
            trace: call_trace(),
            caller: super::caller::caller_of(context).map(|c| {
                Arc::new(CallerIdentity {
                    subject: c.subject,
                    scopes: c.scopes.into_iter().collect(),
                })
            }),
        };
        (call, forwarder)
    }

    /// Runs `run` in the call context for `plugin`, with `input` answering the
    /// plugin's questions, and returns its outcome once every progress report
    /// and log it forwarded has been sent, before the result goes out.
    pub(super) async fn run_in_call_context<T, Run>(
        &self,
        context: &RequestContext<RoleServer>,
        plugin: &str,
        input: Arc<dyn InputBroker>,
        run: impl FnOnce(CallContext) -> Run,
    ) -> T
    where
        Run: Future<Output = T>,
    {
        let (mut call, forwarder) = self.call_context(context, plugin);
        call.input = Some(input);
        let outcome = run(call).await;
        // The sender is gone with the call context, so this ends once every
        // report has been sent.
        if let Some(forwarder) = forwarder {
            let _ = forwarder.await;
        }
        outcome
    }
}

/// The call's place in the request's trace, when traces are exported.
fn call_trace() -> CallTrace {
    let span = tracing::Span::current();
    if span.is_disabled() {
        return CallTrace::default();
    }
    CallTrace {
        traceparent: current_traceparent().map(Into::into),
        span: Some(span),
    }
}
