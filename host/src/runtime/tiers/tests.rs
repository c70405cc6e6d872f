//! Tiered compilation: a new component answers from Winch's compile, then
//! from Cranelift's, which reaches the cache; the sandbox holds in both.

use std::path::PathBuf;
use std::time::Duration;

use crate::runtime::engine::Compilers;
use crate::runtime::test_support::{counter, hold_tier_ups, load, optimized, two_calls};
use crate::runtime::{
    CallContext, CallFailure, CallLimits, ContentHash, Plugin, Runtime, RuntimeOptions, Tier,
};

fn runtime(quick_compile: bool, cache_root: Option<PathBuf>) -> Runtime {
    two_calls(RuntimeOptions {
        quick_compile,
        cache_root,
        ..RuntimeOptions::default()
    })
}

async fn count(plugin: &Plugin) -> Result<serde_json::Value, CallFailure> {
    crate::runtime::test_support::count(plugin, CallContext::default()).await
}

#[tokio::test]
async fn a_new_component_answers_from_the_quick_compile_then_from_the_optimised_one() {
    let runtime = runtime(true, None);
    let held = hold_tier_ups(&runtime).await;
    let plugin = load(&runtime, "counter", counter(10, 0), CallLimits::default()).await;
    assert_eq!(plugin.tier(), Tier::Quick);
    assert_eq!(count(&plugin).await, Ok(1.into()));
    assert_eq!(count(&plugin).await, Ok(1.into()), "a fresh instance");
    drop(held);
    optimized(&plugin).await;
    assert_eq!(count(&plugin).await, Ok(1.into()));
    assert_eq!(count(&plugin).await, Ok(1.into()));
}

#[tokio::test]
async fn the_optimiser_counts_what_it_has_left_until_it_is_done() {
    let runtime = runtime(true, None);
    assert_eq!(runtime.optimizing(), 0);
    let held = hold_tier_ups(&runtime).await;
    let first = load(&runtime, "a", counter(10, 1), CallLimits::default()).await;
    let second = load(&runtime, "b", counter(10, 2), CallLimits::default()).await;
    assert_eq!(runtime.optimizing(), 2, "queued or under way");
    drop(held);
    tokio::time::timeout(Duration::from_secs(60), runtime.finish_optimizing())
        .await
        .expect("the optimiser finishes");
    assert_eq!(runtime.optimizing(), 0);
    assert_eq!(first.tier(), Tier::Optimized);
    assert_eq!(second.tier(), Tier::Optimized);
}

#[tokio::test]
async fn the_optimiser_thread_starts_with_its_first_job() {
    let cache = tempfile::tempdir().unwrap();
    let first = runtime(true, Some(cache.path().to_path_buf()));
    let started = |runtime: &Runtime| runtime.optimizer.as_ref().unwrap().jobs.get().is_some();
    assert!(!started(&first), "no job yet");
    let plugin = load(&first, "counter", counter(10, 3), CallLimits::default()).await;
    assert!(started(&first), "a quick compile queued its tier-up");
    optimized(&plugin).await;

    // Its optimised code cached, the component needs no tier-up in a new runtime.
    let second = runtime(true, Some(cache.path().to_path_buf()));
    let plugin = load(&second, "counter", counter(10, 3), CallLimits::default()).await;
    assert_eq!(plugin.tier(), Tier::Optimized);
    assert!(!started(&second), "nothing to optimise");
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_optimiser_runs_at_idle_priority() {
    let runtime = runtime(true, None);
    let _held = hold_tier_ups(&runtime).await;
    let _plugin = load(&runtime, "idle", counter(10, 7), CallLimits::default()).await;
    // The thread sets its class as it takes its job; give it a moment.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let policies: Vec<String> = std::fs::read_dir("/proc/self/task")
            .unwrap()
            .flatten()
            .filter(|task| {
                std::fs::read_to_string(task.path().join("comm"))
                    .is_ok_and(|name| name.trim() == "wharf-optimize")
            })
            .map(|task| std::fs::read_to_string(task.path().join("sched")).unwrap())
            .collect();
        // `policy : 5` is SCHED_IDLE.
        if policies.iter().any(|sched| {
            sched
                .lines()
                .any(|l| l.starts_with("policy") && l.ends_with(" 5"))
        }) {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "{policies:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The scheduling policy of thread `tid` of this process (5: SCHED_IDLE).
#[cfg(target_os = "linux")]
fn policy_of(tid: i32) -> u32 {
    let sched = std::fs::read_to_string(format!("/proc/self/task/{tid}/sched")).unwrap();
    let line = sched.lines().find(|l| l.starts_with("policy")).unwrap();
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

#[cfg(target_os = "linux")]
#[test]
fn a_compile_past_its_idle_grace_goes_on_in_the_normal_class() {
    use super::{CompileClock, IDLE_GRACE, set_idle, this_thread, watch_grace};
    use std::sync::Arc;
    use std::sync::atomic::Ordering;

    let (tid_tx, tid_rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
    let worker = std::thread::spawn(move || {
        set_idle(true, 0);
        tid_tx.send(this_thread()).unwrap();
        let _ = stop_rx.recv();
    });
    let tid = tid_rx.recv().unwrap();
    assert_eq!(policy_of(tid), 5, "idle at first");
    let clock = Arc::new(CompileClock::new());
    clock.thread.store(tid, Ordering::Release);
    // A compile that started before its grace was over: 1 ms after origin,
    // and the clock is now past the grace.
    clock.since.store(1, Ordering::Release);
    std::thread::sleep(IDLE_GRACE + Duration::from_millis(10));
    let watch = std::thread::spawn({
        let weak = Arc::downgrade(&clock);
        move || watch_grace(weak)
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while policy_of(tid) != 0 {
        assert!(std::time::Instant::now() < deadline, "never raised");
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(clock);
    watch.join().unwrap();
    stop_tx.send(()).unwrap();
    worker.join().unwrap();
}

#[tokio::test]
async fn without_quick_compiles_a_new_component_loads_optimised() {
    let runtime = runtime(false, None);
    assert!(runtime.unmetered.quick().is_none());
    let plugin = load(&runtime, "counter", counter(10, 0), CallLimits::default()).await;
    assert_eq!(plugin.tier(), Tier::Optimized);
    assert_eq!(count(&plugin).await, Ok(1.into()));
}

/// Whether the cache of `tier`'s engine of `compilers` holds a compile of `bytes`.
fn cached(compilers: &Compilers, tier: Tier, bytes: &[u8]) -> bool {
    let backend = match tier {
        Tier::Optimized => &compilers.optimized,
        Tier::Quick => compilers.quick_if_made().unwrap(),
    };
    let cache = backend.cache.as_ref().unwrap();
    cache
        .get(&backend.engine, &ContentHash::of(bytes))
        .is_some()
}

#[tokio::test]
async fn a_quick_compile_is_cached_until_the_optimised_one_is() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = counter(10, 0);
    let first = runtime(true, Some(dir.path().into()));
    let held = hold_tier_ups(&first).await;
    let plugin = load(&first, "counter", bytes.clone(), CallLimits::default()).await;
    assert_eq!(plugin.tier(), Tier::Quick, "nothing cached yet");
    assert!(cached(&first.unmetered, Tier::Quick, &bytes));
    assert!(!cached(&first.unmetered, Tier::Optimized, &bytes));

    // Stopped before the optimised code: the next server starts quick.
    let second = runtime(true, Some(dir.path().into()));
    let _held_too = hold_tier_ups(&second).await;
    let again = load(&second, "counter", bytes.clone(), CallLimits::default()).await;
    assert_eq!(again.tier(), Tier::Quick);
    assert_eq!(count(&again).await, Ok(1.into()));

    drop(held);
    optimized(&plugin).await;
    assert!(cached(&first.unmetered, Tier::Optimized, &bytes));
    assert!(
        !cached(&first.unmetered, Tier::Quick, &bytes),
        "no longer needed"
    );
    let third = runtime(true, Some(dir.path().into()));
    let last = load(&third, "counter", bytes, CallLimits::default()).await;
    assert_eq!(last.tier(), Tier::Optimized);
    assert_eq!(count(&last).await, Ok(1.into()));
}

#[tokio::test]
async fn a_plugin_dropped_before_its_turn_is_not_compiled_again() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = runtime(true, Some(dir.path().into()));
    let held = hold_tier_ups(&runtime).await;
    let gone = counter(10, 1);
    drop(load(&runtime, "gone", gone.clone(), CallLimits::default()).await);
    let kept = load(&runtime, "kept", counter(10, 2), CallLimits::default()).await;
    drop(held);
    // The queue is first come, first served: `gone`'s turn was before.
    optimized(&kept).await;
    assert!(!cached(&runtime.unmetered, Tier::Optimized, &gone));
}

#[tokio::test]
async fn quick_code_keeps_to_the_time_and_fuel_limits() {
    let runtime = runtime(true, None);
    let _held = hold_tier_ups(&runtime).await;
    let forever = load(
        &runtime,
        "forever",
        counter(u32::MAX, 0),
        CallLimits {
            timeout: Duration::from_millis(200),
            ..CallLimits::default()
        },
    )
    .await;
    assert_eq!(forever.tier(), Tier::Quick);
    assert_eq!(
        count(&forever).await,
        Err(CallFailure::Timeout(Duration::from_millis(200)))
    );

    let thirsty = load(
        &runtime,
        "thirsty",
        counter(1_000_000, 1),
        CallLimits {
            fuel: Some(10_000),
            ..CallLimits::default()
        },
    )
    .await;
    assert_eq!(thirsty.tier(), Tier::Quick);
    assert_eq!(count(&thirsty).await, Err(CallFailure::OutOfFuel(10_000)));
}

#[tokio::test]
async fn quick_and_optimised_code_burn_the_same_fuel() {
    let runtime = runtime(true, None);
    let held = hold_tier_ups(&runtime).await;
    let limits = CallLimits {
        fuel: Some(1_000),
        ..CallLimits::default()
    };
    // Find, in the quick code, the most spins the tank allows...
    let (mut fits, mut over) = (0, 1_000);
    while over - fits > 1 {
        let mid = (fits + over) / 2;
        let plugin = load(&runtime, "spins", counter(mid, 0), limits.clone()).await;
        match count(&plugin).await {
            Ok(_) => fits = mid,
            Err(CallFailure::OutOfFuel(_)) => over = mid,
            Err(other) => panic!("{other:?}"),
        }
    }
    let spins = fits;
    let plugin = load(&runtime, "spins", counter(spins, 0), limits.clone()).await;
    assert!(spins > 10, "{spins} spins");
    drop(held);
    // ...which the optimised code allows too, and not one more.
    optimized(&plugin).await;
    assert_eq!(count(&plugin).await, Ok(1.into()));
    let over = load(&runtime, "over", counter(spins + 1, 0), limits).await;
    optimized(&over).await;
    assert_eq!(count(&over).await, Err(CallFailure::OutOfFuel(1_000)));
}

/// Whether two plugins run one compiled component.
fn same_component(a: &Plugin, b: &Plugin) -> bool {
    std::sync::Arc::ptr_eq(&a.code.load()._component, &b.code.load()._component)
}

#[tokio::test]
async fn plugins_of_the_same_bytes_share_one_component_and_nothing_else() {
    let runtime = runtime(false, None);
    let a = load(&runtime, "a", counter(10, 0), CallLimits::default()).await;
    let b = load(&runtime, "b", counter(10, 0), CallLimits::default()).await;
    let other = load(&runtime, "other", counter(10, 1), CallLimits::default()).await;
    assert!(same_component(&a, &b));
    assert!(!same_component(&a, &other));
    // Each call still gets a fresh instance of its own.
    assert_eq!(count(&a).await, Ok(1.into()));
    assert_eq!(count(&b).await, Ok(1.into()));
    assert_eq!(count(&other).await, Ok(1.into()));

    let shared = &runtime.unmetered.optimized.shared;
    let hash = ContentHash::of(&counter(10, 0));
    drop(a);
    assert!(shared.get(&hash).is_some(), "b holds it");
    drop(b);
    assert!(shared.get(&hash).is_none(), "the last holder freed it");
}

#[tokio::test]
async fn a_copy_loaded_after_the_tier_up_shares_the_optimised_component() {
    let runtime = runtime(true, None);
    let first = load(&runtime, "first", counter(10, 0), CallLimits::default()).await;
    optimized(&first).await;
    let copy = load(&runtime, "copy", counter(10, 0), CallLimits::default()).await;
    assert_eq!(
        copy.tier(),
        Tier::Optimized,
        "no quick compile of known bytes"
    );
    assert!(same_component(&first, &copy));
    assert_eq!(count(&copy).await, Ok(1.into()));
}
