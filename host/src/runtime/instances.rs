//! Where a call's instance comes from: made on the spot, or the spare the
//! plugin made ready after its last call.
//!
//! Every call runs in an instance no other call has used (see ARCHITECTURE.md), and
//! making one (a store, its WASI context, instantiation) used to sit on every
//! call's path. Once a call has answered, its plugin now makes its next
//! instance in the time the client takes to send the next request, and that
//! call takes it. A spare is still fresh: it was made with no caller, has run
//! nothing but the component's own start-up, and goes to exactly one call.
//! That call gets what it would have had after making the instance itself:
//! the fuel its start-up left, and a clock that counts the start-up's time.
//!
//! Spares cost memory (a JavaScript or Python instance is tens of MiB), so a
//! plugin has at most one, the whole runtime at most `MAX_SPARES` (the
//! instance pool has that many slots more), and one nobody takes within the
//! idle time is dropped: an idle server holds none. A component whose start-up
//! fails gets no spare; its calls make their instances and report the failure.

use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use wasmtime::Engine;
use wasmtime::Store;
use wasmtime::component::{Instance, InstancePre};

use super::admission::{CallSlots, Slot};
use super::epoch::EpochTicker;
use super::failure::CallFailure;
use super::guard::{Guarded, guarded};
use super::placement::Placement;
use super::state::{CallContext, HostState, Sandbox};
use super::store::call_store;

/// Makes a plugin's instances, each in its own store, and keeps its spare.
pub(crate) struct Instances {
    pub(crate) name: Arc<str>,
    engine: Engine,
    pub(crate) sandbox: Arc<Sandbox>,
    pre: InstancePre<HostState>,
    pub(crate) placement: Placement,
    /// Ticks while any of the stores made here exists.
    epoch: Arc<EpochTicker>,
    spare: Mutex<SpareSlot>,
    /// The runtime's places for spares, shared by every plugin; `None` if it
    /// keeps none.
    budget: Option<CallSlots>,
    idle: Duration,
}

/// A plugin's spare, and whether a task watches it for idleness.
struct SpareSlot {
    state: SpareState,
    watched: bool,
}

/// A plugin's spare, or what is happening to it.
enum SpareState {
    Empty,
    /// A refill has claimed the place and is making the instance.
    Preparing,
    Ready {
        spare: Spare,
        since: Instant,
    },
}

/// An instance made ready for the next call, and its place in the budget.
struct Spare {
    store: Store<HostState>,
    instance: Instance,
    /// How long its start-up took, which its call's time limit includes.
    started_in: Duration,
    _place: Slot,
}

/// What a plugin needs to make instances, besides the compiled component.
#[derive(Clone)]
pub(crate) struct InstanceSettings {
    pub(crate) engine: Engine,
    pub(crate) epoch: Arc<EpochTicker>,
    pub(crate) placement: Placement,
    /// The runtime's places for spares, if it keeps any.
    pub(crate) budget: Option<CallSlots>,
    /// How long an untaken spare is kept.
    pub(crate) idle: Duration,
}

impl Instances {
    pub(crate) fn new(
        name: Arc<str>,
        sandbox: Arc<Sandbox>,
        pre: InstancePre<HostState>,
        settings: InstanceSettings,
    ) -> Self {
        Self {
            name,
            engine: settings.engine,
            sandbox,
            pre,
            placement: settings.placement,
            epoch: settings.epoch,
            spare: Mutex::new(SpareSlot {
                state: SpareState::Empty,
                watched: false,
            }),
            budget: settings.budget,
            idle: settings.idle,
        }
    }

    /// The engine that compiled the component.
    pub(crate) fn engine(&self) -> &Engine {
        &self.engine
    }

    /// A new store with this plugin's limits and grants, set up for a call
    /// with `ctx`.
    pub(crate) fn new_store(&self, ctx: CallContext) -> Result<Store<HostState>, CallFailure> {
        call_store(
            &self.engine,
            self.name.clone(),
            &self.sandbox,
            ctx,
            &self.epoch,
        )
    }

    /// Instantiates the component in `store`, within the plugin's time limit.
    ///
    /// wasmtime's instantiation future is over a kilobyte, and every future
    /// that awaits it inline grows by it (an async fn holds its argument and
    /// its awaitee side by side, so `guarded` and each caller up to the spawned
    /// task doubled it again). Every call moves those futures several times,
    /// and the task that retires a store and makes the next spare was 11 KiB.
    /// Boxed, it is copied once.
    pub(crate) async fn instantiate(
        &self,
        store: &mut Store<HostState>,
    ) -> Guarded<wasmtime::Result<Instance>> {
        let cancel = store.data().call_cancel();
        let instantiating = Box::pin(self.pre.instantiate_async(&mut *store));
        guarded(&cancel, self.sandbox.limits.timeout, instantiating).await
    }

    /// The spare, handed to the call `ctx`; `ctx` back if there is none.
    pub(crate) fn take_spare(
        &self,
        ctx: CallContext,
    ) -> Result<(Store<HostState>, Instance), CallContext> {
        let taken = {
            let mut slot = self.spare.lock().expect("spare lock");
            match std::mem::replace(&mut slot.state, SpareState::Empty) {
                SpareState::Ready { spare, .. } => spare,
                other => {
                    slot.state = other;
                    return Err(ctx);
                }
            }
        };
        let Spare {
            mut store,
            instance,
            started_in,
            _place,
        } = taken;
        // The deadline counts epochs from now; the epoch moved on meanwhile.
        store.set_epoch_deadline(1);
        store.data_mut().begin_call(ctx, started_in);
        Ok((store, instance))
    }

    /// Work that makes this plugin's next instance, for after a call: `None`
    /// if it has one, one is being made, or the runtime holds all the spares
    /// it may.
    pub(crate) fn refill(self: &Arc<Self>) -> Option<Refill> {
        let mut slot = self.spare.lock().expect("spare lock");
        if !matches!(slot.state, SpareState::Empty) {
            return None;
        }
        let place = self.budget.as_ref()?.try_take()?;
        slot.state = SpareState::Preparing;
        Some(Refill {
            instances: Arc::downgrade(self),
            place: Some(place),
        })
    }

    /// Whether a spare is ready now.
    #[cfg(test)]
    pub(crate) fn has_spare(&self) -> bool {
        matches!(
            self.spare.lock().expect("spare lock").state,
            SpareState::Ready { .. }
        )
    }

    /// Puts a made instance in place, and starts the idle check if none runs.
    fn put(self: &Arc<Self>, spare: Spare) {
        let since = Instant::now();
        let mut slot = self.spare.lock().expect("spare lock");
        slot.state = SpareState::Ready { spare, since };
        if !std::mem::replace(&mut slot.watched, true) {
            tokio::spawn(expire_when_idle(Arc::downgrade(self), since + self.idle));
        }
    }
}

/// Drops `instances`' spare once it has waited its idle time. A spare taken
/// and made again in the meantime moves the check on; the check ends when the
/// plugin has no spare, or is gone.
async fn expire_when_idle(instances: Weak<Instances>, mut due: Instant) {
    loop {
        tokio::time::sleep_until(due.into()).await;
        let Some(instances) = instances.upgrade() else {
            return;
        };
        let mut slot = instances.spare.lock().expect("spare lock");
        let since = match &slot.state {
            SpareState::Ready { since, .. } => *since,
            SpareState::Empty | SpareState::Preparing => {
                slot.watched = false;
                return;
            }
        };
        if since.elapsed() < instances.idle {
            due = since + instances.idle;
            continue;
        }
        let expired = std::mem::replace(&mut slot.state, SpareState::Empty);
        slot.watched = false;
        drop(slot);
        drop(expired);
        tracing::debug!(plugin = %instances.name, "an unused spare instance was dropped");
        return;
    }
}

/// Makes a plugin's next instance (see [`Instances::refill`]) in the place it
/// took for it; gives the place back if it ends without a spare (the start-up
/// failed, or it was dropped before it ran).
pub(crate) struct Refill {
    instances: Weak<Instances>,
    place: Option<Slot>,
}

impl Refill {
    /// Makes the instance where the plugin's placement says (a start-up that
    /// runs long moves to the workers) and puts it in place. A start-up that
    /// fails leaves the plugin without a spare; the next call makes its own
    /// instance and reports why.
    pub(crate) async fn run(mut self) {
        let Some(instances) = self.instances.upgrade() else {
            return;
        };
        let mut store = match instances.new_store(CallContext::default()) {
            Ok(store) => store,
            Err(error) => {
                tracing::debug!(plugin = %instances.name, "no spare instance: {error}");
                return;
            }
        };
        let ticks = store.data().epoch_ticks.clone();
        let making = instances.clone();
        let started = Instant::now();
        let (store, outcome) = instances
            .placement
            .run(&ticks, async move {
                let outcome = making.instantiate(&mut store).await;
                (store, outcome)
            })
            .await;
        match outcome {
            Guarded::Done(Ok(instance)) => {
                let place = self
                    .place
                    .take()
                    .expect("a refill holds its place until done");
                instances.put(Spare {
                    store,
                    instance,
                    started_in: started.elapsed(),
                    _place: place,
                });
            }
            _ => {
                tracing::debug!(plugin = %instances.name, "no spare instance: its start-up failed")
            }
        }
    }
}

impl Drop for Refill {
    fn drop(&mut self) {
        if self.place.is_none() {
            return;
        }
        if let Some(instances) = self.instances.upgrade() {
            let mut slot = instances.spare.lock().expect("spare lock");
            if matches!(slot.state, SpareState::Preparing) {
                slot.state = SpareState::Empty;
            }
        }
    }
}

#[cfg(test)]
mod tests;
