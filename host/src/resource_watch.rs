//! Notices when a subscribed resource's contents change.
//!
//! A plugin cannot push: it only answers reads. So while anyone subscribes to a
//! URI, one task per URI re-reads it, every `poll-ms` if its plugin asked for
//! that and after every registry swap (a reload may change what a URI
//! returns), and compares a digest of the contents with the last one. Every
//! subscriber (a legacy session's `resources/subscribe`, a listen stream's
//! `resourceSubscriptions`) holds a receiver; the task ends with the last one.

use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;

use crate::registry::Registry;
use crate::runtime::{CallContext, CallFailure, ResourceBody};

/// Re-reads subscribed resources; shared by every session of a server.
pub struct ResourceWatch {
    registry: Arc<Registry>,
    /// One sender per watched URI; its value counts the changes seen.
    watched: Mutex<HashMap<String, watch::Sender<u64>>>,
}

/// What a subscriber holds: `changed()` wakes it after each change.
pub type Changes = watch::Receiver<u64>;

impl ResourceWatch {
    pub fn new(registry: Arc<Registry>) -> Arc<Self> {
        Arc::new(Self {
            registry,
            watched: Mutex::default(),
        })
    }

    /// Starts watching `uri` (an exposed URI), or joins the watch already
    /// running for it.
    pub fn watch(self: &Arc<Self>, uri: &str) -> Changes {
        let mut watched = self.watched.lock().expect("watch lock");
        if let Some(sender) = watched.get(uri) {
            return sender.subscribe();
        }
        let (sender, receiver) = watch::channel(0);
        watched.insert(uri.to_owned(), sender.clone());
        tokio::spawn(self.clone().poll(uri.to_owned(), sender));
        receiver
    }

    /// How many URIs are being watched (for tests and the status page).
    pub fn watched(&self) -> usize {
        self.watched.lock().expect("watch lock").len()
    }

    async fn poll(self: Arc<Self>, uri: String, changes: watch::Sender<u64>) {
        let mut swaps = self.registry.watch_listing();
        swaps.borrow_and_update();
        let mut last = self.digest(&uri).await;
        loop {
            let interval = self.interval(&uri);
            tokio::select! {
                _ = changes.closed() => {
                    // Under the lock, so that no one joins a watch that is ending.
                    let mut watched = self.watched.lock().expect("watch lock");
                    if changes.receiver_count() == 0 {
                        watched.remove(&uri);
                        return;
                    }
                    continue;
                }
                swapped = swaps.changed() => {
                    if swapped.is_err() {
                        return;
                    }
                }
                _ = sleep(interval) => {}
            }
            let now = self.digest(&uri).await;
            match (&last, &now) {
                // The read could not run (busy, timed out): not a change.
                (_, Digest::Unknown) => continue,
                (previous, now) if previous == now => {}
                (Digest::Unknown, _) => {}
                _ => changes.send_modify(|count| *count += 1),
            }
            last = now;
        }
    }

    /// How often to re-read `uri`: its plugin's `poll-ms`, if it is a listed
    /// resource that has one.
    fn interval(&self, uri: &str) -> Option<Duration> {
        let set = self.registry.snapshot();
        set.resolve_resource(uri)?.listed?.spec().poll
    }

    async fn digest(&self, uri: &str) -> Digest {
        let set = self.registry.snapshot();
        let Some(target) = set.resolve_resource(uri) else {
            return Digest::Gone;
        };
        match target
            .plugin
            .read_resource(&target.plugin_uri, CallContext::default())
            .await
        {
            Ok(contents) => {
                let mut hasher = DefaultHasher::new();
                for content in &contents {
                    content.uri.hash(&mut hasher);
                    content.mime_type.hash(&mut hasher);
                    match &content.body {
                        ResourceBody::Text(text) => (0u8, text.as_bytes()).hash(&mut hasher),
                        ResourceBody::Blob(data) => (1u8, data.as_slice()).hash(&mut hasher),
                    }
                }
                Digest::Read(hasher.finish())
            }
            Err(CallFailure::UnknownResource(_)) => Digest::Gone,
            Err(failure) => {
                tracing::debug!(%uri, "re-reading a subscribed resource failed: {failure}");
                Digest::Unknown
            }
        }
    }
}

/// What a read of a watched URI gave, in brief.
#[derive(Debug, PartialEq, Eq)]
enum Digest {
    Read(u64),
    /// Nothing serves it (now): going away is a change too.
    Gone,
    /// The read failed for another reason.
    Unknown,
}

/// Sleeps for `interval`, or forever without one.
async fn sleep(interval: Option<Duration>) {
    match interval {
        Some(interval) => tokio::time::sleep(interval).await,
        None => std::future::pending().await,
    }
}
