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
//! [`RETIRE_HEADROOM`] slots more than calls may run at once, and no more than that
//! many stores wait at a time: past it, a store is dropped in place, as before.
//! So a call never finds the pool full because of stores waiting to be dropped.

use wasmtime::Store;

use super::admission::CallSlots;
use super::limits::RETIRE_HEADROOM;
use super::state::HostState;

/// Hands finished stores to be dropped once their thread has answered.
#[derive(Clone, Debug)]
pub(crate) struct Retirer {
    /// A place for each store that waits.
    waiting: CallSlots,
}

impl Default for Retirer {
    fn default() -> Self {
        Self {
            waiting: CallSlots::new(RETIRE_HEADROOM),
        }
    }
}

impl Retirer {
    /// Ends the call in `store` at once (its event channel and input broker go,
    /// so whoever waits on them sees the call end now) and drops the rest soon,
    /// on a task of the current runtime, then runs the future `then` makes
    /// (the plugin's next instance is made there, see `Instances::refill`).
    /// Without a runtime, or when [`RETIRE_HEADROOM`] stores already wait, the store
    /// is dropped in place and `then` is dropped unrun.
    ///
    /// `then` makes its future on the task rather than being one: a future
    /// held by the task and then awaited takes its room twice, and the task is
    /// made (and moved) once per call.
    pub(crate) fn retire<M, F>(&self, mut store: Store<HostState>, then: Option<M>)
    where
        M: FnOnce() -> F + Send + 'static,
        F: Future<Output = ()> + Send + 'static,
    {
        store.data_mut().end_call();
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        // The place is given back even if the task never runs (the runtime
        // shut down first, and the store went with the task).
        let Some(waiting) = self.waiting.try_take() else {
            return;
        };
        runtime.spawn(async move {
            // Behind everything the thread has to do now, the answer included.
            tokio::task::yield_now().await;
            drop(store);
            drop(waiting);
            if let Some(then) = then {
                then().await;
            }
        });
    }

    /// Stores handed over and not yet dropped.
    #[cfg(test)]
    pub(crate) fn waiting(&self) -> usize {
        self.waiting.taken()
    }
}
