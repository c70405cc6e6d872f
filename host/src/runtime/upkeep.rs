//! A thread of its own for the instances' upkeep: dropping finished calls'
//! stores and making plugins' spares, off the thread that serves.
//!
//! Both are real work, a few microseconds each per call (a store's drop
//! finds its dirty pages and zeroes them, an instantiation resolves the
//! component's imports), and on a serving thread they sat between one
//! pipelined call and the next. Handing each piece to another thread as it
//! came cost more than it saved: the thread fell asleep after every piece,
//! and each wake-up is a futex call on the serving side and a context switch
//! on the other. So the work is handed over in batches: stores wait until
//! [`DROP_BATCH`] of them do (or [`LINGER`] has passed), and a plugin asks
//! for spares only once it is a quarter short of the number it wants (see
//! `instances`), so one wake-up serves several calls. The thread is
//! woken only when it sleeps and a batch is due, and it sleeps only once
//! nothing is left to do.
//!
//! Only a busy plugin's calls use it (see `instances`): a client that waits
//! for each answer leaves the serving thread time to do the upkeep itself
//! after the answer, with no wake-up at all.
//!
//! It runs inside the workers' runtime (stores' WASI parts and the spares'
//! idle checks need one), and it is started on first use: a server that never
//! serves a call has no such thread.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use tokio::runtime::Handle;
use wasmtime::{FaultCount, Store};

use super::admission::Slot;
use super::instances::Refill;
use super::state::HostState;

/// Stores that wait together before the thread is woken to drop them.
const DROP_BATCH: usize = 4;

/// How long fewer than [`DROP_BATCH`] stores wait before they are dropped
/// anyway: a store holds its pool slot and its memory until then.
const LINGER: Duration = Duration::from_millis(2);

/// Upkeep threads of the process in use: working, or waiting [`LINGER`]
/// for more after a batch, rather than asleep until woken.
static WORKING: AtomicUsize = AtomicUsize::new(0);

/// Whether an upkeep thread is in use now, i.e. a plugin's calls come
/// faster than they are answered: the stdio busy-poll then gives way (see
/// `stdio::busy_poll`), so the upkeep thread has a CPU on a busy machine.
pub fn is_working() -> bool {
    WORKING.load(Ordering::Relaxed) > 0
}

/// Counts its thread in [`WORKING`] while it lives.
struct Working;

impl Working {
    fn new() -> Self {
        WORKING.fetch_add(1, Ordering::Relaxed);
        Self
    }
}

impl Drop for Working {
    fn drop(&mut self) {
        WORKING.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A finished call's store, its place among the stores that may wait to be
/// dropped, and the spares its plugin asked for after it.
pub(crate) struct Retired {
    pub(crate) store: Store<HostState>,
    pub(crate) place: Slot,
    pub(crate) refills: Vec<Refill>,
}

/// The upkeep thread's queue; the thread itself starts on first use.
pub(crate) struct Upkeep {
    shared: Arc<Shared>,
    runtime: Handle,
    /// Whether the thread was started (set once, on first use).
    started: OnceLock<bool>,
}

struct Shared {
    jobs: Mutex<Jobs>,
    wake: Condvar,
}

/// How the thread waits, which says when it must be woken.
#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum Sleep {
    #[default]
    Awake,
    /// Until [`LINGER`] has passed: woken only for a batch.
    Lingering,
    /// Until woken: woken for any store or refill.
    Deep,
}

#[derive(Default)]
struct Jobs {
    /// Finished stores, each with its place among those that may wait.
    stores: Vec<(Store<HostState>, Slot)>,
    refills: Vec<Refill>,
    sleep: Sleep,
    /// The owner is gone: the thread finishes what it has and ends.
    closed: bool,
}

impl Upkeep {
    /// Upkeep that runs in `runtime`'s context.
    pub(crate) fn new(runtime: Handle) -> Self {
        Self {
            shared: Arc::new(Shared {
                jobs: Mutex::new(Jobs::default()),
                wake: Condvar::new(),
            }),
            runtime,
            started: OnceLock::new(),
        }
    }

    /// Queues a finished call's store to be dropped and its plugin's
    /// refills to be made; gives them back if the thread could not be started.
    pub(crate) fn hand_over(&self, retired: Retired) -> Result<(), Retired> {
        if !self.start() {
            return Err(retired);
        }
        let Retired {
            store,
            place,
            refills,
        } = retired;
        let mut jobs = self.lock();
        jobs.stores.push((store, place));
        jobs.refills.extend(refills);
        let wake = match jobs.sleep {
            Sleep::Awake => false,
            Sleep::Lingering => jobs.is_due(),
            Sleep::Deep => true,
        };
        if wake {
            // In use from now, before the thread runs: a spin that gave
            // way only once it runs would hold the CPU it needs.
            jobs.wake_up();
            drop(jobs);
            self.shared.wake.notify_one();
        }
        Ok(())
    }

    /// Starts the thread if it has not been; false if it cannot be. Once:
    /// two serving threads that come at the same moment start one thread,
    /// and a thread that could not be started is not tried for each call.
    fn start(&self) -> bool {
        *self.started.get_or_init(|| {
            let shared = self.shared.clone();
            let runtime = self.runtime.clone();
            let spawned = std::thread::Builder::new()
                .name("wharf-upkeep".into())
                .spawn(move || work(&shared, &runtime));
            spawned
                .inspect_err(|error| {
                    tracing::warn!("no upkeep thread, stores are dropped in place: {error}");
                })
                .is_ok()
        })
    }

    fn lock(&self) -> MutexGuard<'_, Jobs> {
        self.shared.jobs.lock().expect("upkeep lock")
    }

    /// Stores waiting to be dropped.
    #[cfg(test)]
    pub(crate) fn waiting(&self) -> usize {
        self.lock().stores.len()
    }
}

impl Jobs {
    /// Whether a batch is due: any refill (each asks for several spares, see
    /// `instances`) or [`DROP_BATCH`] stores.
    fn is_due(&self) -> bool {
        !self.refills.is_empty() || self.stores.len() >= DROP_BATCH
    }

    fn is_empty(&self) -> bool {
        self.stores.is_empty() && self.refills.is_empty()
    }

    /// The thread waits; asleep until woken, it is no longer in use.
    fn fall_asleep(&mut self, how: Sleep) {
        self.sleep = how;
        if how == Sleep::Deep {
            WORKING.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// The thread is woken (by whoever comes first, the waker or the
    /// thread itself), and is in use again.
    fn wake_up(&mut self) {
        if self.sleep == Sleep::Deep {
            WORKING.fetch_add(1, Ordering::Relaxed);
        }
        self.sleep = Sleep::Awake;
    }
}

impl Drop for Upkeep {
    fn drop(&mut self) {
        self.lock().closed = true;
        self.shared.wake.notify_one();
    }
}

/// The thread: takes whatever is queued, drops the stores, makes the
/// spares, and waits when nothing is left.
fn work(shared: &Shared, runtime: &Handle) {
    let _context = runtime.enter();
    let _working = Working::new();
    let mut jobs = shared.jobs.lock().expect("upkeep lock");
    // After a batch the thread waits [`LINGER`] before it sleeps for good,
    // so a store queued meanwhile needs no wake-up to be dropped in time.
    let mut lingering = false;
    loop {
        // Whatever has waited [`LINGER`] goes, batch or not, and so does
        // everything once the owner is gone.
        let mut now = jobs.is_due() || (jobs.closed && !jobs.is_empty());
        if !now {
            if jobs.closed {
                return;
            }
            if lingering || !jobs.is_empty() {
                jobs.fall_asleep(Sleep::Lingering);
                let (woken, waited) = shared.wake.wait_timeout(jobs, LINGER).expect("upkeep lock");
                jobs = woken;
                jobs.wake_up();
                lingering = !waited.timed_out();
                now = waited.timed_out() && !jobs.is_empty();
            } else {
                jobs.fall_asleep(Sleep::Deep);
                jobs = shared.wake.wait(jobs).expect("upkeep lock");
                jobs.wake_up();
            }
        }
        if !now {
            continue;
        }
        let mut stores = std::mem::take(&mut jobs.stores);
        let refills = std::mem::take(&mut jobs.refills);
        drop(jobs);
        // One reading of the page-fault count for the batch's memory resets
        // (see `wasmtime::FaultCount`), rather than one per reset.
        let faults = FaultCount::now();
        let drop_one = |(store, place): (Store<HostState>, Slot)| {
            // SAFETY: every store in the batch was queued once its call was
            // over, before the reading.
            unsafe { faults.drop_store(store) };
            drop(place);
        };
        // A store dropped before each spare made: the first spare is ready
        // sooner than after every drop, and the slots go back as they come.
        for refill in refills {
            if let Some(store) = stores.pop() {
                drop_one(store);
            }
            runtime.block_on(refill.run());
        }
        stores.into_iter().for_each(drop_one);
        lingering = true;
        jobs = shared.jobs.lock().expect("upkeep lock");
    }
}

#[cfg(test)]
mod tests;
