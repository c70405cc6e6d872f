//! The clients watching for `notifications/tools/list_changed`: a
//! `subscriptions/listen` stream (2026-07-28) or a legacy session, over stdio
//! or HTTP. Each counts what it saw; the churn says what each should see.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// One watching client.
#[derive(Debug)]
pub struct Listener {
    pub name: &'static str,
    seen: AtomicU64,
    /// Cleared if its stream ended before the soak did.
    open: AtomicBool,
}

impl Listener {
    pub fn new(name: &'static str) -> Self {
        Self {
            name,
            seen: AtomicU64::new(0),
            open: AtomicBool::new(true),
        }
    }

    /// Counts one `notifications/tools/list_changed`.
    pub fn saw(&self) {
        self.seen.fetch_add(1, Ordering::Relaxed);
    }

    pub fn seen(&self) -> u64 {
        self.seen.load(Ordering::Relaxed)
    }

    /// Its stream ended (or failed).
    pub fn closed(&self) {
        self.open.store(false, Ordering::Relaxed);
    }

    pub fn is_open(&self) -> bool {
        self.open.load(Ordering::Relaxed)
    }
}
