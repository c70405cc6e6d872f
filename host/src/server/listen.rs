//! Telling clients that something changed: the `subscriptions/listen` stream
//! of 2026-07-28 (list changes, watched resources, and watched tasks through
//! `listen_tasks`), and the unsolicited list_changed notifications of a
//! legacy session.

use rmcp::model::SubscriptionFilter;
use rmcp::service::SubscriptionContext;
use rmcp::{ErrorData as McpError, RoleServer};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::listen_tasks::WatchedTasks;
use super::{SESSION_CHECK, WharfServer};
use crate::registry::ListingVersions;

/// What of a listen request Wharf serves: every list changes here, and
/// resources Wharf can resolve now may be watched; rmcp intersects this with
/// the request and the advertised capabilities before acknowledging.
pub(super) fn accepted_filter(
    server: &WharfServer,
    requested: &SubscriptionFilter,
) -> SubscriptionFilter {
    let set = server.registry.snapshot();
    let mut accepted = SubscriptionFilter::new();
    accepted.tools_list_changed = requested.tools_list_changed.filter(|&wanted| wanted);
    accepted.prompts_list_changed = requested.prompts_list_changed.filter(|&wanted| wanted);
    accepted.resources_list_changed = requested.resources_list_changed.filter(|&wanted| wanted);
    accepted.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
        uris.iter()
            .filter(|uri| set.resolve_resource(uri).is_some())
            .cloned()
            .collect()
    });
    accepted
}

/// Serves a listen stream until the client closes it or the stream breaks.
pub(super) async fn listen(
    server: &WharfServer,
    subscription: SubscriptionContext,
) -> Result<(), McpError> {
    let accepted = subscription.accepted();
    let wants_tools = accepted.tools_list_changed == Some(true);
    let wants_prompts = accepted.prompts_list_changed == Some(true);
    let wants_resources = accepted.resources_list_changed == Some(true);
    let uris = accepted.resource_subscriptions.clone().unwrap_or_default();
    let mut tasks = WatchedTasks::of(&server.tasks, subscription.request_context());
    if !wants_tools && !wants_prompts && !wants_resources && uris.is_empty() && tasks.is_none() {
        subscription.cancelled().await;
        return Ok(());
    }
    // A task named on the stream is sent as it is now first: it may have
    // changed (or ended) before the stream opened.
    if let Some(tasks) = &mut tasks
        && let Err(error) = tasks.send_all().await
    {
        tracing::debug!("listen stream closed: {error}");
        return Ok(());
    }
    // Each watched URI's changes, merged into one channel; the forwarders
    // (and with them the watches) end with the stream.
    let (updated_tx, mut updated) = mpsc::channel::<String>(16);
    let mut forwarders = JoinSet::new();
    for uri in uris {
        let mut changes = server.watch.watch(&uri);
        let updated_tx = updated_tx.clone();
        forwarders.spawn(async move {
            while changes.changed().await.is_ok() {
                if updated_tx.send(uri.clone()).await.is_err() {
                    return;
                }
            }
        });
    }
    drop(updated_tx);
    let mut listing = server.registry.watch_listing();
    let mut seen = *listing.borrow_and_update();
    loop {
        let sink = subscription.sink();
        let sent = tokio::select! {
            _ = subscription.cancelled() => return Ok(()),
            Some(uri) = updated.recv() => sink.notify_resource_updated(uri).await,
            due = next_task(&mut tasks) => {
                let Some(tasks) = &mut tasks else { continue };
                if let Err(error) = tasks.send(due).await {
                    tracing::debug!("listen stream closed: {error}");
                    return Ok(());
                }
                Ok(())
            }
            changed = listing.changed() => {
                if changed.is_err() {
                    return Ok(());
                }
                let now = *listing.borrow_and_update();
                let mut sent = Ok(());
                if wants_tools && now.tools != seen.tools {
                    sent = sink.notify_tool_list_changed().await;
                }
                if sent.is_ok() && wants_prompts && now.prompts != seen.prompts {
                    sent = sink.notify_prompt_list_changed().await;
                }
                if sent.is_ok() && wants_resources && now.resources != seen.resources {
                    sent = sink.notify_resource_list_changed().await;
                }
                seen = now;
                sent
            }
        };
        if let Err(error) = sent {
            tracing::debug!("listen stream closed: {error}");
            return Ok(());
        }
    }
}

/// The next change of a watched task; never, when the stream watches none.
async fn next_task(tasks: &mut Option<WatchedTasks>) -> super::listen_tasks::Due {
    match tasks {
        Some(tasks) => tasks.next().await,
        None => std::future::pending().await,
    }
}

/// A legacy client, once initialized, learns of changes from unsolicited
/// list_changed notifications for as long as its session lasts.
pub(super) fn notify_legacy_session(server: &WharfServer, peer: rmcp::Peer<RoleServer>) {
    let mut listing = server.registry.watch_listing();
    let mut seen = *listing.borrow_and_update();
    tokio::spawn(async move {
        // rmcp has no "closed" future; a slow poll ends the task for a session
        // that went away while nothing changed.
        let mut check = tokio::time::interval(SESSION_CHECK);
        loop {
            tokio::select! {
                changed = listing.changed() => {
                    if changed.is_err() || peer.is_transport_closed() {
                        break;
                    }
                    let now = *listing.borrow_and_update();
                    if notify_legacy(&peer, seen, now).await.is_err() {
                        break;
                    }
                    seen = now;
                }
                _ = check.tick() => {
                    if peer.is_transport_closed() {
                        break;
                    }
                }
            }
        }
    });
}

/// Tells a legacy session which listings moved from `seen` to `now`.
async fn notify_legacy(
    peer: &rmcp::Peer<RoleServer>,
    seen: ListingVersions,
    now: ListingVersions,
) -> Result<(), rmcp::ServiceError> {
    if now.tools != seen.tools {
        peer.notify_tool_list_changed().await?;
    }
    if now.prompts != seen.prompts {
        peer.notify_prompt_list_changed().await?;
    }
    if now.resources != seen.resources {
        peer.notify_resource_list_changed().await?;
    }
    Ok(())
}
