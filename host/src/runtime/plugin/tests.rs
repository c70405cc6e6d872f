//! Plain components from hand-written WAT: loading, calling, refusing.

use super::*;
use crate::runtime::RuntimeOptions;

fn runtime() -> Runtime {
    Runtime::with_options(RuntimeOptions {
        pooling: false,
        max_concurrent_calls: 2,
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
        .call("answer", "{}", CallContext::default())
        .await
        .unwrap();
    assert_eq!(out.structured, Some(serde_json::json!({"result": 42})));
    assert_eq!(
        plugin.call("nope", "{}", CallContext::default()).await,
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
