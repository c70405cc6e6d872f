//! Resources: listing, reading, completing template variables, and telling
//! subscribers when a resource changed (legacy `resources/subscribe` and the
//! `resourceSubscriptions` of a listen stream).

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::{
    CacheScope, CompleteResult, ListResourceTemplatesResult, ListResourcesResult,
    PaginatedRequestParams, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
    ResourceUpdatedNotificationParam,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::json;
use tokio::task::AbortHandle;

use super::{SESSION_CHECK, WharfServer, completion};
use crate::registry::{ExposedResource, ExposedTemplate, ResourceTarget, ToolSet};
use crate::runtime::{CallFailure, ContentItem, InputBroker, ResourceBody, ResourceContent};

/// A legacy session's `resources/subscribe`s: one forwarding task per URI,
/// stopped by `resources/unsubscribe` or when the session ends.
#[derive(Debug, Default)]
pub(super) struct Subscriptions(std::sync::Mutex<HashMap<String, AbortHandle>>);

impl Drop for Subscriptions {
    fn drop(&mut self) {
        for task in self.0.get_mut().expect("subscriptions lock").values() {
            task.abort();
        }
    }
}

impl WharfServer {
    pub(super) fn resource_page(
        &self,
        request: Option<PaginatedRequestParams>,
    ) -> Result<ListResourcesResult, McpError> {
        let (resources, next) = self.list_page(
            request,
            ToolSet::resource_page,
            ExposedResource::uri,
            mcp_resource,
        )?;
        let mut result = ListResourcesResult::with_all_items(resources)
            .with_ttl_ms(self.list_ttl_ms())
            .with_cache_scope(CacheScope::Public);
        result.next_cursor = next;
        Ok(result)
    }

    pub(super) fn template_page(
        &self,
        request: Option<PaginatedRequestParams>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let (templates, next) = self.list_page(
            request,
            ToolSet::template_page,
            |template: &ExposedTemplate| template.template().as_str(),
            mcp_template,
        )?;
        let mut result = ListResourceTemplatesResult::with_all_items(templates)
            .with_ttl_ms(self.list_ttl_ms())
            .with_cache_scope(CacheScope::Public);
        result.next_cursor = next;
        Ok(result)
    }

    /// Reads `uri` from the plugin that serves it. A listed resource that its
    /// plugin re-reads every `poll-ms` may be cached that long; any other for
    /// as long as the lists.
    pub(super) async fn read(
        &self,
        uri: &str,
        context: &RequestContext<RoleServer>,
        input: Option<Arc<dyn InputBroker>>,
    ) -> Result<ReadResourceResult, McpError> {
        let set = self.registry.snapshot();
        let Some(target) = set.resolve_resource(uri) else {
            return Err(unknown_resource(uri));
        };
        let (mut call, forwarder) = self.call_context(context, target.plugin.name());
        call.input = input;
        let outcome = target.plugin.read_resource(&target.plugin_uri, call).await;
        if let Some(forwarder) = forwarder {
            let _ = forwarder.await;
        }
        let contents = outcome.map_err(|failure| match failure {
            CallFailure::UnknownResource(_) => unknown_resource(uri),
            failure => {
                tracing::warn!(%uri, "reading a resource failed: {failure}");
                McpError::internal_error(
                    format!("Reading `{uri}` failed: {failure}"),
                    Some(json!({ "uri": uri })),
                )
            }
        })?;
        let ttl = target
            .listed
            .and_then(|resource| resource.spec().poll)
            .map_or(self.list_ttl_ms(), |poll| poll.as_millis() as u64);
        let contents = contents
            .into_iter()
            .map(|content| mcp_resource_contents(content, uri, &target))
            .collect();
        Ok(ReadResourceResult::new(contents)
            .with_ttl_ms(ttl)
            .with_cache_scope(CacheScope::Public))
    }

    /// Completes `variable` of the template clients know as `template`.
    pub(super) async fn complete_template(
        &self,
        template: &str,
        variable: &str,
        value: &str,
        chosen: &[(String, String)],
        context: &RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let set = self.registry.snapshot();
        let Some(exposed) = set.get_template(template) else {
            return Err(McpError::invalid_params(
                format!("Unknown resource template: {template}"),
                Some(json!({ "uri": template })),
            ));
        };
        if !exposed.template().variables().any(|v| v == variable) {
            return Err(McpError::invalid_params(
                format!("resource template `{template}` has no variable `{variable}`"),
                Some(json!({ "uri": template, "argument": variable })),
            ));
        }
        let (call, _) = self.call_context(context, exposed.plugin().name());
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

    /// `resources/subscribe` of a legacy session: `notifications/resources/updated`
    /// follows each change until the client unsubscribes or goes away.
    pub(super) fn subscribe_session(
        &self,
        uri: String,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if self.registry.snapshot().resolve_resource(&uri).is_none() {
            return Err(unknown_resource(&uri));
        }
        let mut subscriptions = self
            .session
            .subscriptions
            .0
            .lock()
            .expect("subscriptions lock");
        if subscriptions.contains_key(&uri) {
            return Ok(());
        }
        let mut changes = self.watch.watch(&uri);
        let peer = context.peer;
        let updated = uri.clone();
        let task = tokio::spawn(async move {
            let mut check = tokio::time::interval(SESSION_CHECK);
            loop {
                tokio::select! {
                    changed = changes.changed() => {
                        let param = ResourceUpdatedNotificationParam::new(updated.clone());
                        if changed.is_err() || peer.notify_resource_updated(param).await.is_err() {
                            return;
                        }
                    }
                    _ = check.tick() => {
                        if peer.is_transport_closed() {
                            return;
                        }
                    }
                }
            }
        });
        subscriptions.insert(uri, task.abort_handle());
        Ok(())
    }

    /// `resources/unsubscribe`: stops the updates (a URI not subscribed to is
    /// not an error: the client's wish holds).
    pub(super) fn unsubscribe_session(&self, uri: &str) {
        let task = self
            .session
            .subscriptions
            .0
            .lock()
            .expect("subscriptions lock")
            .remove(uri);
        if let Some(task) = task {
            task.abort();
        }
    }
}

/// Rewrites links and embedded resources in `items` from `plugin`'s own URIs
/// to the URIs clients read them by, so a link a tool returns can be followed.
pub(super) fn expose_links(set: &ToolSet, plugin: &str, items: &mut [ContentItem]) {
    for item in items {
        let uri = match item {
            ContentItem::ResourceLink { uri, .. } | ContentItem::EmbeddedResource { uri, .. } => {
                uri
            }
            _ => continue,
        };
        if let Some(exposed) = set.exposed_uri(plugin, uri) {
            *uri = exposed;
        }
    }
}

pub(super) fn unknown_resource(uri: &str) -> McpError {
    // -32002 for legacy sessions; rmcp makes it -32602 for 2026-07-28 (SEP-2164).
    McpError::resource_not_found(
        format!("Resource not found: {uri}"),
        Some(json!({ "uri": uri })),
    )
}

fn mcp_resource(resource: &ExposedResource) -> Resource {
    let spec = resource.spec();
    let mut out = Resource::new(resource.uri(), &spec.name);
    out.title = spec.title.clone();
    out.description = spec.description.clone();
    out.mime_type = spec.mime_type.clone();
    out.size = spec.size;
    out
}

fn mcp_template(template: &ExposedTemplate) -> ResourceTemplate {
    let spec = template.spec();
    let mut out = ResourceTemplate::new(template.template().as_str(), &spec.name);
    out.title = spec.title.clone();
    out.description = spec.description.clone();
    out.mime_type = spec.mime_type.clone();
    out
}

/// One piece of a read, its URI as clients know it: the one they asked for,
/// or another of the plugin's URIs exposed the same way.
fn mcp_resource_contents(
    content: ResourceContent,
    requested: &str,
    target: &ResourceTarget<'_>,
) -> ResourceContents {
    let uri = if content.uri == target.plugin_uri {
        requested.to_owned()
    } else {
        target
            .naming
            .expose_uri(target.plugin.name(), &content.uri)
            .unwrap_or(content.uri)
    };
    match content.body {
        ResourceBody::Text(text) => ResourceContents::TextResourceContents {
            uri,
            mime_type: content.mime_type,
            text,
            meta: None,
        },
        ResourceBody::Blob(data) => ResourceContents::BlobResourceContents {
            uri,
            mime_type: content.mime_type,
            blob: super::base64(&data),
            meta: None,
        },
    }
}
