//! The prompts of a `wharf:plugin` component: listed when it loads, rendered
//! and completed in a fresh instance per request, under the same concurrency,
//! time, memory and output limits as a tool call.

use super::Plugin;
use super::invoke::{Request, TimeLimit};
use crate::runtime::bindings::exports::wharf::plugin::prompts::{GuestIndices, PromptError};
use crate::runtime::code::Exports;
use crate::runtime::failure::CallFailure;
use crate::runtime::prompt::{PromptSpec, RenderedPrompt};
use crate::runtime::state::CallContext;

/// The `prompts` export of a plugin's code, if it has one.
fn prompts_export(exports: &Exports) -> Option<&GuestIndices> {
    match exports {
        Exports::Wharf(wharf) => wharf.prompts.as_ref(),
        Exports::Plain(_) => None,
    }
}

/// Finds the `prompts` export for a request about the prompt `name`; a
/// plugin without one has no such prompt.
fn prompts_for(name: &str) -> impl FnOnce(&Exports) -> Result<GuestIndices, CallFailure> + '_ {
    move |exports| {
        prompts_export(exports)
            .cloned()
            .ok_or_else(|| CallFailure::UnknownPrompt(name.to_string()))
    }
}

impl Plugin {
    /// Asks a fresh instance for its prompts (none if it exports no `prompts`).
    /// Waits for a free call slot, as listing tools does.
    pub(super) async fn list_prompts(&self) -> Result<Vec<PromptSpec>, CallFailure> {
        if prompts_export(&self.code.load().exports).is_none() {
            return Ok(Vec::new());
        }
        let listed = self
            .invoke(
                Request::Listing,
                CallContext::default(),
                |exports| {
                    prompts_export(exports)
                        .cloned()
                        .ok_or_else(|| CallFailure::Setup("its prompts export is gone".into()))
                },
                |store, prompts| Box::pin(async move { prompts.call_list_prompts(store).await }),
            )
            .await?;
        let mut specs: Vec<PromptSpec> = Vec::with_capacity(listed.len());
        for prompt in listed {
            if specs.iter().any(|p| p.name == prompt.name) {
                tracing::warn!(
                    plugin = %self.name(),
                    prompt = %prompt.name,
                    "prompt left out: its name is listed twice"
                );
                continue;
            }
            specs.push(PromptSpec::from(prompt));
        }
        Ok(specs)
    }

    /// Renders the prompt `name` with `arguments` (name, value pairs) in a
    /// fresh instance.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: &[(String, String)],
        ctx: CallContext,
    ) -> Result<RenderedPrompt, CallFailure> {
        let (owned_name, arguments) = (name.to_owned(), arguments.to_vec());
        let outcome = self
            .invoke(
                Request::Call(TimeLimit::Clock),
                ctx,
                prompts_for(name),
                move |store, prompts| {
                    Box::pin(async move {
                        prompts
                            .call_get_prompt(store, &owned_name, &arguments)
                            .await
                    })
                },
            )
            .await?;
        let rendered = match outcome {
            Ok(result) => RenderedPrompt::from(result),
            Err(PromptError::UnknownPrompt(name)) => return Err(CallFailure::UnknownPrompt(name)),
            Err(PromptError::InvalidArguments(why)) => {
                return Err(CallFailure::InvalidArguments(why));
            }
            Err(PromptError::Failed(why)) => return Err(CallFailure::Failed(why)),
        };
        let size: usize = rendered.messages.iter().map(|(_, c)| c.size_bytes()).sum();
        self.check_output_size(size)?;
        Ok(rendered)
    }

    /// Suggestions for `argument` of the prompt `name` whose value so far is
    /// `value`, `context` holding arguments already chosen.
    pub async fn complete_prompt_argument(
        &self,
        name: &str,
        argument: &str,
        value: &str,
        context: &[(String, String)],
        ctx: CallContext,
    ) -> Result<Vec<String>, CallFailure> {
        let asked = (name.to_owned(), argument.to_owned(), value.to_owned());
        let context = context.to_vec();
        self.invoke(
            Request::Call(TimeLimit::Fixed),
            ctx,
            prompts_for(name),
            move |store, prompts| {
                Box::pin(async move {
                    let (name, argument, value) = &asked;
                    prompts
                        .call_complete_argument(store, name, argument, value, &context)
                        .await
                })
            },
        )
        .await
    }
}
