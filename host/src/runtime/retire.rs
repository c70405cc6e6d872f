//! Dropping a finished call's store after its answer has gone out.
//!
//! Dropping a store is real work: the pooled memory's dirty pages are found
//! (`PAGEMAP_SCAN`) and zeroed, the instance's slots go back to the pool and the
//! WASI context is freed. It used to sit between the guest's return and the
//! response, on the caller's path. Now the store is handed to a task that first
//! yields, so the thread writes the answer before it does the drop: the answer
//! no longer waits for it, and the drop runs while the caches are still warm
//! from the call rather than when the next request wakes the thread.
//!
//! A retired store still holds its pool slot until it is dropped. The pool has
//! [`HEADROOM`] slots more than calls may run at once, and no more than that
//! many stores wait at a time: past it, a store is dropped in place, as before.
//! So a call never finds the pool full because of stores waiting to be dropped.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use wasmtime::Store;

use super::state::HostState;

/// Stores that may wait to be dropped at once, and the pool's extra slots for
/// them.
pub(crate) const HEADROOM: usize = 8;

/// Hands finished stores to be dropped once their thread has answered.
#[derive(Clone, Debug, Default)]
pub(crate) struct Retirer {
    waiting: Arc<AtomicUsize>,
}

impl Retirer {
    /// Ends the call in `store` at once (its event channel and input broker go,
    /// so whoever waits on them sees the call end now) and drops the rest soon,
    /// on a task of the current runtime, then runs `then` (the plugin's next
    /// instance is made there, see `Instances::refill`). Without a runtime, or
    /// when [`HEADROOM`] stores already wait, the store is dropped in place and
    /// `then` is dropped unrun.
    pub(crate) fn retire<F>(&self, mut store: Store<HostState>, then: Option<F>)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        store.data_mut().end_call();
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let Some(waiting) = Waiting::reserve(&self.waiting) else {
            return;
        };
        runtime.spawn(async move {
            // Behind everything the thread has to do now, the answer included.
            tokio::task::yield_now().await;
            drop(store);
            drop(waiting);
            if let Some(then) = then {
                then.await;
            }
        });
    }

    /// Stores handed over and not yet dropped.
    #[cfg(test)]
    pub(crate) fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Acquire)
    }
}

/// One store's place in the count; given back even if its task never runs
/// (the runtime shut down first, and the store was dropped with the task).
struct Waiting(Arc<AtomicUsize>);

impl Waiting {
    /// A place in `count`, if fewer than [`HEADROOM`] are taken.
    fn reserve(count: &Arc<AtomicUsize>) -> Option<Self> {
        count
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < HEADROOM).then_some(n + 1)
            })
            .ok()
            .map(|_| Self(count.clone()))
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}
