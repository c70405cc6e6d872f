//! `completion/complete`: suggestions for a prompt argument or a resource
//! template variable, from the plugin that serves it.

use rmcp::model::{CompleteRequestParams, CompleteResult, CompletionInfo, Reference};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::json;

use super::WharfServer;
use super::prompts::{prompt_failure, unknown_prompt};

/// `completion/complete`, for either kind of reference.
pub(super) async fn complete(
    server: &WharfServer,
    request: CompleteRequestParams,
    context: &RequestContext<RoleServer>,
) -> Result<CompleteResult, McpError> {
    let mut chosen: Vec<(String, String)> = request
        .context
        .and_then(|c| c.arguments)
        .map(|arguments| arguments.into_iter().collect())
        .unwrap_or_default();
    chosen.sort();
    let argument = &request.argument.name;
    let value = &request.argument.value;
    match &request.r#ref {
        Reference::Prompt(prompt) => {
            complete_prompt_argument(server, &prompt.name, argument, value, &chosen, context).await
        }
        Reference::Resource(template) => {
            complete_template(server, &template.uri, argument, value, &chosen, context).await
        }
        _ => Err(McpError::invalid_params(
            "Unsupported completion reference",
            None,
        )),
    }
}

/// Completes `argument` of the prompt clients know as `name`.
async fn complete_prompt_argument(
    server: &WharfServer,
    name: &str,
    argument: &str,
    value: &str,
    chosen: &[(String, String)],
    context: &RequestContext<RoleServer>,
) -> Result<CompleteResult, McpError> {
    let set = server.registry.snapshot();
    let Some(prompt) = set.get_prompt(name) else {
        return Err(unknown_prompt(name));
    };
    if let Some(refusal) = super::caller::refusal(
        context,
        set.plugin_scopes(prompt.plugin().name()),
        &format!("prompt `{}`", prompt.name()),
    ) {
        return Err(refusal);
    }
    if !prompt.spec().arguments.iter().any(|a| a.name == *argument) {
        return Err(McpError::invalid_params(
            format!("prompt `{}` has no argument `{argument}`", prompt.name()),
            Some(json!({"name": prompt.name(), "argument": argument})),
        ));
    }
    let (call, _) = server.call_context(context, prompt.plugin().name());
    let values = prompt
        .plugin()
        .complete_prompt_argument(&prompt.spec().name, argument, value, chosen, call)
        .await
        .map_err(|failure| prompt_failure(prompt, failure))?;
    completion(values)
}

/// Completes `variable` of the template clients know as `template`.
async fn complete_template(
    server: &WharfServer,
    template: &str,
    variable: &str,
    value: &str,
    chosen: &[(String, String)],
    context: &RequestContext<RoleServer>,
) -> Result<CompleteResult, McpError> {
    let set = server.registry.snapshot();
    let Some(exposed) = set.get_template(template) else {
        return Err(McpError::invalid_params(
            format!("Unknown resource template: {template}"),
            Some(json!({ "uri": template })),
        ));
    };
    if let Some(refusal) = super::caller::refusal(
        context,
        set.plugin_scopes(exposed.plugin().name()),
        &format!("resource template `{template}`"),
    ) {
        return Err(refusal);
    }
    if !exposed.template().variables().any(|v| v == variable) {
        return Err(McpError::invalid_params(
            format!("resource template `{template}` has no variable `{variable}`"),
            Some(json!({ "uri": template, "argument": variable })),
        ));
    }
    let (call, _) = server.call_context(context, exposed.plugin().name());
    let values = exposed
        .plugin()
        .complete_template(
            exposed.spec().template.as_str(),
            variable,
            value,
            chosen,
            call,
        )
        .await
        .map_err(|failure| {
            tracing::warn!(%template, "completing a template variable failed: {failure}");
            McpError::internal_error(
                format!("Completing `{variable}` of `{template}` failed: {failure}"),
                Some(json!({ "uri": template })),
            )
        })?;
    completion(values)
}

/// A completion result: the first 100 values, and how many there were.
fn completion(mut values: Vec<String>) -> Result<CompleteResult, McpError> {
    let total = values.len();
    values.truncate(CompletionInfo::MAX_VALUES);
    let more = total > values.len();
    let completion = CompletionInfo::with_pagination(values, Some(total as u32), more)
        .map_err(|why| McpError::internal_error(why, None))?;
    Ok(CompleteResult::new(completion))
}
