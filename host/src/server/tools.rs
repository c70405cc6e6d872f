//! `tools/call`: checks the arguments, runs the tool in a round (which may ask
//! the client for input), records the call in the metrics and the audit
//! trail, and answers with the tool's result or a tool execution error. A
//! call that becomes a task (its tool's `[tasks]`, for a client that declared
//! the extension) goes on in `task_call.rs`.
//! (`tools/list` is one line of the handler, on [`super::pages`].)

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ContentBlock,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::{Value, json};

use super::call_audit::CallAudit;
use super::convert::mcp_result;
use super::resources::expose_links;
use super::round::Round;
use super::task_call::TaskCall;
use super::{WharfServer, caller};
use crate::audit::CallOutcome as Audited;
use crate::client_input::Binding;
use crate::manifest::TaskStart;
use crate::metrics::{CallOutcome, CallTimer};
use crate::registry::{ExposedTool, ToolSet};
use crate::runtime::{CallFailure, CallOutput, Plugin};
use crate::telemetry::request_span::record_tool_error;
use crate::trace_context::SPAN_TARGET;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

/// `tools/call`.
pub(super) async fn call(
    server: &WharfServer,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResponse, McpError> {
    let mut audit = server.audit_call(&context, &request.name);
    let set = server.registry.snapshot();
    let Some(tool) = set.get(&request.name) else {
        finish(audit, Audited::UnknownTool, None);
        return Err(unknown_tool(&request.name));
    };
    // Over HTTP the transport has answered 403 already (it asks the same
    // registry); this also covers a reload between its check and this one.
    if let Some(refusal) =
        caller::refusal(&context, tool.scopes(), &format!("tool `{}`", tool.name()))
    {
        finish(audit, Audited::Forbidden, None);
        return Err(refusal);
    }
    let plugin = tool.plugin();
    record_plugin(plugin);
    // Dropped unfinished if the request is abandoned: counted as an error.
    let timer = server.metrics.start_call(tool.name());
    let arguments = Value::Object(request.arguments.unwrap_or_default());
    if let Some(audit) = &mut audit {
        audit.plugin(plugin);
        audit.arguments(&arguments);
    }
    let checked = {
        let _span = tracing::info_span!(target: SPAN_TARGET, "validate arguments").entered();
        tool.check_arguments(&arguments)
    };
    if let Err(problems) = checked {
        record_tool_error();
        timer.finish(CallOutcome::Error);
        finish(audit, Audited::InvalidArguments, None);
        return Ok(tool_error(format!(
            "Invalid arguments for tool `{}`: {problems}",
            tool.name()
        ))
        .into());
    }

    let mode = set.task_mode(tool);
    let tasks_declared = tasks_declared(&context);
    if mode.required && !tasks_declared {
        timer.finish(CallOutcome::Error);
        finish(audit, Audited::ProtocolError, None);
        return Err(McpError::missing_required_client_capability(
            ClientCapabilities::builder().enable_tasks().build(),
        ));
    }
    if tasks_declared && mode.start != TaskStart::Never {
        let call = TaskCall {
            set: set.clone(),
            tool: request.name.to_string(),
            arguments,
            input_responses: request.input_responses,
            request_state: request.request_state,
            start: mode.start,
            audit,
            timer,
        };
        return call.run(server, context).await;
    }

    let binding = Binding {
        method: "tools/call",
        name: &request.name,
        arguments: &arguments,
    };
    let round = server
        .round(
            binding,
            request.input_responses.as_ref(),
            request.request_state.as_deref(),
            &context,
            |input| {
                server.run_in_call_context(&context, plugin.name(), input, |call| {
                    plugin.call(&tool.spec().name, &arguments, call)
                })
            },
            CallFailure::Failed,
        )
        .await;
    let outcome = match round {
        Ok(Round::Ran(outcome)) => outcome,
        Ok(Round::InputRequired(result)) => {
            timer.finish(CallOutcome::Success);
            finish(audit, Audited::InputRequired, None);
            return Ok(result.into());
        }
        Err(error) => {
            timer.finish(CallOutcome::Error);
            finish(audit, Audited::ProtocolError, None);
            return Err(error);
        }
    };
    answer(&set, tool, outcome, audit, timer).map(Into::into)
}

/// Whether the request declared the tasks extension. Wharf makes tasks of
/// 2026-07-28 requests only (whose `_meta` names the client's capabilities);
/// a legacy session never gets one.
pub(super) fn tasks_declared(context: &RequestContext<RoleServer>) -> bool {
    context.meta.protocol_version().is_some()
        && context
            .meta
            .client_capabilities()
            .is_some_and(|capabilities| capabilities.supports_tasks())
}

/// The answer to a call the plugin ran (to its end), recorded in the metrics
/// and the audit trail: the tool's result, a tool execution error, or a
/// protocol error.
pub(super) fn answer(
    set: &ToolSet,
    tool: &ExposedTool,
    outcome: Result<CallOutput, CallFailure>,
    audit: Option<CallAudit>,
    timer: CallTimer,
) -> Result<CallToolResult, McpError> {
    let failed = !matches!(&outcome, Ok(output) if !output.is_error);
    timer.finish(if failed {
        CallOutcome::Error
    } else {
        CallOutcome::Success
    });
    match outcome {
        Ok(mut output) => {
            let audited = if output.is_error {
                record_tool_error();
                Audited::ToolError
            } else {
                Audited::Success
            };
            finish(audit, audited, None);
            let _span = tracing::info_span!(target: SPAN_TARGET, "convert output").entered();
            expose_links(set, tool.plugin().name(), &mut output.content);
            Ok(mcp_result(output))
        }
        Err(CallFailure::UnknownTool(_)) => {
            finish(audit, Audited::UnknownTool, None);
            Err(unknown_tool(tool.name()))
        }
        Err(failure @ CallFailure::ArgumentsTooLarge { limit }) => {
            finish(audit, Audited::ProtocolError, failure.limit());
            Err(McpError::invalid_params(
                failure.to_string(),
                Some(json!({ "limit": limit })),
            ))
        }
        Err(failure) => {
            record_tool_error();
            finish(audit, Audited::Failed, failure.limit());
            tracing::warn!(tool = tool.name(), "call failed: {failure}");
            Ok(tool_error(format!(
                "Tool `{}` failed: {failure}",
                tool.name()
            )))
        }
    }
}

/// Names the plugin that serves the call, and its build, on the request span.
fn record_plugin(plugin: &Plugin) {
    let span = tracing::Span::current();
    if !span.is_disabled() {
        span.set_attribute("wharf.plugin.name", plugin.name().to_string());
        span.set_attribute("wharf.plugin.digest", plugin.digest().hex());
    }
}

/// Writes the audit line of the call, if the audit trail is on.
pub(super) fn finish(audit: Option<CallAudit>, outcome: Audited, limit: Option<&'static str>) {
    if let Some(audit) = audit {
        audit.finish(outcome, limit);
    }
}

fn unknown_tool(name: &str) -> McpError {
    McpError::invalid_params(
        format!("Unknown tool: {name}"),
        Some(json!({ "name": name })),
    )
}

fn tool_error(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}
