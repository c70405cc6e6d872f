//! The epoch clock: a thread that advances the engines' epoch every
//! [`EPOCH_TICK`] while guest code may run, and sleeps when none can.
//!
//! Deadlines, cancellation and a long call's move to the worker threads are
//! all checked at epoch ticks, so the clock must tick whenever a store exists
//! (only a store can run guest code). It used to tick forever, 200 wake-ups a
//! second on an idle server; on a laptop that keeps a core from sleeping. Now
//! each store holds an [`EpochUse`], and once none has existed for
//! [`IDLE_TICKS`] ticks the thread parks until the next store is made. The
//! grace keeps a server answering one request after another from waking the
//! thread on every call.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::Thread;
use std::time::Duration;

use wasmtime::Engine;

/// How often the epoch advances. Deadlines and cancellation are checked at this
/// granularity, and a running guest yields to other tasks once per tick.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(5);

/// Ticks with no store before the clock parks: one second.
pub(crate) const IDLE_TICKS: u32 = 200;

/// The thread that advances the epoch; stopped when dropped.
pub(crate) struct EpochTicker {
    shared: Arc<Shared>,
}

/// What the ticker and the stores share.
struct Shared {
    /// Stores alive now.
    stores: AtomicUsize,
    /// Set by the ticker just before it parks.
    parked: AtomicBool,
    stop: AtomicBool,
    /// Epochs advanced so far.
    ticks: AtomicU64,
    thread: std::sync::OnceLock<Thread>,
    /// The engines it advances; the fuel-metered ones join when first made.
    engines: Mutex<Vec<Engine>>,
}

impl EpochTicker {
    /// Starts the clock of `engines` (Cranelift's, and Winch's if new
    /// components are served from its quick compile).
    pub(crate) fn start(engines: Vec<Engine>) -> Self {
        let shared = Arc::new(Shared {
            stores: AtomicUsize::new(0),
            parked: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            ticks: AtomicU64::new(0),
            thread: std::sync::OnceLock::new(),
            engines: Mutex::new(engines),
        });
        let ticker = shared.clone();
        let handle = std::thread::Builder::new()
            .name("wharf-epoch".into())
            .spawn(move || ticker.run())
            .expect("spawning the epoch thread");
        let _ = shared.thread.set(handle.thread().clone());
        Self { shared }
    }

    /// Advances `engines` too from the next tick on.
    pub(crate) fn add(&self, engines: impl IntoIterator<Item = Engine>) {
        self.shared
            .engines
            .lock()
            .expect("epoch engines lock")
            .extend(engines);
    }

    /// A mark that a store exists: the epoch ticks until it is dropped (and a
    /// while after).
    pub(crate) fn use_epoch(&self) -> EpochUse {
        let shared = &self.shared;
        shared.stores.fetch_add(1, Ordering::SeqCst);
        // Pairs with the ticker's store of `parked` and load of `stores`: if
        // it parked, or is about to, it is woken; a wake-up before its park
        // makes the park return at once.
        if shared.parked.load(Ordering::SeqCst) {
            shared.wake();
        }
        EpochUse(shared.clone())
    }

    /// Epochs advanced so far.
    #[cfg(test)]
    pub(crate) fn ticks(&self) -> u64 {
        self.shared.ticks.load(Ordering::SeqCst)
    }
}

impl Shared {
    fn run(&self) {
        let mut idle = 0u32;
        while !self.stop.load(Ordering::Relaxed) {
            if self.stores.load(Ordering::SeqCst) > 0 {
                idle = 0;
            } else if idle < IDLE_TICKS {
                idle += 1;
            } else {
                self.parked.store(true, Ordering::SeqCst);
                if self.stores.load(Ordering::SeqCst) == 0 && !self.stop.load(Ordering::SeqCst) {
                    tracing::trace!("no stores: the epoch clock parks");
                    std::thread::park();
                }
                self.parked.store(false, Ordering::SeqCst);
                idle = 0;
                continue;
            }
            std::thread::sleep(EPOCH_TICK);
            for engine in self.engines.lock().expect("epoch engines lock").iter() {
                engine.increment_epoch();
            }
            self.ticks.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn wake(&self) {
        if let Some(thread) = self.thread.get() {
            thread.unpark();
        }
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.shared.wake();
    }
}

/// Held by each store (in its `HostState`): while any exists, the epoch ticks.
pub(crate) struct EpochUse(Arc<Shared>);

impl Drop for EpochUse {
    fn drop(&mut self) {
        self.0.stores.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ticks_over(ticker: &EpochTicker, wait: Duration) -> u64 {
        let before = ticker.ticks();
        std::thread::sleep(wait);
        ticker.ticks() - before
    }

    #[test]
    fn the_clock_ticks_while_a_store_exists_and_parks_a_while_after() {
        let ticker = EpochTicker::start(vec![Engine::default()]);
        let store = ticker.use_epoch();
        // Never parked while a store exists, however long.
        std::thread::sleep(EPOCH_TICK * (IDLE_TICKS + 20));
        assert!(ticks_over(&ticker, EPOCH_TICK * 20) > 0, "ticking");
        drop(store);
        // Still ticking during the grace...
        assert!(
            ticks_over(&ticker, EPOCH_TICK * 20) > 0,
            "ticking in the grace"
        );
        // ...and parked after it.
        std::thread::sleep(EPOCH_TICK * (IDLE_TICKS + 20));
        assert_eq!(ticks_over(&ticker, EPOCH_TICK * 20), 0, "parked");
        // A new store wakes it at once.
        let _store = ticker.use_epoch();
        assert!(ticks_over(&ticker, EPOCH_TICK * 20) > 0, "woken");
    }

    #[test]
    fn a_runaway_guest_is_stopped_after_the_clock_has_parked() {
        use crate::runtime::{CallContext, CallFailure, CallLimits, Grants, Runtime};
        let spin = wat::parse_str(
            r#"(component
                (core module $m (func (export "spin") (loop $again (br $again))))
                (core instance $i (instantiate $m))
                (func (export "spin") (canon lift (core func $i "spin"))))"#,
        )
        .unwrap();
        let limits = CallLimits {
            timeout: Duration::from_millis(200),
            ..CallLimits::default()
        };
        let runtime = Runtime::new(CallLimits::default()).unwrap();
        let serving = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let plugin = serving
            .block_on(runtime.load_with("spin", spin.into(), limits, Grants::default()))
            .unwrap();
        std::thread::sleep(EPOCH_TICK * (IDLE_TICKS + 40));
        assert_eq!(ticks_over(&runtime.epoch, EPOCH_TICK * 20), 0, "parked");
        // The guest never yields but at epoch ticks: without them the call
        // would hold its thread for good, so it runs on one of its own.
        let (done, outcome) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = done.send(serving.block_on(plugin.call(
                "spin",
                &serde_json::json!({}),
                CallContext::default(),
            )));
        });
        let outcome = outcome.recv_timeout(Duration::from_secs(10));
        assert_eq!(
            outcome.expect("the call ended"),
            Err(CallFailure::Timeout(Duration::from_millis(200)))
        );
    }
}
