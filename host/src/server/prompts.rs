//! `prompts/get`: checks the arguments and renders the prompt in a round
//! (which may ask the client for input). (`prompts/list` is one line of the
//! handler, on [`super::pages`]; argument completion is in
//! [`super::completion`].)

use rmcp::model::{GetPromptRequestParams, GetPromptResponse, JsonObject};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::{Value, json};

use super::WharfServer;
use super::convert::mcp_prompt_result;
use super::resources::expose_links;
use super::round::Round;
use crate::client_input::{Binding, arguments_value};
use crate::registry::ExposedPrompt;
use crate::runtime::CallFailure;

/// `prompts/get`.
pub(super) async fn get(
    server: &WharfServer,
    request: GetPromptRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<GetPromptResponse, McpError> {
    let set = server.registry.snapshot();
    let Some(prompt) = set.get_prompt(&request.name) else {
        return Err(unknown_prompt(&request.name));
    };
    if let Some(refusal) = super::caller::refusal(
        &context,
        set.plugin_scopes(prompt.plugin().name()),
        &format!("prompt `{}`", prompt.name()),
    ) {
        return Err(refusal);
    }
    let arguments = string_arguments(request.arguments.as_ref())?;
    prompt
        .spec()
        .check_arguments(arguments.iter().map(|(name, _)| name.as_str()))
        .map_err(|why| McpError::invalid_params(why, Some(json!({"name": request.name}))))?;
    let bound = arguments_value(request.arguments.as_ref());
    let binding = Binding {
        method: "prompts/get",
        name: &request.name,
        arguments: &bound,
    };
    let plugin = prompt.plugin();
    let round = server
        .round(
            binding,
            request.input_responses.as_ref(),
            request.request_state.as_deref(),
            &context,
            |input| {
                server.run_in_call_context(&context, plugin.name(), input, |call| {
                    plugin.get_prompt(&prompt.spec().name, &arguments, call)
                })
            },
            CallFailure::Failed,
        )
        .await?;
    let outcome = match round {
        Round::Ran(outcome) => outcome,
        Round::InputRequired(result) => return Ok(result.into()),
    };
    let mut rendered = outcome.map_err(|failure| prompt_failure(prompt, failure))?;
    for (_, content) in &mut rendered.messages {
        expose_links(&set, plugin.name(), std::slice::from_mut(content));
    }
    Ok(mcp_prompt_result(rendered).into())
}

/// Prompt arguments are strings; anything else is refused, naming the argument.
fn string_arguments(arguments: Option<&JsonObject>) -> Result<Vec<(String, String)>, McpError> {
    let mut pairs = Vec::new();
    for (name, value) in arguments.into_iter().flatten() {
        let Value::String(value) = value else {
            return Err(McpError::invalid_params(
                format!("prompt argument `{name}` must be a string, not {value}"),
                Some(json!({ "argument": name })),
            ));
        };
        pairs.push((name.clone(), value.clone()));
    }
    Ok(pairs)
}

/// A prompt request that the plugin could not serve: bad arguments are the
/// client's to fix (-32602); anything else is an internal error naming why.
pub(super) fn prompt_failure(prompt: &ExposedPrompt, failure: CallFailure) -> McpError {
    match failure {
        CallFailure::UnknownPrompt(_) => unknown_prompt(prompt.name()),
        CallFailure::InvalidArguments(why) => McpError::invalid_params(
            format!("Invalid arguments for prompt `{}`: {why}", prompt.name()),
            Some(json!({ "name": prompt.name() })),
        ),
        failure => {
            tracing::warn!(prompt = prompt.name(), "prompt failed: {failure}");
            McpError::internal_error(
                format!("Prompt `{}` failed: {failure}", prompt.name()),
                None,
            )
        }
    }
}

pub(super) fn unknown_prompt(name: &str) -> McpError {
    McpError::invalid_params(
        format!("Unknown prompt: {name}"),
        Some(json!({ "name": name })),
    )
}
