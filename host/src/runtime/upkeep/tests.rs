//! The upkeep thread: stores dropped soon, alone or in batches, spares made,
//! and nothing left behind when it goes.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{DROP_BATCH, LINGER, Retired, Upkeep};
use crate::runtime::admission::CallSlots;
use crate::runtime::instances::Instances;
use crate::runtime::test_support::{count, load, two_calls};
use crate::runtime::{CallContext, CallLimits, Placement, Plugin, Runtime, RuntimeOptions};

/// A current-thread runtime to serve on, and a worker runtime for the upkeep.
fn runtimes() -> (tokio::runtime::Runtime, tokio::runtime::Runtime) {
    let serving = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let workers = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    (serving, workers)
}

/// A plain component whose `count` answers 7.
fn seven() -> Vec<u8> {
    wat::parse_str(
        r#"(component
            (core module $m (func (export "count") (result i32) (i32.const 7)))
            (core instance $i (instantiate $m))
            (func (export "count") (result u32) (canon lift (core func $i "count"))))"#,
    )
    .unwrap()
}

/// `count` stores of `plugin` handed to `upkeep`, each holding a place of `places`.
fn hand_over(upkeep: &Upkeep, plugin: &Plugin, places: &CallSlots, count: usize) {
    let instances = &plugin.code.load().instances;
    for _ in 0..count {
        let retired = Retired {
            store: instances.new_store(CallContext::default()).unwrap(),
            place: places.try_take().unwrap(),
            refills: Vec::new(),
        };
        assert!(upkeep.hand_over(retired).is_ok());
    }
}

/// Waits (at most ten seconds) until `places` are all free again.
fn until_free(places: &CallSlots) -> Duration {
    let start = Instant::now();
    while places.taken() > 0 {
        assert!(start.elapsed() < Duration::from_secs(10), "never dropped");
        std::thread::sleep(Duration::from_millis(1));
    }
    start.elapsed()
}

/// An upkeep thread on its own, a plugin to make stores of, and places for
/// the stores handed over.
struct Bench {
    workers: tokio::runtime::Runtime,
    _runtime: Runtime,
    plugin: Plugin,
    upkeep: Upkeep,
    places: CallSlots,
}

impl Bench {
    fn new() -> Self {
        let (serving, workers) = runtimes();
        let runtime = two_calls(RuntimeOptions::default());
        let plugin = serving.block_on(load(&runtime, "seven", seven(), CallLimits::default()));
        let upkeep = Upkeep::new(workers.handle().clone());
        Self {
            workers,
            _runtime: runtime,
            plugin,
            upkeep,
            places: CallSlots::new(DROP_BATCH * 2),
        }
    }

    fn hand_over(&self, count: usize) {
        hand_over(&self.upkeep, &self.plugin, &self.places, count);
    }

    fn end(self) {
        drop(self.upkeep);
        until_free(&self.places);
        self.workers.shutdown_background();
    }
}

#[test]
fn a_store_alone_is_dropped_soon_even_after_a_quiet_spell() {
    let bench = Bench::new();
    for _ in 0..3 {
        bench.hand_over(1);
        until_free(&bench.places);
        assert_eq!(bench.upkeep.waiting(), 0);
        // Long enough for the thread to stop lingering and sleep for good.
        std::thread::sleep(LINGER * 5);
    }
    bench.end();
}

#[test]
fn many_stores_handed_over_at_once_are_all_dropped() {
    let bench = Bench::new();
    bench.hand_over(DROP_BATCH * 2);
    until_free(&bench.places);
    bench.end();
}

#[test]
fn stores_still_waiting_are_dropped_when_the_upkeep_goes() {
    let bench = Bench::new();
    bench.hand_over(DROP_BATCH - 1);
    // `end` drops the upkeep at once, then waits for the places.
    bench.end();
}

/// A serving runtime and workers, a runtime whose placement has them (as a
/// server's has), the `seven` plugin loaded in it, and its instances.
#[allow(clippy::type_complexity)]
fn served() -> (
    tokio::runtime::Runtime,
    tokio::runtime::Runtime,
    Runtime,
    Plugin,
    Arc<Instances>,
) {
    let (serving, workers) = runtimes();
    let runtime = two_calls(RuntimeOptions {
        placement: Placement::MoveLongCalls(workers.handle().clone()),
        ..RuntimeOptions::default()
    });
    let plugin = serving.block_on(load(&runtime, "seven", seven(), CallLimits::default()));
    let instances = plugin.code.load().instances.clone();
    (serving, workers, runtime, plugin, instances)
}

#[test]
fn a_busy_plugin_s_spares_are_made_off_the_serving_thread() {
    let (serving, workers, runtime, plugin, instances) = served();
    // A call that finds no spare while one is being made: calls outrun spares.
    let held = instances.refill();
    assert!(instances.take_spare(CallContext::default()).is_err());
    drop(held);
    assert!(instances.is_busy());
    for _ in 0..3 {
        let answer = serving.block_on(count(&plugin, CallContext::default()));
        assert_eq!(answer, Ok(7.into()));
        // The serving runtime is not running now: only the upkeep thread
        // can make the spare.
        let start = Instant::now();
        while !instances.has_spare() {
            assert!(start.elapsed() < Duration::from_secs(10), "no spare made");
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    drop(plugin);
    drop(runtime);
    workers.shutdown_background();
}

#[test]
fn a_plugin_whose_client_waits_for_each_answer_keeps_its_upkeep_on_the_serving_thread() {
    let (serving, workers, runtime, plugin, instances) = served();
    assert_eq!(
        serving.block_on(count(&plugin, CallContext::default())),
        Ok(7.into())
    );
    assert!(!instances.is_busy());
    std::thread::sleep(LINGER * 10);
    assert!(
        !instances.has_spare(),
        "not made while the serving runtime is stopped"
    );
    serving.block_on(async {
        for _ in 0..20 {
            tokio::task::yield_now().await;
        }
    });
    assert!(instances.has_spare(), "made on the serving thread");
    drop(plugin);
    drop(runtime);
    workers.shutdown_background();
}
