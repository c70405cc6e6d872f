//! `tools/call`: checks the arguments, runs the tool in a round (which may ask
//! the client for input), records the call in the metrics, and answers with
//! the tool's result or a tool execution error. (`tools/list` is one line of
//! the handler, on [`super::pages`].)

use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::{Value, json};

use super::convert::mcp_result;
use super::resources::expose_links;
use super::round::Round;
use super::{WharfServer, caller};
use crate::client_input::Binding;
use crate::metrics::CallOutcome;
use crate::runtime::CallFailure;

/// `tools/call`.
pub(super) async fn call(
    server: &WharfServer,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResponse, McpError> {
    let set = server.registry.snapshot();
    let Some(tool) = set.get(&request.name) else {
        return Err(unknown_tool(&request.name));
    };
    // Over HTTP the transport has answered 403 already (it asks the same
    // registry); this also covers a reload between its check and this one.
    if let Some(refusal) =
        caller::refusal(&context, tool.scopes(), &format!("tool `{}`", tool.name()))
    {
        return Err(refusal);
    }
    // Dropped unfinished if the request is abandoned: counted as an error.
    let timer = server.metrics.start_call(tool.name());
    let arguments = Value::Object(request.arguments.unwrap_or_default());
    if let Err(problems) = tool.check_arguments(&arguments) {
        timer.finish(CallOutcome::Error);
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
    let plugin = tool.plugin();
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
            return Ok(result.into());
        }
        Err(error) => {
            timer.finish(CallOutcome::Error);
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
            expose_links(&set, plugin.name(), &mut output.content);
            Ok(mcp_result(output).into())
        }
        Err(CallFailure::UnknownTool(_)) => Err(unknown_tool(&request.name)),
        Err(failure @ CallFailure::ArgumentsTooLarge { limit }) => Err(McpError::invalid_params(
            failure.to_string(),
            Some(json!({ "limit": limit })),
        )),
        Err(failure) => {
            tracing::warn!(tool = tool.name(), "call failed: {failure}");
            Ok(tool_error(format!("Tool `{}` failed: {failure}", tool.name())).into())
        }
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
