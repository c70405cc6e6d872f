//! The audit line of one `tools/call` (see [`crate::audit`]): what the
//! request said (its trace, its legacy session, its authenticated caller), which plugin build answered,
//! and how it ended. Made only when `--audit-log` is on.

use std::sync::Arc;
use std::time::Instant;

use rmcp::RoleServer;
use rmcp::service::RequestContext;
use serde_json::Value;

use super::WharfServer;
use crate::audit::{AuditLog, CallEntry, CallOutcome, millis};
use crate::caller::Caller;
use crate::runtime::Plugin;
use crate::telemetry::request_span::current_trace_id;

/// The header of a legacy Streamable HTTP session.
const SESSION_HEADER: &str = "mcp-session-id";

/// One call being audited; written once finished, or as `abandoned` if
/// dropped unfinished (the request was cancelled or its client left).
pub(super) struct CallAudit {
    log: Arc<AuditLog>,
    started: Instant,
    trace_id: Option<String>,
    session_id: Option<String>,
    /// Who made the call (set by the HTTP auth check), if auth is on.
    caller: Option<Caller>,
    tool: String,
    /// The plugin's name and digest, once the tool is found.
    plugin: Option<(String, String)>,
    arguments: Option<Value>,
    done: bool,
}

impl WharfServer {
    /// Starts the audit of a call of `tool`, if the audit trail is on.
    pub(super) fn audit_call(
        &self,
        context: &RequestContext<RoleServer>,
        tool: &str,
    ) -> Option<CallAudit> {
        let log = self.audit.clone()?;
        let parts = context.extensions.get::<http::request::Parts>();
        // `_meta.traceparent` (SEP-414) first, then the HTTP header.
        let trace_id = context
            .meta
            .0
            .get_traceparent()
            .and_then(crate::trace_context::trace_id)
            .or_else(|| {
                parts
                    .and_then(|p| p.headers.get("traceparent"))
                    .and_then(|v| v.to_str().ok())
                    .and_then(crate::trace_context::trace_id)
            })
            .map(str::to_string)
            // Else the trace the request's span started (export on).
            .or_else(current_trace_id);
        let session_id = parts
            .and_then(|p| p.headers.get(SESSION_HEADER))
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        // An OAuth access token's caller, else the static token's.
        let caller = parts.and_then(|p| {
            p.extensions
                .get::<crate::oauth::Caller>()
                .map(|c| Caller::oauth(c.subject.clone(), c.client_id.clone()))
                .or_else(|| p.extensions.get::<Caller>().cloned())
        });
        Some(CallAudit {
            log,
            started: Instant::now(),
            trace_id,
            session_id,
            caller,
            tool: tool.to_string(),
            plugin: None,
            arguments: None,
            done: false,
        })
    }
}

impl CallAudit {
    /// The plugin that serves the tool.
    pub(super) fn plugin(&mut self, plugin: &Plugin) {
        self.plugin = Some((plugin.name().to_string(), plugin.digest().hex()));
    }

    /// The arguments, kept only if the log writes them.
    pub(super) fn arguments(&mut self, arguments: &Value) {
        if self.log.wants_arguments() {
            self.arguments = Some(arguments.clone());
        }
    }

    /// Writes the line.
    pub(super) fn finish(mut self, outcome: CallOutcome, limit: Option<&'static str>) {
        self.write(outcome, limit);
    }

    fn write(&mut self, outcome: CallOutcome, limit: Option<&'static str>) {
        self.done = true;
        self.log.call(&CallEntry {
            trace_id: self.trace_id.as_deref(),
            session_id: self.session_id.as_deref(),
            caller: self.caller.as_ref(),
            tool: &self.tool,
            plugin: self.plugin.as_ref().map(|(name, _)| name.as_str()),
            digest: self.plugin.as_ref().map(|(_, digest)| digest.as_str()),
            outcome,
            duration_ms: millis(self.started.elapsed()),
            limit,
            arguments: self.arguments.as_ref(),
        });
    }
}

impl Drop for CallAudit {
    fn drop(&mut self) {
        if !self.done {
            self.write(CallOutcome::Abandoned, None);
        }
    }
}
