//! Where a tools/call's time goes inside Wharf: criterion micro-benchmarks of
//! each step, in the order a call takes them. `cargo xtask bench` runs them and
//! puts the medians in its table (target/bench/results.json).
//!
//! - `json_parse_request`: the request line into rmcp's message types, as the
//!   stdio screen does it for a well-formed request (`json_parse_request_rmcp`:
//!   rmcp's own parse, for comparison);
//! - `dispatch`: registry snapshot, tool lookup, argument schema validation and
//!   re-serialising the arguments for the guest (what `WharfServer::call_tool`
//!   does before the plugin runs);
//! - `instantiate_bare`: wasmtime alone instantiating the echo component from an
//!   `InstancePre` with a pooling allocator (imports are traps, no WASI context):
//!   the floor of instance creation;
//! - `call_unknown_tool`: `Plugin::call` with a name the guest does not know:
//!   Wharf's store, limits and WASI context, instantiation, and the shortest
//!   possible trip into the guest;
//! - `call_echo`: `Plugin::call` of the echo tool, the whole runtime part of a
//!   call (guest execution is this minus `call_unknown_tool`);
//! - `result_conversion`: the runtime's output into an MCP `CallToolResult`;
//! - `json_serialise_result`: the response message into bytes.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use rmcp::model::{ClientJsonRpcMessage, NumberOrString, ServerJsonRpcMessage, ServerResult};
use serde_json::json;
use wasmtime::component::{Component, Linker};
use wasmtime::{
    Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store,
};
use wharf::registry::{Registry, ToolSet};
use wharf::runtime::{CallContext, Runtime, RuntimeOptions};

const REQUEST: &str = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo_echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"wharf-bench","version":"0"}}}}"#;

/// The echo example plugin, where `cargo xtask plugins` puts it.
fn echo_wasm() -> PathBuf {
    let dir = std::env::var_os("WHARF_TEST_PLUGINS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/plugins"));
    let file = dir.join("echo.wasm");
    assert!(
        file.is_file(),
        "{} is missing: run `cargo xtask plugins` first",
        file.display()
    );
    file
}

fn overhead(c: &mut Criterion) {
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let bytes = std::fs::read(echo_wasm()).unwrap();
    let runtime = Runtime::with_options(RuntimeOptions::default()).unwrap();
    assert!(
        runtime.is_pooled(),
        "the pooling allocator is not available"
    );
    let plugin = Arc::new(tokio.block_on(runtime.load("echo", bytes.clone())).unwrap());
    let registry = Registry::new(ToolSet::new(vec![plugin.clone()]));
    let arguments = json!({"text": "hello"});

    let mut group = c.benchmark_group("overhead");
    group.bench_function("json_parse_request", |b| {
        b.iter(|| wharf::stdio::well_formed_request(black_box(REQUEST.as_bytes())).unwrap())
    });
    group.bench_function("json_parse_request_rmcp", |b| {
        b.iter(|| serde_json::from_str::<ClientJsonRpcMessage>(black_box(REQUEST)).unwrap())
    });

    group.bench_function("dispatch", |b| {
        b.iter(|| {
            let set = registry.snapshot();
            let tool = set.get(black_box("echo_echo")).unwrap();
            let arguments = arguments.clone();
            tool.check_arguments(&arguments).unwrap();
            arguments.to_string()
        })
    });

    let (engine, pre) = bare_instance_pre(&bytes);
    group.bench_function("instantiate_bare", |b| {
        b.iter(|| {
            let mut store = Store::new(&engine, ());
            store.set_epoch_deadline(1);
            pre.instantiate(&mut store).unwrap();
        })
    });

    // Calls run as the servers run them: on a single-threaded runtime, where a
    // finished call's store is dropped on the same thread once it has nothing
    // else to do (here: in place, from the ninth call waiting on, since a
    // `block_on` that never waits never runs other tasks), so each iteration
    // pays for one drop.
    let serving = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    group.bench_function("call_unknown_tool", |b| {
        b.iter(|| {
            let outcome = serving.block_on(plugin.call("nope", &json!({}), CallContext::default()));
            assert!(outcome.is_err());
        })
    });

    group.bench_function("call_echo", |b| {
        b.iter(|| {
            serving
                .block_on(plugin.call("echo", &json!({"text": "hello"}), CallContext::default()))
                .unwrap()
        })
    });

    let output = tokio
        .block_on(plugin.call("echo", &json!({"text": "hello"}), CallContext::default()))
        .unwrap();
    group.bench_function("result_conversion", |b| {
        b.iter_batched(
            || output.clone(),
            wharf::server::mcp_result,
            BatchSize::SmallInput,
        )
    });

    let response = ServerJsonRpcMessage::response(
        ServerResult::CallToolResult(wharf::server::mcp_result(output.clone())),
        NumberOrString::Number(7),
    );
    group.bench_function("json_serialise_result", |b| {
        b.iter(|| serde_json::to_vec(black_box(&response)).unwrap())
    });
    group.finish();
}

/// An engine configured as Wharf's for a plugin without a fuel limit (epochs,
/// no fuel, the same pool settings) and an `InstancePre`
/// of the component with every import a trap: instantiation with nothing of
/// Wharf around it.
fn bare_instance_pre(bytes: &[u8]) -> (Engine, wasmtime::component::InstancePre<()>) {
    let mut pool = PoolingAllocationConfig::default();
    pool.total_component_instances(4)
        .total_core_instances(64)
        .max_core_instances_per_component(16)
        .total_memories(8)
        .max_memories_per_component(4)
        .total_tables(8)
        .max_tables_per_component(8)
        .table_elements(100_000)
        .total_stacks(4)
        .total_gc_heaps(4)
        .max_memory_size(256 << 20)
        .linear_memory_keep_resident(2 << 20)
        .table_keep_resident(2 << 20)
        .pagemap_scan(Enabled::Auto)
        .max_unused_warm_slots(4);
    let mut config = Config::new();
    config
        .epoch_interruption(true)
        .wasm_component_model(true)
        .allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    let engine = Engine::new(&config).unwrap();
    let component = Component::new(&engine, bytes).unwrap();
    let mut linker: Linker<()> = Linker::new(&engine);
    linker.define_unknown_imports_as_traps(&component).unwrap();
    let pre = linker.instantiate_pre(&component).unwrap();
    (engine, pre)
}

criterion_group!(benches, overhead);
criterion_main!(benches);
