//! The resources of a `wharf:plugin` component: listed (with its templates)
//! when it loads, read and completed in a fresh instance per request, under the
//! same concurrency, time, memory and output limits as a tool call.

use wasmtime::Store;

use super::super::bindings::exports::wharf::plugin::resources::{Guest, ResourceError};
use super::super::resource::{ResourceContent, ResourceSpec, TemplateSpec};
use super::super::state::{CallContext, HostState};
use super::{CallFailure, Exports, Plugin, Slot, guarded, guarded_by_clock};

impl Plugin {
    /// Asks one fresh instance for the plugin's resources and templates (none
    /// if it exports no `resources`). Invalid or repeated entries are left out
    /// with a warning. Waits for a free call slot, as listing tools does.
    pub(super) async fn list_resources(
        &self,
    ) -> Result<(Vec<ResourceSpec>, Vec<TemplateSpec>), CallFailure> {
        let _slot: Slot = self.all_calls.take().await;
        let Some((mut store, resources)) = self.resources_instance(CallContext::default()).await?
        else {
            return Ok(Default::default());
        };
        let cancel = store.data().call_cancel();
        let outcome = guarded(&cancel, self.limits().timeout, async {
            let listed = resources.call_list_resources(&mut store).await?;
            let templates = resources.call_list_resource_templates(&mut store).await?;
            Ok((listed, templates))
        })
        .await;
        let (listed, templates) = self.finish(&store, outcome)?;

        let mut specs: Vec<ResourceSpec> = Vec::with_capacity(listed.len());
        for resource in listed {
            let uri = resource.uri.clone();
            match ResourceSpec::from_wit(resource) {
                Err(error) => {
                    tracing::warn!(plugin = %self.name(), %uri, "resource left out: {error}")
                }
                Ok(spec) if specs.iter().any(|s| s.uri == spec.uri) => {
                    tracing::warn!(plugin = %self.name(), %uri, "resource left out: its URI is listed twice")
                }
                Ok(spec) => specs.push(spec),
            }
        }
        let mut template_specs: Vec<TemplateSpec> = Vec::with_capacity(templates.len());
        for template in templates {
            let uri = template.uri_template.clone();
            match TemplateSpec::from_wit(template) {
                Err(error) => {
                    tracing::warn!(plugin = %self.name(), template = %uri, "resource template left out: {error}")
                }
                Ok(spec) if template_specs.iter().any(|s| s.template == spec.template) => {
                    tracing::warn!(plugin = %self.name(), template = %uri, "resource template left out: it is listed twice")
                }
                Ok(spec) => template_specs.push(spec),
            }
        }
        Ok((specs, template_specs))
    }

    /// Reads the resource at `uri` (in the plugin's own form) in a fresh
    /// instance.
    pub async fn read_resource(
        &self,
        uri: &str,
        ctx: CallContext,
    ) -> Result<Vec<ResourceContent>, CallFailure> {
        let _slots = self.take_slots()?;
        let Some((store, resources)) = self.resources_instance(ctx).await? else {
            return Err(CallFailure::UnknownResource(uri.to_string()));
        };
        let cancel = store.data().call_cancel();
        let clock = store.data().clock.clone();
        let owned_uri = uri.to_owned();
        let (store, outcome) = self
            .placed(store, move |store| {
                Box::pin(async move {
                    guarded_by_clock(&cancel, &clock, async {
                        resources.call_read_resource(store, &owned_uri).await
                    })
                    .await
                })
            })
            .await;
        let outcome = self.conclude(store, outcome)?;
        let contents: Vec<ResourceContent> = match outcome {
            Ok(contents) => contents.into_iter().map(ResourceContent::from).collect(),
            Err(ResourceError::NotFound(_)) => {
                return Err(CallFailure::UnknownResource(uri.to_string()));
            }
            Err(ResourceError::Failed(why)) => return Err(CallFailure::Failed(why)),
        };
        // MCP has no empty read: a resource with nothing in it is not there.
        if contents.is_empty() {
            return Err(CallFailure::UnknownResource(uri.to_string()));
        }
        let size: usize = contents.iter().map(ResourceContent::size_bytes).sum();
        self.check_output_size(size)?;
        Ok(contents)
    }

    /// Suggestions for `variable` of the template `template` (as the plugin
    /// lists it) whose value so far is `value`, `context` holding variables
    /// already chosen.
    pub async fn complete_template(
        &self,
        template: &str,
        variable: &str,
        value: &str,
        context: &[(String, String)],
        ctx: CallContext,
    ) -> Result<Vec<String>, CallFailure> {
        let _slots = self.take_slots()?;
        let Some((store, resources)) = self.resources_instance(ctx).await? else {
            return Err(CallFailure::UnknownResource(template.to_string()));
        };
        let cancel = store.data().call_cancel();
        let timeout = self.limits().timeout;
        let asked = (template.to_owned(), variable.to_owned(), value.to_owned());
        let context = context.to_vec();
        let (store, outcome) = self
            .placed(store, move |store| {
                Box::pin(async move {
                    let (template, variable, value) = &asked;
                    guarded(&cancel, timeout, async {
                        resources
                            .call_complete_template(store, template, variable, value, &context)
                            .await
                    })
                    .await
                })
            })
            .await;
        let values = self.conclude(store, outcome)?;
        Ok(values)
    }

    /// A fresh instance and its `resources` export, or `None` if the plugin
    /// has no resources.
    async fn resources_instance(
        &self,
        ctx: CallContext,
    ) -> Result<Option<(Store<HostState>, Guest)>, CallFailure> {
        let code = self.code.load_full();
        let Exports::Wharf(pre) = &code.exports else {
            return Ok(None);
        };
        let Some(indices) = &pre.resources else {
            return Ok(None);
        };
        let (mut store, instance) = self.fresh_instance(&code, ctx).await?;
        let resources = self.export(indices.load(&mut store, &instance))?;
        Ok(Some((store, resources)))
    }
}
