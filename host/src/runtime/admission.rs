//! Concurrency limits: how many calls may run at once, per plugin and overall.
//!
//! Decision: a call over a limit is refused at once with an error that names the
//! limit, rather than queued. A queue would hide overload behind growing latency
//! (MCP clients have their own timeouts) and hold requests in memory; an immediate
//! error lets the model or client retry or back off. The only waiters are plugin
//! loads (listing tools), which must not fail because calls are busy.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// A fixed number of slots for running calls.
#[derive(Debug, Clone)]
pub(crate) struct CallSlots {
    semaphore: Arc<Semaphore>,
    limit: usize,
}

/// A taken slot; the slot is free again when this is dropped.
#[derive(Debug)]
pub(crate) struct Slot {
    _permit: OwnedSemaphorePermit,
}

impl CallSlots {
    pub(crate) fn new(limit: usize) -> Self {
        let limit = limit.max(1);
        Self {
            semaphore: Arc::new(Semaphore::new(limit)),
            limit,
        }
    }

    /// How many calls may hold a slot at once.
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// How many slots are taken now.
    #[cfg(test)]
    pub(crate) fn taken(&self) -> usize {
        self.limit - self.semaphore.available_permits()
    }

    /// A slot if one is free now.
    pub(crate) fn try_take(&self) -> Option<Slot> {
        self.semaphore
            .clone()
            .try_acquire_owned()
            .ok()
            .map(|permit| Slot { _permit: permit })
    }

    /// A slot, waiting for one if all are taken.
    pub(crate) async fn take(&self) -> Slot {
        let permit = self.semaphore.clone().acquire_owned().await;
        Slot {
            _permit: permit.expect("call slots are never closed"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_past_the_limit_and_frees_on_drop() {
        let slots = CallSlots::new(2);
        let a = slots.try_take().unwrap();
        let _b = slots.try_take().unwrap();
        assert!(slots.try_take().is_none());
        drop(a);
        assert!(slots.try_take().is_some());
        assert_eq!(slots.limit(), 2);
    }
}
