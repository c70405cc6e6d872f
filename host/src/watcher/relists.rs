//! Plugins that said their lists changed (`lists.changed`), paced: the
//! reload task re-lists them, like a changed file, one at a time.
//!
//! The runtime sends a plugin's name once per re-listing however often the
//! plugin calls (see `runtime::list_changes`); here each plugin is re-listed
//! at most once per [`MIN_GAP`]: a name that comes sooner waits for its turn.
//! So a plugin calling in a loop costs at most one listing call per gap, on
//! its own time and memory limits, and cannot starve file events or other
//! plugins (the queue holds one entry per plugin).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use crate::runtime::ListChangeReceiver;

/// The least time between two re-listings of one plugin.
pub const MIN_GAP: Duration = Duration::from_millis(500);

/// Names of plugins to re-list, each when its turn comes.
pub struct RelistQueue {
    names: Option<ListChangeReceiver>,
    /// [`MIN_GAP`] (shorter in tests).
    gap: Duration,
    /// When each plugin was last handed out.
    last: HashMap<Arc<str>, Instant>,
    /// Plugins waiting for their turn, and when it comes.
    waiting: HashMap<Arc<str>, Instant>,
}

impl RelistQueue {
    /// Paces the names `names` delivers.
    pub fn new(names: ListChangeReceiver) -> Self {
        Self::with_gap(names, MIN_GAP)
    }

    fn with_gap(names: ListChangeReceiver, gap: Duration) -> Self {
        Self {
            names: Some(names),
            gap,
            last: HashMap::new(),
            waiting: HashMap::new(),
        }
    }

    /// The next plugin to re-list, when its turn has come; never returns once
    /// the runtime is gone and nothing waits. Cancel-safe: the state lives
    /// in `self`, so it may be raced in a `select!`.
    pub async fn next(&mut self) -> Arc<str> {
        loop {
            let now = Instant::now();
            if let Some(name) = self
                .waiting
                .iter()
                .find(|(_, at)| **at <= now)
                .map(|(name, _)| name.clone())
            {
                self.waiting.remove(&name);
                self.last.insert(name.clone(), now);
                return name;
            }
            let turn = self.waiting.values().min().copied();
            tokio::select! {
                name = recv(&mut self.names) => match name {
                    Some(name) => self.arrived(name, now),
                    None => self.names = None,
                },
                _ = sleep_until(turn) => {}
            }
        }
    }

    /// Queues `name` for its turn: now, or a gap after its last one.
    fn arrived(&mut self, name: Arc<str>, now: Instant) {
        let gap = self.gap;
        let turn = self
            .last
            .get(&name)
            .map_or(now, |last| (*last + gap).max(now));
        self.waiting.entry(name).or_insert(turn);
        // Forget turns long past, so the map stays as small as the plugins.
        self.last.retain(|_, last| now.duration_since(*last) < gap);
    }
}

async fn recv(names: &mut Option<ListChangeReceiver>) -> Option<Arc<str>> {
    match names {
        Some(names) => names.recv().await,
        None => std::future::pending().await,
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GAP: Duration = Duration::from_millis(200);

    /// `queue.next()`, and how long it took.
    async fn timed(queue: &mut RelistQueue) -> (String, Duration) {
        let start = Instant::now();
        let name = queue.next().await;
        (name.to_string(), start.elapsed())
    }

    #[tokio::test]
    async fn each_plugin_waits_its_gap_and_others_do_not_wait_for_it() {
        let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
        let mut queue = RelistQueue::with_gap(receiver, GAP);
        let quick = GAP / 4;
        sender.send(Arc::from("a")).unwrap();
        let (name, took) = timed(&mut queue).await;
        assert_eq!((name.as_str(), took < quick), ("a", true));
        // Again at once: a waits for its gap, while b goes first.
        sender.send(Arc::from("a")).unwrap();
        sender.send(Arc::from("b")).unwrap();
        let (name, took) = timed(&mut queue).await;
        assert_eq!((name.as_str(), took < quick), ("b", true));
        let (name, took) = timed(&mut queue).await;
        assert_eq!(name, "a");
        assert!(took >= GAP - quick, "a waited {took:?}");
        // A repeat while waiting is one turn.
        sender.send(Arc::from("a")).unwrap();
        sender.send(Arc::from("a")).unwrap();
        let (name, took) = timed(&mut queue).await;
        assert_eq!(name, "a");
        assert!(took >= GAP - quick, "a waited {took:?}");
        // Long after its last turn, a goes at once.
        tokio::time::sleep(GAP * 2).await;
        sender.send(Arc::from("a")).unwrap();
        let (name, took) = timed(&mut queue).await;
        assert_eq!((name.as_str(), took < quick), ("a", true));
        drop(sender);
        let waited = tokio::time::timeout(GAP * 2, queue.next()).await;
        assert!(waited.is_err(), "nothing more once the sender is gone");
    }
}
