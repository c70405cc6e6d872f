//! The resources of a `wharf:plugin` component: listed (with its templates)
//! when it loads, read and completed in a fresh instance per request, under the
//! same concurrency, time, memory and output limits as a tool call.

use super::Plugin;
use super::invoke::{Request, TimeLimit};
use crate::runtime::bindings::exports::wharf::plugin::resources::{GuestIndices, ResourceError};
use crate::runtime::code::Exports;
use crate::runtime::failure::CallFailure;
use crate::runtime::resource::{ResourceContent, ResourceSpec, TemplateSpec};
use crate::runtime::state::CallContext;

/// The `resources` export of a plugin's code, if it has one.
fn resources_export(exports: &Exports) -> Option<&GuestIndices> {
    match exports {
        Exports::Wharf(wharf) => wharf.resources.as_ref(),
        Exports::Plain(_) => None,
    }
}

/// Finds the `resources` export for a request about `uri` (a resource or a
/// template); a plugin without one has no such resource.
fn resources_for(uri: &str) -> impl FnOnce(&Exports) -> Result<GuestIndices, CallFailure> + '_ {
    move |exports| {
        resources_export(exports)
            .cloned()
            .ok_or_else(|| CallFailure::UnknownResource(uri.to_string()))
    }
}

impl Plugin {
    /// Asks one fresh instance for the plugin's resources and templates (none
    /// if it exports no `resources`). Invalid or repeated entries are left out
    /// with a warning. Waits for a free call slot, as listing tools does.
    pub(super) async fn list_resources(
        &self,
    ) -> Result<(Vec<ResourceSpec>, Vec<TemplateSpec>), CallFailure> {
        if resources_export(&self.code.load().exports).is_none() {
            return Ok(Default::default());
        }
        let (listed, templates) = self
            .invoke(
                Request::Listing,
                CallContext::default(),
                |exports| {
                    resources_export(exports)
                        .cloned()
                        .ok_or_else(|| CallFailure::Setup("its resources export is gone".into()))
                },
                |store, resources| {
                    Box::pin(async move {
                        let listed = resources.call_list_resources(&mut *store).await?;
                        let templates = resources.call_list_resource_templates(store).await?;
                        Ok((listed, templates))
                    })
                },
            )
            .await?;

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
        let owned_uri = uri.to_owned();
        let outcome = self
            .invoke(
                Request::Call(TimeLimit::Clock),
                ctx,
                resources_for(uri),
                move |store, resources| {
                    Box::pin(async move { resources.call_read_resource(store, &owned_uri).await })
                },
            )
            .await?;
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
        let asked = (template.to_owned(), variable.to_owned(), value.to_owned());
        let context = context.to_vec();
        self.invoke(
            Request::Call(TimeLimit::Fixed),
            ctx,
            resources_for(template),
            move |store, resources| {
                Box::pin(async move {
                    let (template, variable, value) = &asked;
                    resources
                        .call_complete_template(store, template, variable, value, &context)
                        .await
                })
            },
        )
        .await
    }
}
