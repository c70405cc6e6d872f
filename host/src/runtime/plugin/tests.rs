//! Plain components from hand-written WAT: loading, calling, refusing.
use serde_json::json;

use wasmtime::Store;

use super::*;
use crate::runtime::state::{CallContext, HostState};
use crate::runtime::{CallFailure, Runtime, RuntimeOptions};

fn runtime() -> Runtime {
    runtime_with(false, 2)
}

fn runtime_with(pooling: bool, max_concurrent_calls: usize) -> Runtime {
    Runtime::with_options(RuntimeOptions {
        pooling,
        max_concurrent_calls,
        ..RuntimeOptions::default()
    })
    .unwrap()
}

/// A plain component exporting `answer: func() -> u32`, whose core module
/// runs `start` at instantiation.
fn answer(start: &str) -> Vec<u8> {
    wat::parse_str(format!(
        r#"(component
            (core module $m
                (func $start {start})
                (start $start)
                (func (export "answer") (result i32) i32.const 42))
            (core instance $i (instantiate $m))
            (func (export "answer") (result u32) (canon lift (core func $i "answer"))))"#
    ))
    .unwrap()
}

#[tokio::test]
async fn a_hand_written_plain_component_is_a_tool() {
    let plugin = runtime().load("wat", answer("")).await.unwrap();
    assert_eq!(plugin.kind(), PluginKind::Plain);
    assert_eq!(plugin.tools()[0].name, "answer");
    assert_eq!(
        plugin.tools()[0].description.as_deref(),
        Some("answer() -> u32")
    );
    let out = plugin
        .call("answer", &json!({}), CallContext::default())
        .await
        .unwrap();
    assert_eq!(out.structured, Some(serde_json::json!({"result": 42})));
    assert_eq!(
        plugin
            .call("nope", &json!({}), CallContext::default())
            .await,
        Err(CallFailure::UnknownTool("nope".into()))
    );
}

#[tokio::test]
async fn a_component_that_cannot_start_is_refused() {
    let error = runtime()
        .load("wat", answer("unreachable"))
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "starting an instance failed: the plugin crashed: it executed an `unreachable` \
         instruction (a panic or abort)"
    );
}

/// `ns:pkg/math@1.0.0` with `add`, next to exports that are not tools: a
/// `wasi:cli/run` interface and componentize-py's `exports` with `init`.
const MIXED: &str = r#"(component
    (core module $m
        (func (export "add") (param i32 i32) (result i32) local.get 0 local.get 1 i32.add)
        (func (export "run") (result i32) i32.const 0)
        (func (export "init")))
    (core instance $i (instantiate $m))
    (func $add (param "a" s32) (param "b" s32) (result s32) (canon lift (core func $i "add")))
    (func $run (result (result)) (canon lift (core func $i "run")))
    (func $init (canon lift (core func $i "init")))
    (instance $math (export "add" (func $add)))
    (instance $run (export "run" (func $run)))
    (instance $init (export "init" (func $init)))
    (export "ns:pkg/math@1.0.0" (instance $math))
    (export "wasi:cli/run@0.2.0" (instance $run))
    (export "exports" (instance $init)))"#;

#[tokio::test]
async fn interface_functions_are_tools_and_system_exports_are_not() {
    let bytes = wat::parse_str(MIXED).unwrap();
    let docs = br#"{"interfaces": {"math": {"funcs": {"add": {"docs": "Adds two numbers."}}}}}"#;
    let mut section = vec![1];
    section.extend_from_slice(docs);
    let bytes =
        crate::docs::with_section(&bytes, crate::docs::FULL_SECTION_NAME, Some(&section)).unwrap();
    let plugin = runtime().load("calc", bytes).await.unwrap();
    let names: Vec<&str> = plugin.tools().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["math.add"]);
    assert!(plugin.skipped().is_empty(), "{:?}", plugin.skipped());
    assert_eq!(
        plugin.tools()[0].description.as_deref(),
        Some("Adds two numbers.")
    );
    let out = plugin
        .call(
            "math.add",
            &json!({"a": 2, "b": -5}),
            CallContext::default(),
        )
        .await
        .unwrap();
    assert_eq!(out.structured, Some(serde_json::json!({"result": -3})));
    assert_eq!(
        plugin
            .call("math.add", &json!({"a": 2}), CallContext::default())
            .await,
        Err(CallFailure::InvalidArguments(
            "at (root): missing required property `b`".into()
        ))
    );
}

#[tokio::test]
async fn a_component_with_only_system_exports_is_refused() {
    let only_run = r#"(component
        (core module $m (func (export "run") (result i32) i32.const 0))
        (core instance $i (instantiate $m))
        (func $run (result (result)) (canon lift (core func $i "run")))
        (instance $run (export "run" (func $run)))
        (export "wasi:cli/run@0.2.0" (instance $run)))"#;
    let error = runtime()
        .load("cli", wat::parse_str(only_run).unwrap())
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "it exports neither `wharf:plugin/tools` nor any function usable as a tool"
    );
}

/// A component importing `wharf:plugin/host@0.1.0` as it was before `ask`,
/// `request-state` and `set-request-state` were added (a subset of today's
/// functions), calling `is-cancelled` from its tool.
const OLD_HOST_IMPORT: &str = r#"(component
    (import "wharf:plugin/host@0.1.0" (instance $host
        (export "is-cancelled" (func (result bool)))
        (export "config" (func (param "key" string) (result (option string))))))
    (core func $is_cancelled (canon lower (func $host "is-cancelled")))
    (core module $m
        (import "host" "is-cancelled" (func $is_cancelled (result i32)))
        (func (export "cancelled") (result i32) call $is_cancelled))
    (core instance $h (export "is-cancelled" (func $is_cancelled)))
    (core instance $i (instantiate $m (with "host" (instance $h))))
    (func (export "cancelled") (result bool) (canon lift (core func $i "cancelled"))))"#;

#[tokio::test]
async fn components_built_against_the_older_host_interface_still_link() {
    let bytes = wat::parse_str(OLD_HOST_IMPORT).unwrap();
    let plugin = runtime().load("old", bytes).await.unwrap();
    assert_eq!(plugin.imports(), ["wharf:plugin/host@0.1.0"]);
    let out = plugin
        .call("cancelled", &json!({}), CallContext::default())
        .await
        .unwrap();
    assert_eq!(out.structured, Some(serde_json::json!({"result": false})));
}

/// A pooled runtime that allows one call at a time.
fn one_call_at_a_time() -> Runtime {
    runtime_with(true, 1)
}

#[tokio::test(flavor = "current_thread")]
async fn a_finished_call_ends_at_once_and_its_store_goes_when_the_thread_yields() {
    let runtime = one_call_at_a_time();
    let plugin = runtime.load("wat", answer("")).await.unwrap();
    let (events, mut received) = tokio::sync::mpsc::unbounded_channel();
    let ctx = CallContext {
        events: Some(events),
        ..CallContext::default()
    };
    plugin.call("answer", &json!({}), ctx).await.unwrap();
    assert_eq!(runtime.retirer.waiting(), 1, "the store waits");
    assert_eq!(
        received.try_recv(),
        Err(tokio::sync::mpsc::error::TryRecvError::Disconnected),
        "the call's event channel closed with the call"
    );
    tokio::task::yield_now().await;
    tokio::task::yield_now().await;
    assert_eq!(runtime.retirer.waiting(), 0, "the store was dropped");
}

#[tokio::test(flavor = "current_thread")]
async fn stores_waiting_to_be_dropped_never_fill_the_pool() {
    let runtime = one_call_at_a_time();
    assert!(runtime.is_pooled());
    let plugin = runtime.load("wat", answer("")).await.unwrap();
    // Back to back, never waiting on anything that yields to the dropping tasks.
    for _ in 0..3 * crate::runtime::limits::RETIRE_HEADROOM {
        let out = plugin
            .call("answer", &json!({}), CallContext::default())
            .await;
        assert_eq!(
            out.unwrap().structured,
            Some(serde_json::json!({"result": 42}))
        );
        assert!(runtime.retirer.waiting() <= crate::runtime::limits::RETIRE_HEADROOM);
    }
}

#[test]
fn without_a_runtime_a_store_is_dropped_in_place() {
    let runtime = one_call_at_a_time();
    let plugin = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(runtime.load("wat", answer("")))
        .unwrap();
    let state = HostState::new(
        plugin.name().into(),
        plugin.sandbox.clone(),
        CallContext::default(),
        runtime.epoch.use_epoch(),
    )
    .unwrap();
    runtime.retirer.retire(
        Store::new(&runtime.unmetered.optimized.engine, state),
        Vec::new(),
        true,
    );
    assert_eq!(runtime.retirer.waiting(), 0);
}
