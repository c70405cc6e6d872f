//! The prompts of a `wharf:plugin` component: listed when it loads, rendered
//! and completed in a fresh instance per request, under the same concurrency,
//! time, memory and output limits as a tool call.

use wasmtime::Store;

use super::super::bindings::exports::wharf::plugin::prompts::{Guest, PromptError};
use super::super::prompt::{PromptSpec, RenderedPrompt};
use super::super::state::{CallContext, HostState};
use super::{CallFailure, Exports, Plugin, Slot, guarded, guarded_by_clock};

impl Plugin {
    /// Asks a fresh instance for its prompts (none if it exports no `prompts`).
    /// Waits for a free call slot, as listing tools does.
    pub(super) async fn list_prompts(&self) -> Result<Vec<PromptSpec>, CallFailure> {
        let _slot: Slot = self.all_calls.take().await;
        let Some((mut store, prompts)) = self.prompts_instance(CallContext::default()).await?
        else {
            return Ok(Vec::new());
        };
        let cancel = store.data().call_cancel();
        let outcome = guarded(&cancel, self.limits().timeout, async {
            prompts.call_list_prompts(&mut store).await
        })
        .await;
        let listed = self.finish(&store, outcome)?;
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
        let _slots = self.take_slots()?;
        let Some((store, prompts)) = self.prompts_instance(ctx).await? else {
            return Err(CallFailure::UnknownPrompt(name.to_string()));
        };
        let cancel = store.data().call_cancel();
        let clock = store.data().clock.clone();
        let (owned_name, arguments) = (name.to_owned(), arguments.to_vec());
        let (store, outcome) = self
            .placed(store, move |store| {
                Box::pin(async move {
                    guarded_by_clock(&cancel, &clock, async {
                        prompts
                            .call_get_prompt(store, &owned_name, &arguments)
                            .await
                    })
                    .await
                })
            })
            .await;
        let outcome = self.conclude(store, outcome)?;
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
        let _slots = self.take_slots()?;
        let Some((store, prompts)) = self.prompts_instance(ctx).await? else {
            return Err(CallFailure::UnknownPrompt(name.to_string()));
        };
        let cancel = store.data().call_cancel();
        let timeout = self.limits().timeout;
        let asked = (name.to_owned(), argument.to_owned(), value.to_owned());
        let context = context.to_vec();
        let (store, outcome) = self
            .placed(store, move |store| {
                Box::pin(async move {
                    let (name, argument, value) = &asked;
                    guarded(&cancel, timeout, async {
                        prompts
                            .call_complete_argument(store, name, argument, value, &context)
                            .await
                    })
                    .await
                })
            })
            .await;
        let values = self.conclude(store, outcome)?;
        Ok(values)
    }

    /// A fresh instance and its `prompts` export, or `None` if the plugin has
    /// no prompts.
    async fn prompts_instance(
        &self,
        ctx: CallContext,
    ) -> Result<Option<(Store<HostState>, Guest)>, CallFailure> {
        let code = self.code.load_full();
        let Exports::Wharf(pre) = &code.exports else {
            return Ok(None);
        };
        let Some(indices) = &pre.prompts else {
            return Ok(None);
        };
        let (mut store, instance) = self.fresh_instance(&code, ctx).await?;
        let prompts = self.export(indices.load(&mut store, &instance))?;
        Ok(Some((store, prompts)))
    }
}
