//! Dropping a finished call's store after its answer has gone out.
//!
//! Dropping a store is real work: the pooled memory's dirty pages are found
//! (`PAGEMAP_SCAN`, or the last scan's pages when the process has taken no
//! page fault since) and zeroed, the instance's slots go back to the pool and the
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

use std::sync::Arc;

use wasmtime::Store;

use super::admission::CallSlots;
use super::instances::Refill;
use super::limits::RETIRE_HEADROOM;
use super::placement::Placement;
use super::state::HostState;
use super::upkeep::{Retired, Upkeep};

/// Hands finished stores to be dropped once their thread has answered.
#[derive(Clone)]
pub(crate) struct Retirer {
    /// A place for each store that waits.
    waiting: CallSlots,
    /// Where stores go to be dropped, and spares to be made, where the
    /// placement has workers (see `upkeep`); else a task of the caller's runtime.
    upkeep: Option<Arc<Upkeep>>,
}

impl Default for Retirer {
    fn default() -> Self {
        Self::new(&Placement::Caller)
    }
}

impl Retirer {
    pub(crate) fn new(placement: &Placement) -> Self {
        let upkeep = match placement {
            Placement::Caller => None,
            Placement::MoveLongCalls(workers) => Some(Arc::new(Upkeep::new(workers.clone()))),
        };
        Self {
            waiting: CallSlots::new(RETIRE_HEADROOM),
            upkeep,
        }
    }

    /// Ends the call in `store` at once (its event channel and input broker go,
    /// so whoever waits on them sees the call end now) and drops the rest soon,
    /// then makes `refills` (the plugin's next instances, see
    /// `Instances::refill`): on the upkeep thread if the plugin is `busy` and
    /// there is one, else on a task of the current runtime. Without a
    /// runtime, or when [`RETIRE_HEADROOM`] stores already wait, the store is
    /// dropped in place and `refills` unmade.
    pub(crate) fn retire(&self, mut store: Store<HostState>, refills: Vec<Refill>, busy: bool) {
        store.data_mut().end_call();
        // The place is given back even if the store is never dropped where
        // it was sent (the runtime shut down first, and the store went with it).
        let Some(place) = self.waiting.try_take() else {
            return;
        };
        let mut retired = Retired {
            store,
            place,
            refills,
        };
        if let Some(upkeep) = self.upkeep.as_ref().filter(|_| busy) {
            match upkeep.hand_over(retired) {
                Ok(()) => return,
                Err(back) => retired = back,
            }
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            let Retired {
                store,
                place,
                refills,
            } = retired;
            // Behind everything the thread has to do now, the answer included.
            tokio::task::yield_now().await;
            drop(store);
            drop(place);
            for refill in refills {
                refill.run().await;
            }
        });
    }

    /// Stores handed over and not yet dropped.
    #[cfg(test)]
    pub(crate) fn waiting(&self) -> usize {
        self.waiting.taken()
    }
}
