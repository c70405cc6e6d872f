//! A plugin saying that its lists changed (`wharf:plugin/lists.changed`):
//! tools that come from its configuration or a remote catalogue, say.
//!
//! Strategy: each plugin's sandbox holds a [`ListSignal`], the lists it
//! flagged and not yet re-listed. The first flag after a re-listing sends the
//! plugin's name on the runtime's channel; later ones only add to the flags,
//! so a plugin calling in a loop sends one message per re-listing, and the
//! channel holds at most one message per plugin. Whoever takes the channel
//! ([`Runtime::take_list_changes`]; `watcher::relists` in `wharf serve`)
//! re-lists the plugin ([`Plugin::relisted`](super::Plugin::relisted)),
//! at its own pace, and swaps the result in; with nobody taking it (a
//! one-shot `wharf call`), the messages are dropped with the channel.
//!
//! The import needs no grant: it only makes Wharf ask the plugin again what
//! it already may say at load, on the plugin's own time and memory limits.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use tokio::sync::mpsc;

use super::Runtime;

/// The tools list.
pub const TOOLS: u8 = 1;
/// The prompts list.
pub const PROMPTS: u8 = 2;
/// The resources and resource templates.
pub const RESOURCES: u8 = 4;

/// The receiving end: names of plugins with lists to ask for again.
pub type ListChangeReceiver = mpsc::UnboundedReceiver<Arc<str>>;

/// The runtime's channel of plugins whose lists changed.
pub(crate) struct ListChanges {
    sender: mpsc::UnboundedSender<Arc<str>>,
    receiver: std::sync::Mutex<Option<ListChangeReceiver>>,
}

impl Default for ListChanges {
    fn default() -> Self {
        let (sender, receiver) = mpsc::unbounded_channel();
        Self {
            sender,
            receiver: std::sync::Mutex::new(Some(receiver)),
        }
    }
}

impl ListChanges {
    /// A signal for the plugin `name`, sending on this channel.
    pub(crate) fn signal(&self, name: Arc<str>) -> ListSignal {
        ListSignal {
            plugin: name,
            pending: AtomicU8::new(0),
            sender: Some(self.sender.clone()),
        }
    }
}

impl Runtime {
    /// The names of plugins that said their lists changed, each sent once
    /// until it is re-listed; `None` after the first call (one consumer).
    pub fn take_list_changes(&self) -> Option<ListChangeReceiver> {
        self.list_changes
            .receiver
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take()
    }
}

/// The lists one plugin flagged as changed and not yet re-listed.
#[derive(Debug, Default)]
pub(crate) struct ListSignal {
    plugin: Arc<str>,
    pending: AtomicU8,
    /// `None`: a sandbox outside a runtime (tests); flags are only kept.
    sender: Option<mpsc::UnboundedSender<Arc<str>>>,
}

impl ListSignal {
    /// Flags `which` (bits of [`TOOLS`], [`PROMPTS`], [`RESOURCES`]); the
    /// first flag since the last [`take`](Self::take) sends the plugin's name.
    pub(crate) fn raise(&self, which: u8) {
        if which == 0 {
            return;
        }
        let before = self.pending.fetch_or(which, Ordering::AcqRel);
        if before == 0
            && let Some(sender) = &self.sender
        {
            // Closed: nobody re-lists in this process; the flag stays.
            let _ = sender.send(self.plugin.clone());
        }
    }

    /// The flagged lists, cleared: a flag raised from now on sends again.
    pub(crate) fn take(&self) -> u8 {
        self.pending.swap(0, Ordering::AcqRel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_merge_and_one_message_is_sent_per_relisting() {
        let changes = ListChanges::default();
        let mut receiver = changes.receiver.lock().unwrap().take().unwrap();
        let signal = changes.signal("catalogue".into());
        signal.raise(0);
        assert!(receiver.try_recv().is_err());
        for _ in 0..1000 {
            signal.raise(TOOLS);
        }
        signal.raise(PROMPTS);
        assert_eq!(receiver.try_recv().as_deref(), Ok("catalogue"));
        assert!(receiver.try_recv().is_err(), "one message for the burst");
        assert_eq!(signal.take(), TOOLS | PROMPTS);
        assert_eq!(signal.take(), 0);
        signal.raise(RESOURCES);
        assert_eq!(receiver.try_recv().as_deref(), Ok("catalogue"));
        assert_eq!(signal.take(), RESOURCES);
    }

    #[test]
    fn the_channel_has_one_consumer() {
        let changes = ListChanges::default();
        assert!(changes.receiver.lock().unwrap().take().is_some());
        assert!(changes.receiver.lock().unwrap().take().is_none());
        // Nobody listening: raising is still harmless.
        let signal = changes.signal("p".into());
        signal.raise(TOOLS);
        assert_eq!(signal.take(), TOOLS);
    }
}
