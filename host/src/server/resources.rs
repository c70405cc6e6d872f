//! Resources: reading (in a round, which may ask the client for input), and
//! telling a legacy session's subscribers when a resource changed
//! (`resources/subscribe`). Listings are one line each of the handler, on
//! [`super::pages`]; template completion is in [`super::completion`]; a
//! listen stream's `resourceSubscriptions` in [`super::listen`].

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::{
    CacheScope, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    ResourceUpdatedNotificationParam,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::{Value, json};
use tokio::task::AbortHandle;

use super::convert::mcp_resource_contents;
use super::round::Round;
use super::{SESSION_CHECK, WharfServer};
use crate::client_input::Binding;
use crate::excerpt::Excerpt;
use crate::registry::ToolSet;
use crate::runtime::{CallFailure, ContentItem, InputBroker};

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

/// `resources/read`.
pub(super) async fn read(
    server: &WharfServer,
    request: ReadResourceRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<ReadResourceResponse, McpError> {
    let binding = Binding {
        method: "resources/read",
        name: &request.uri,
        arguments: &Value::Null,
    };
    let round = server
        .round(
            binding,
            request.input_responses.as_ref(),
            request.request_state.as_deref(),
            &context,
            |input| read_from_plugin(server, &request.uri, &context, input),
            |why| {
                McpError::internal_error(
                    format!("Reading `{}` failed: {why}", request.uri),
                    Some(json!({ "uri": request.uri })),
                )
            },
        )
        .await?;
    match round {
        Round::Ran(outcome) => Ok(outcome?.into()),
        Round::InputRequired(result) => Ok(result.into()),
    }
}

/// Reads `uri` from the plugin that serves it. A listed resource that its
/// plugin re-reads every `poll-ms` may be cached that long; any other for
/// as long as the lists.
async fn read_from_plugin(
    server: &WharfServer,
    uri: &str,
    context: &RequestContext<RoleServer>,
    input: Arc<dyn InputBroker>,
) -> Result<ReadResourceResult, McpError> {
    let set = server.registry.snapshot();
    let Some(target) = set.resolve_resource(uri) else {
        return Err(unknown_resource(uri));
    };
    if let Some(refusal) = super::caller::refusal(
        context,
        set.plugin_scopes(target.plugin.name()),
        "this resource",
    ) {
        return Err(refusal);
    }
    let outcome = server
        .run_in_call_context(context, target.plugin.name(), input, |call| {
            target.plugin.read_resource(&target.plugin_uri, call)
        })
        .await;
    let contents = outcome.map_err(|failure| match failure {
        CallFailure::UnknownResource(_) => unknown_resource(uri),
        failure => {
            // The URI is the client's (any that a template matches): an excerpt.
            tracing::warn!(uri = %Excerpt::new(uri), "reading a resource failed: {failure}");
            McpError::internal_error(
                format!("Reading `{uri}` failed: {failure}"),
                Some(json!({ "uri": uri })),
            )
        }
    })?;
    let ttl = target
        .listed
        .and_then(|resource| resource.spec().poll)
        .map_or(server.list_ttl_ms(), |poll| poll.as_millis() as u64);
    let contents = contents
        .into_iter()
        .map(|content| mcp_resource_contents(content, uri, &target))
        .collect();
    Ok(ReadResourceResult::new(contents)
        .with_ttl_ms(ttl)
        .with_cache_scope(CacheScope::Public))
}

/// `resources/subscribe` of a legacy session: `notifications/resources/updated`
/// follows each change until the client unsubscribes or goes away.
pub(super) fn subscribe(
    server: &WharfServer,
    uri: String,
    peer: rmcp::Peer<RoleServer>,
) -> Result<(), McpError> {
    if server.registry.snapshot().resolve_resource(&uri).is_none() {
        return Err(unknown_resource(&uri));
    }
    let mut subscriptions = server
        .session
        .subscriptions
        .0
        .lock()
        .expect("subscriptions lock");
    if subscriptions.contains_key(&uri) {
        return Ok(());
    }
    let mut changes = server.watch.watch(&uri);
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
pub(super) fn unsubscribe(server: &WharfServer, uri: &str) {
    let task = server
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

fn unknown_resource(uri: &str) -> McpError {
    // -32002 for legacy sessions; rmcp makes it -32602 for 2026-07-28 (SEP-2164).
    McpError::resource_not_found(
        format!("Resource not found: {uri}"),
        Some(json!({ "uri": uri })),
    )
}
