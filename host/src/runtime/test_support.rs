//! What the runtime's unit tests share: a runtime for a couple of calls, a
//! counter component, loading a component with given limits, calling its
//! `count` function, and holding back or waiting for optimised code.

use std::time::Duration;

use crate::runtime::{
    CallContext, CallFailure, CallLimits, Grants, Plugin, Runtime, RuntimeOptions, Tier,
};

/// A runtime that runs two calls at once, with `options` otherwise.
pub(crate) fn two_calls(options: RuntimeOptions) -> Runtime {
    Runtime::with_options(RuntimeOptions {
        max_concurrent_calls: 2,
        ..options
    })
    .unwrap()
}

/// `bytes` loaded as `name` with `limits` and no grants.
pub(crate) async fn load(
    runtime: &Runtime,
    name: &str,
    bytes: Vec<u8>,
    limits: CallLimits,
) -> Plugin {
    runtime
        .load_with(name, bytes.into(), limits, Grants::default())
        .await
        .unwrap()
}

/// What the plugin's `count` answers, called with `ctx`.
pub(crate) async fn count(
    plugin: &Plugin,
    ctx: CallContext,
) -> Result<serde_json::Value, CallFailure> {
    let out = plugin.call("count", &serde_json::json!({}), ctx).await?;
    Ok(out.structured.unwrap()["result"].clone())
}

/// Keeps the runtime's optimising compiles waiting while held, so a plugin
/// loaded meanwhile stays on its quick code however fast its tier-up would be.
pub(crate) async fn hold_tier_ups(runtime: &Runtime) -> tokio::sync::OwnedMutexGuard<()> {
    runtime
        .optimizer
        .as_ref()
        .unwrap()
        .turn
        .clone()
        .lock_owned()
        .await
}

/// Waits (at most a minute) for the plugin's optimised code.
pub(crate) async fn optimized(plugin: &Plugin) {
    for _ in 0..6000 {
        if plugin.tier() == Tier::Optimized {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the optimised code never came");
}

/// A plain component whose `count` adds one to a global and answers it (1 in
/// a fresh instance) after looping `spins` times; `salt` makes its bytes
/// differ from another's.
pub(crate) fn counter(spins: u32, salt: u32) -> Vec<u8> {
    wat::parse_str(format!(
        r#"(component
            (core module $m
                (global $n (mut i32) (i32.const {salt}))
                (func (export "count") (result i32) (local $left i32)
                    (local.set $left (i32.const {spins}))
                    (block $done (loop $again
                        (br_if $done (i32.eqz (local.get $left)))
                        (local.set $left (i32.sub (local.get $left) (i32.const 1)))
                        (br $again)))
                    (global.set $n (i32.add (global.get $n) (i32.const 1)))
                    (i32.sub (global.get $n) (i32.const {salt}))))
            (core instance $i (instantiate $m))
            (func (export "count") (result u32) (canon lift (core func $i "count"))))"#
    ))
    .unwrap()
}
