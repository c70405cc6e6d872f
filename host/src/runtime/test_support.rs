//! What the runtime's unit tests share: a runtime for a couple of calls, loading
//! a component with given limits, calling the `count` function of the
//! counter components the tests build, and waiting for optimised code.

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
        .load_with(name, bytes, limits, Grants::default())
        .await
        .unwrap()
}

/// What the plugin's `count` answers, called with `ctx`.
pub(crate) async fn count(
    plugin: &Plugin,
    ctx: CallContext,
) -> Result<serde_json::Value, CallFailure> {
    let out = plugin.call("count", "{}", ctx).await?;
    Ok(out.structured.unwrap()["result"].clone())
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
