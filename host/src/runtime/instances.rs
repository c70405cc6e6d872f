//! Where a call's instance comes from: made on the spot, or a spare the
//! plugin made ready before the call came.
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
//! A plugin wants one spare. A call that finds none while more are being
//! made (a client with several calls in flight) doubles the number it wants,
//! up to [`MAX_SPARES_PER_PLUGIN`], so a busy plugin's spares are made ahead
//! of its calls, several at a time (see `upkeep`): the plugin asks for more
//! only once it is a quarter short. Spares cost memory (a JavaScript or Python
//! instance is tens of MiB), so a plugin holds no more than its linear memory
//! allows within [`SPARE_BYTES_PER_PLUGIN`] (always one), the whole runtime
//! at most `MAX_SPARES` (the instance pool has that many slots more), and
//! spares nobody takes within the idle time are dropped, and the plugin
//! wants one again: an idle server holds none. A component whose start-up
//! fails gets no spare; its calls make their instances and report the failure.

use std::collections::VecDeque;
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

/// Most spares one plugin keeps.
const MAX_SPARES_PER_PLUGIN: usize = 16;

/// Linear memory one plugin's spares may hold between them, unless one alone
/// is larger.
const SPARE_BYTES_PER_PLUGIN: usize = 16 << 20;

/// A plugin's spares, and how many it wants.
struct SpareSlot {
    /// Ready spares, the oldest first.
    ready: VecDeque<ReadySpare>,
    /// Refills that have claimed a place and are making an instance.
    making: usize,
    /// How many spares the plugin keeps ready, from 1 to `most`.
    wanted: usize,
    /// How many its instances' memory allows (see [`SPARE_BYTES_PER_PLUGIN`]).
    most: usize,
    /// Whether a task watches the spares for idleness.
    watched: bool,
}

struct ReadySpare {
    spare: Spare,
    since: Instant,
}

impl SpareSlot {
    /// Spares ready and under way.
    fn planned(&self) -> usize {
        self.ready.len() + self.making
    }
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
                ready: VecDeque::new(),
                making: 0,
                wanted: 1,
                most: MAX_SPARES_PER_PLUGIN,
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

    /// A spare, handed to the call `ctx`; `ctx` back if there is none.
    pub(crate) fn take_spare(
        &self,
        ctx: CallContext,
    ) -> Result<(Store<HostState>, Instance), CallContext> {
        let taken = {
            let mut slot = self.spare.lock().expect("spare lock");
            match slot.ready.pop_front() {
                Some(ready) => ready.spare,
                None => {
                    // Calls come faster than spares are made: want more.
                    if slot.making > 0 {
                        slot.wanted = (slot.wanted * 2).min(slot.most);
                    }
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

    /// Work that makes this plugin's next instances, for after a call: none
    /// unless it is short of a quarter of the spares it wants (or of its only
    /// one), and no more than the runtime has places for.
    pub(crate) fn refill(self: &Arc<Self>) -> Vec<Refill> {
        let mut slot = self.spare.lock().expect("spare lock");
        let short = slot.wanted.saturating_sub(slot.planned());
        if short == 0 || short < slot.wanted.div_ceil(4) {
            return Vec::new();
        }
        let Some(budget) = &self.budget else {
            return Vec::new();
        };
        let refills: Vec<Refill> = std::iter::from_fn(|| budget.try_take())
            .take(short)
            .map(|place| Refill {
                instances: Arc::downgrade(self),
                place: Some(place),
            })
            .collect();
        slot.making += refills.len();
        refills
    }

    /// Whether the plugin's calls come faster than one spare serves them (it
    /// wants more than one): its upkeep then goes to the upkeep thread.
    pub(crate) fn is_busy(&self) -> bool {
        self.spare.lock().expect("spare lock").wanted > 1
    }

    /// Whether a spare is ready now.
    #[cfg(test)]
    pub(crate) fn has_spare(&self) -> bool {
        self.spares() > 0
    }

    /// How many spares are ready now.
    #[cfg(test)]
    pub(crate) fn spares(&self) -> usize {
        self.spare.lock().expect("spare lock").ready.len()
    }

    /// Puts a made instance in place, and starts the idle check if none runs.
    fn put(self: &Arc<Self>, spare: Spare, memory_bytes: usize) {
        let since = Instant::now();
        let mut slot = self.spare.lock().expect("spare lock");
        slot.making = slot.making.saturating_sub(1);
        slot.most = (SPARE_BYTES_PER_PLUGIN / memory_bytes.max(1)).clamp(1, MAX_SPARES_PER_PLUGIN);
        slot.wanted = slot.wanted.min(slot.most);
        slot.ready.push_back(ReadySpare { spare, since });
        if !std::mem::replace(&mut slot.watched, true) {
            tokio::spawn(expire_when_idle(Arc::downgrade(self), since + self.idle));
        }
    }

    /// A refill that made nothing gives up its claim.
    fn unclaim(&self) {
        let mut slot = self.spare.lock().expect("spare lock");
        slot.making = slot.making.saturating_sub(1);
    }
}

/// Drops `instances`' spares once they have waited their idle time, oldest
/// first (calls take the oldest too, so a busy plugin's spares never wait
/// that long); a plugin left with none wants one again. The check ends when
/// the plugin has no spare, or is gone.
async fn expire_when_idle(instances: Weak<Instances>, mut due: Instant) {
    loop {
        tokio::time::sleep_until(due.into()).await;
        let Some(instances) = instances.upgrade() else {
            return;
        };
        let mut slot = instances.spare.lock().expect("spare lock");
        let mut expired = Vec::new();
        while let Some(oldest) = slot.ready.front() {
            if oldest.since.elapsed() < instances.idle {
                break;
            }
            expired.extend(slot.ready.pop_front());
        }
        let next = slot
            .ready
            .front()
            .map(|oldest| oldest.since + instances.idle);
        if !expired.is_empty() && slot.ready.is_empty() {
            slot.wanted = 1;
        }
        if next.is_none() {
            slot.watched = false;
        }
        drop(slot);
        if !expired.is_empty() {
            tracing::debug!(plugin = %instances.name, count = expired.len(), "unused spare instances were dropped");
        }
        drop(expired);
        match next {
            Some(next) => due = next,
            None => return,
        }
    }
}

/// Makes one of a plugin's next instances (see [`Instances::refill`]) in the
/// place it took for it; gives the place back if it ends without a spare (the
/// start-up failed, or it was dropped before it ran).
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
                let memory_bytes = store.data().limits.memory_bytes();
                instances.put(
                    Spare {
                        store,
                        instance,
                        started_in: started.elapsed(),
                        _place: place,
                    },
                    memory_bytes,
                );
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
            instances.unclaim();
        }
    }
}

#[cfg(test)]
mod tests;
