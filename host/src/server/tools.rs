//! `tools/call`: checks the arguments, runs the tool in a round (which may ask
//! the client for input), records the call in the metrics and the audit
//! trail, and answers with the tool's result or a tool execution error.
//! (`tools/list` is one line of the handler, on [`super::pages`].)

use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::{Value, json};

use super::call_audit::CallAudit;
use super::convert::mcp_result;
use super::resources::expose_links;
use super::round::Round;
use super::{WharfServer, caller};
use crate::audit::CallOutcome as Audited;
use crate::client_input::Binding;
use crate::metrics::CallOutcome;
use crate::runtime::{CallFailure, Plugin};
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
            expose_links(&set, plugin.name(), &mut output.content);
            Ok(mcp_result(output).into())
        }
        Err(CallFailure::UnknownTool(_)) => {
            finish(audit, Audited::UnknownTool, None);
            Err(unknown_tool(&request.name))
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
            Ok(tool_error(format!("Tool `{}` failed: {failure}", tool.name())).into())
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
fn finish(audit: Option<CallAudit>, outcome: Audited, limit: Option<&'static str>) {
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
