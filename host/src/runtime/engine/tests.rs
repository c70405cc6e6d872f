//! Fuel metering: only plugins with a fuel limit run metered code, from
//! engines made when the first of them loads, which the epoch clock drives too.

use std::time::Duration;

use wasmtime::{Engine, Store};

use crate::runtime::test_support::{count, counter, hold_tier_ups, load, optimized, two_calls};
use crate::runtime::{CallContext, CallFailure, CallLimits, Plugin, RuntimeOptions, Tier};

#[cfg(target_os = "linux")]
mod memory_reset;

/// A plain component whose `count` never returns.
fn forever() -> Vec<u8> {
    wat::parse_str(
        r#"(component
            (core module $m (func (export "count") (result i32) (loop $again (br $again)) (i32.const 0)))
            (core instance $i (instantiate $m))
            (func (export "count") (result u32) (canon lift (core func $i "count"))))"#,
    )
    .unwrap()
}

fn fuel(units: u64) -> CallLimits {
    CallLimits {
        fuel: Some(units),
        ..CallLimits::default()
    }
}

fn engine_of(plugin: &Plugin) -> Engine {
    plugin.code.load().instances.engine().clone()
}

/// Whether a store of `engine` counts fuel.
fn meters(engine: &Engine) -> bool {
    Store::new(engine, ()).set_fuel(1).is_ok()
}

#[cfg(target_arch = "x86_64")] // Winch's quick compiles
#[tokio::test]
async fn only_plugins_with_a_fuel_limit_run_metered_code() {
    let runtime = two_calls(RuntimeOptions {
        quick_compile: true,
        ..RuntimeOptions::default()
    });
    // The tiny component's optimised compile could otherwise replace its quick
    // code before the first check.
    let held = hold_tier_ups(&runtime).await;
    let free = load(&runtime, "free", counter(10, 0), CallLimits::default()).await;
    assert_eq!(free.tier(), Tier::Quick);
    assert!(!meters(&engine_of(&free)));
    assert!(runtime.metered.get().is_none(), "made only when needed");
    assert_eq!(count(&free, CallContext::default()).await, Ok(1.into()));

    let limited = load(&runtime, "limited", counter(10, 0), fuel(1_000_000)).await;
    let metered = runtime.metered.get().expect("made for the first limit");
    assert!(Engine::same(
        &engine_of(&limited),
        &metered.quick_if_made().unwrap().engine
    ));
    assert!(meters(&engine_of(&limited)));
    assert_eq!(count(&limited, CallContext::default()).await, Ok(1.into()));
    let thirsty = load(&runtime, "thirsty", counter(1_000_000, 0), fuel(10_000)).await;
    assert_eq!(
        count(&thirsty, CallContext::default()).await,
        Err(CallFailure::OutOfFuel(10_000))
    );

    // Tiered up, each stays on its side.
    drop(held);
    for plugin in [&free, &limited] {
        optimized(plugin).await;
    }
    assert!(!meters(&engine_of(&free)));
    assert!(Engine::same(
        &engine_of(&limited),
        &metered.optimized.engine
    ));
    assert_eq!(count(&limited, CallContext::default()).await, Ok(1.into()));
}

#[tokio::test]
async fn without_quick_compiles_a_fuel_limit_gets_cranelift_metered_code() {
    let runtime = two_calls(RuntimeOptions::default());
    let limited = load(&runtime, "limited", counter(1_000_000, 0), fuel(10_000)).await;
    let metered = runtime.metered.get().unwrap();
    assert!(metered.quick().is_none());
    assert_eq!(limited.tier(), Tier::Optimized);
    assert!(Engine::same(
        &engine_of(&limited),
        &metered.optimized.engine
    ));
    assert_eq!(
        count(&limited, CallContext::default()).await,
        Err(CallFailure::OutOfFuel(10_000))
    );
}

#[test]
fn a_metered_plugin_still_stops_at_its_time_limit() {
    // With more fuel than it can burn, only the epoch (which must tick the
    // metered engines too) ends the call; it never yields otherwise, so it
    // runs on a thread of its own and a lost tick fails the test, not hangs it.
    let limits = CallLimits {
        timeout: Duration::from_millis(200),
        fuel: Some(u64::MAX / 2),
        ..CallLimits::default()
    };
    let serving = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let runtime = two_calls(RuntimeOptions::default());
    let plugin = serving.block_on(load(&runtime, "forever", forever(), limits));
    assert!(meters(&engine_of(&plugin)));
    let (done, outcome) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(serving.block_on(count(&plugin, CallContext::default())));
    });
    assert_eq!(
        outcome
            .recv_timeout(Duration::from_secs(10))
            .expect("the call ended"),
        Err(CallFailure::Timeout(Duration::from_millis(200)))
    );
}

#[tokio::test]
async fn metered_compiles_have_their_own_cache() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = counter(10, 0);
    let options = || RuntimeOptions {
        cache_root: Some(dir.path().into()),
        ..RuntimeOptions::default()
    };
    let first = two_calls(options());
    drop(load(&first, "limited", bytes.clone(), fuel(1_000_000)).await);
    let metered = first.metered.get().unwrap();
    let hash = crate::runtime::ContentHash::of(&bytes);
    let cache_of = |backend: &super::Backend| {
        backend
            .cache
            .as_ref()
            .unwrap()
            .get(&backend.engine, &hash)
            .is_some()
    };
    assert!(cache_of(&metered.optimized));
    assert!(!cache_of(&first.unmetered.optimized));

    // Unmetered, the same bytes are compiled again (no metering in them).
    let second = two_calls(options());
    let free = load(&second, "free", bytes, CallLimits::default()).await;
    assert!(cache_of(&second.unmetered.optimized));
    assert!(!meters(&engine_of(&free)));
}

/// Funcrefs made by `ref.func` at start-up, by an active element segment and
/// for an export all reach the right function (their entry points come from
/// each module's table of them in the patched wasmtime, vendor/wasmtime):
/// direct calls, `call_indirect` through both tables, and from the host.
#[test]
fn funcrefs_reach_their_functions() {
    use wasmtime::{Instance, Module};

    let engine = Engine::default();
    let module = Module::new(
        &engine,
        r#"(module
            (type $n (func (result i32)))
            (table $set 3 funcref)
            (table $elem funcref (elem $seven $eight))
            (elem declare func $one $two $three)
            (func $one (result i32) (i32.const 1))
            (func $two (result i32) (i32.const 2))
            (func $three (export "three") (result i32) (i32.const 3))
            (func $seven (result i32) (i32.const 7))
            (func $eight (result i32) (i32.const 8))
            (func $fill
                (table.set $set (i32.const 0) (ref.func $three))
                (table.set $set (i32.const 1) (ref.func $one))
                (table.set $set (i32.const 2) (ref.func $two)))
            (start $fill)
            (func (export "via_set") (param i32) (result i32)
                (call_indirect $set (type $n) (local.get 0)))
            (func (export "via_elem") (param i32) (result i32)
                (call_indirect $elem (type $n) (local.get 0))))"#,
    )
    .unwrap();
    let mut store = Store::new(&engine, ());
    let instance = Instance::new(&mut store, &module, &[]).unwrap();
    let via_set = instance
        .get_typed_func::<i32, i32>(&mut store, "via_set")
        .unwrap();
    let via_elem = instance
        .get_typed_func::<i32, i32>(&mut store, "via_elem")
        .unwrap();
    let three = instance
        .get_typed_func::<(), i32>(&mut store, "three")
        .unwrap();
    let set: Vec<i32> = (0..3)
        .map(|i| via_set.call(&mut store, i).unwrap())
        .collect();
    assert_eq!(set, [3, 1, 2]);
    let elem: Vec<i32> = (0..2)
        .map(|i| via_elem.call(&mut store, i).unwrap())
        .collect();
    assert_eq!(elem, [7, 8]);
    assert_eq!(three.call(&mut store, ()).unwrap(), 3);
}
