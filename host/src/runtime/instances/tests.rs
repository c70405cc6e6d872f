//! Spare instances: taken by the next call, still fresh, bounded and dropped
//! when idle.

use std::sync::Arc;
use std::time::Duration;

use super::{Instances, MAX_SPARES_PER_PLUGIN, Refill};

use crate::runtime::test_support::{count, load, two_calls};
use crate::runtime::{CallContext, CallFailure, CallLimits, Plugin, Runtime, RuntimeOptions};

fn runtime(spares: usize, spare_idle: Duration) -> Runtime {
    two_calls(RuntimeOptions {
        spares,
        spare_idle,
        ..RuntimeOptions::default()
    })
}

/// A plain component whose start-up and `count` each add one to a global and
/// spin `start_spins` and `call_spins` times; `count` returns the global, so
/// it answers 2 in an instance no other call has used.
fn counter(start_spins: u32, call_spins: u32) -> Vec<u8> {
    wat::parse_str(format!(
        r#"(component
            (core module $m
                (global $n (mut i32) (i32.const 0))
                (func $spin (param $left i32)
                    (block $done (loop $again
                        (br_if $done (i32.eqz (local.get $left)))
                        (local.set $left (i32.sub (local.get $left) (i32.const 1)))
                        (br $again))))
                (func $start
                    (global.set $n (i32.add (global.get $n) (i32.const 1)))
                    (call $spin (i32.const {start_spins})))
                (start $start)
                (func (export "count") (result i32)
                    (call $spin (i32.const {call_spins}))
                    (global.set $n (i32.add (global.get $n) (i32.const 1)))
                    (global.get $n)))
            (core instance $i (instantiate $m))
            (func (export "count") (result u32) (canon lift (core func $i "count"))))"#
    ))
    .unwrap()
}

/// Lets the tasks that drop stores and make spares run.
async fn settle() {
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
}

/// Calls `count` with no caller's context, then lets the task after the call
/// run: the plugin has its spare then, if it may.
async fn count_then_settle(plugin: &Plugin) -> Result<serde_json::Value, CallFailure> {
    let out = count(plugin, CallContext::default()).await;
    settle().await;
    out
}

/// Two counter plugins.
async fn two(runtime: &Runtime) -> (Plugin, Plugin) {
    let first = load(runtime, "first", counter(0, 0), CallLimits::default()).await;
    let second = load(runtime, "second", counter(0, 0), CallLimits::default()).await;
    (first, second)
}

#[tokio::test(flavor = "current_thread")]
async fn the_next_call_takes_the_spare_and_it_is_fresh() {
    let runtime = runtime(4, Duration::from_secs(30));
    let plugin = load(&runtime, "counter", counter(0, 0), CallLimits::default()).await;
    assert!(
        !plugin.code.load().instances.has_spare(),
        "no spare before any call"
    );
    assert_eq!(count_then_settle(&plugin).await, Ok(2.into()));
    assert!(
        plugin.code.load().instances.has_spare(),
        "made after the call"
    );
    for _ in 0..3 {
        assert_eq!(
            count(&plugin, CallContext::default()).await,
            Ok(2.into()),
            "an instance no call has used"
        );
        assert!(
            !plugin.code.load().instances.has_spare(),
            "the call took it"
        );
        settle().await;
        assert!(plugin.code.load().instances.has_spare());
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_spare_serves_the_call_it_is_given_to() {
    let runtime = runtime(4, Duration::from_secs(30));
    let plugin = load(&runtime, "counter", counter(0, 0), CallLimits::default()).await;
    count_then_settle(&plugin).await.unwrap();
    let ctx = CallContext::default();
    ctx.cancel.cancel();
    assert_eq!(count(&plugin, ctx).await, Err(CallFailure::Cancelled));
}

#[tokio::test(flavor = "current_thread")]
async fn a_spare_call_has_its_whole_time_limit_from_its_start() {
    let runtime = runtime(4, Duration::from_secs(30));
    let limits = CallLimits {
        timeout: Duration::from_millis(200),
        ..CallLimits::default()
    };
    // Long enough to see several epoch ticks, well short of the limit.
    let plugin = load(&runtime, "spinner", counter(0, 10_000_000), limits).await;
    assert_eq!(count_then_settle(&plugin).await, Ok(2.into()));
    assert!(plugin.code.load().instances.has_spare());
    // The spare is now older than the limit: its clock must start with the call.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(count(&plugin, CallContext::default()).await, Ok(2.into()));
}

#[tokio::test(flavor = "current_thread")]
async fn a_spare_call_gets_the_fuel_its_start_up_left_as_any_call() {
    let runtime = runtime(4, Duration::from_secs(30));
    let spins = 1_000;
    // A spin is eight instructions: enough fuel for the start-up or the call,
    // not for both.
    let fuel = u64::from(spins) * 12;
    let limits = CallLimits {
        fuel: Some(fuel),
        ..CallLimits::default()
    };
    let tight = load(&runtime, "tight", counter(spins, spins), limits.clone()).await;
    let first = count_then_settle(&tight).await;
    assert_eq!(first, Err(CallFailure::OutOfFuel(fuel)), "no spare yet");
    // A call that fails still leaves a spare behind it.
    assert!(tight.code.load().instances.has_spare());
    assert_eq!(count(&tight, CallContext::default()).await, first);
    let roomy = load(&runtime, "roomy", counter(spins, 0), limits).await;
    assert_eq!(count_then_settle(&roomy).await, Ok(2.into()));
    assert_eq!(count(&roomy, CallContext::default()).await, Ok(2.into()));
}

#[tokio::test(flavor = "current_thread")]
async fn the_runtime_holds_no_more_spares_than_it_may() {
    let runtime = runtime(1, Duration::from_secs(30));
    let (first, second) = two(&runtime).await;
    count_then_settle(&first).await.unwrap();
    count_then_settle(&second).await.unwrap();
    assert!(first.code.load().instances.has_spare());
    assert!(
        !second.code.load().instances.has_spare(),
        "the one place is taken"
    );
    // A plugin that goes (a reload, say) gives its place back.
    drop(first);
    count_then_settle(&second).await.unwrap();
    assert!(second.code.load().instances.has_spare());
}

#[tokio::test(flavor = "current_thread")]
async fn a_spare_nobody_takes_is_dropped_after_the_idle_time() {
    let runtime = runtime(1, Duration::from_millis(50));
    let (first, second) = two(&runtime).await;
    count_then_settle(&first).await.unwrap();
    assert!(first.code.load().instances.has_spare());
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert!(
        !first.code.load().instances.has_spare(),
        "dropped when idle"
    );
    count_then_settle(&second).await.unwrap();
    assert!(
        second.code.load().instances.has_spare(),
        "its place was given back"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_runtime_allowed_no_spares_makes_none() {
    let runtime = runtime(0, Duration::from_secs(30));
    let plugin = load(&runtime, "counter", counter(0, 0), CallLimits::default()).await;
    for _ in 0..3 {
        assert_eq!(count_then_settle(&plugin).await, Ok(2.into()));
        assert!(!plugin.code.load().instances.has_spare());
    }
}

/// A plain component with `pages` of linear memory whose `count` answers 2.
fn with_memory(pages: u32) -> Vec<u8> {
    wat::parse_str(format!(
        r#"(component
            (core module $m
                (memory {pages})
                (func (export "count") (result i32) (i32.const 2)))
            (core instance $i (instantiate $m))
            (func (export "count") (result u32) (canon lift (core func $i "count"))))"#
    ))
    .unwrap()
}

/// The spares a plugin asks for after a call that found none while `making`
/// were still being made; they join `making`.
fn missed(instances: &Arc<Instances>, making: &mut Vec<Refill>) -> usize {
    assert!(
        instances.take_spare(CallContext::default()).is_err(),
        "none is ready"
    );
    let more = instances.refill();
    let count = more.len();
    making.extend(more);
    count
}

/// A counter plugin in a runtime with room for its most spares, its
/// instances, and the first refill it asks for.
async fn counter_plugin(spare_idle: Duration) -> (Runtime, Plugin, Arc<Instances>, Vec<Refill>) {
    let runtime = runtime(MAX_SPARES_PER_PLUGIN, spare_idle);
    let plugin = load(&runtime, "busy", counter(0, 0), CallLimits::default()).await;
    let instances = plugin.code.load().instances.clone();
    let making = instances.refill();
    (runtime, plugin, instances, making)
}

#[tokio::test(flavor = "current_thread")]
async fn a_plugin_whose_calls_outrun_its_spares_wants_more_and_asks_in_batches() {
    let (_runtime, _plugin, instances, mut making) = counter_plugin(Duration::from_secs(30)).await;
    assert_eq!(making.len(), 1, "one spare at first");
    // Each call that comes while spares are being made doubles what the
    // plugin wants, and it asks for the difference.
    for more in [1, 2, 4, 8] {
        assert_eq!(missed(&instances, &mut making), more);
    }
    assert_eq!(missed(&instances, &mut making), 0, "no more than the most");
    for refill in making {
        refill.run().await;
    }
    assert_eq!(instances.spares(), MAX_SPARES_PER_PLUGIN);
    // Taken, they are made again only once a quarter of them are gone.
    let quarter = MAX_SPARES_PER_PLUGIN / 4;
    for _ in 1..quarter {
        drop(instances.take_spare(CallContext::default()).unwrap());
        assert!(instances.refill().is_empty());
    }
    drop(instances.take_spare(CallContext::default()).unwrap());
    assert_eq!(instances.refill().len(), quarter);
}

#[tokio::test(flavor = "current_thread")]
async fn a_plugin_with_a_large_memory_keeps_fewer_spares() {
    let runtime = runtime(MAX_SPARES_PER_PLUGIN, Duration::from_secs(30));
    // 6 MiB: two such instances fit within the spares' memory.
    let plugin = load(&runtime, "large", with_memory(96), CallLimits::default()).await;
    let instances = plugin.code.load().instances.clone();
    let mut making = instances.refill();
    making.pop().unwrap().run().await;
    assert_eq!(instances.spares(), 1);
    drop(instances.take_spare(CallContext::default()).unwrap());
    making.extend(instances.refill());
    assert_eq!(missed(&instances, &mut making), 1, "wants two");
    assert_eq!(missed(&instances, &mut making), 0, "and no more");
    for refill in making {
        refill.run().await;
    }
    assert_eq!(instances.spares(), 2);
    assert_eq!(
        count(&plugin, CallContext::default()).await,
        Ok(2.into()),
        "a spare serves"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn idle_spares_go_and_the_plugin_wants_one_again() {
    let (_runtime, plugin, instances, mut making) = counter_plugin(Duration::from_millis(50)).await;
    missed(&instances, &mut making);
    missed(&instances, &mut making);
    for refill in making {
        refill.run().await;
    }
    assert_eq!(instances.spares(), 4);
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(instances.spares(), 0, "dropped when idle");
    count_then_settle(&plugin).await.unwrap();
    assert_eq!(instances.spares(), 1, "one again");
}
