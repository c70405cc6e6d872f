//! Limits beyond time and memory: stack, output size, fuel, concurrency, and the
//! server's memory after a bomb.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::harness::*;

#[test]
fn deep_recursion_is_a_tool_error() {
    let mut wharf = Wharf::start(&["echo", "misbehave"], &[]);
    let result = call(
        &mut wharf,
        1,
        "misbehave_recurse",
        json!({"depth": 100_000_000u64}),
    );
    assert_eq!(result["isError"], true);
    let text = first_text(&result);
    assert!(
        text.starts_with("Tool `misbehave_recurse` failed: the plugin crashed: "),
        "{text}"
    );
    still_serving(&mut wharf, 2);
}

#[test]
fn a_result_over_the_output_limit_is_discarded() {
    let mut wharf = Wharf::start(&["echo", "misbehave"], &["--max-output-bytes", "100000"]);
    let result = call(&mut wharf, 1, "misbehave_big_output", json!({"kib": 1024}));
    assert_eq!(result["isError"], true);
    assert_eq!(
        first_text(&result),
        "Tool `misbehave_big_output` failed: the result is 1048576 bytes, more than the \
         output limit of 100000 bytes, so it was discarded"
    );
    let result = call(&mut wharf, 2, "misbehave_big_output", json!({"kib": 64}));
    assert_eq!(result["isError"], false);
    assert_eq!(first_text(&result).len(), 64 * 1024);
    still_serving(&mut wharf, 3);
}

#[test]
fn fuel_stops_a_spinning_plugin() {
    let mut wharf = Wharf::start(&["echo", "misbehave"], &["--fuel", "5000000"]);
    let started = Instant::now();
    let result = call(&mut wharf, 1, "misbehave_spin", json!({}));
    assert_eq!(
        first_text(&result),
        "Tool `misbehave_spin` failed: the plugin used up its fuel limit of 5000000 units \
         and was stopped"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    still_serving(&mut wharf, 2);
}

#[test]
fn a_plugin_over_its_concurrency_limit_is_refused() {
    let mut wharf = Wharf::start_with_manifests(
        &["echo", "misbehave"],
        &[(
            "misbehave",
            "[limits]\nmax-concurrent-calls = 1\ntimeout-ms = 3000\n",
        )],
        &[],
    );
    send_call(&mut wharf, 1, "misbehave_spin", json!({}));
    std::thread::sleep(Duration::from_millis(300));
    let result = call(&mut wharf, 2, "misbehave_spin", json!({}));
    assert_eq!(
        first_text(&result),
        "Tool `misbehave_spin` failed: the plugin is already running its limit of 1 \
         concurrent calls (max-concurrent-calls); retry when one has finished"
    );
    still_serving(&mut wharf, 3);
    let first = wharf.response(&json!(1));
    assert_eq!(
        first_text(result_of(&first)),
        "Tool `misbehave_spin` failed: the call was stopped after its time limit of 3000 ms"
    );
}

#[test]
fn the_server_over_its_concurrency_limit_refuses() {
    let mut wharf = Wharf::start(
        &["echo", "misbehave"],
        &["--max-concurrent-calls", "1", "--timeout-ms", "2000"],
    );
    send_call(&mut wharf, 1, "misbehave_spin", json!({}));
    std::thread::sleep(Duration::from_millis(300));
    let result = call(&mut wharf, 2, "echo_echo", json!({"text": "hi"}));
    assert_eq!(
        first_text(&result),
        "Tool `echo_echo` failed: the server is already running its limit of 1 concurrent \
         calls (--max-concurrent-calls); retry shortly"
    );
    let first = wharf.response(&json!(1));
    assert_eq!(result_of(&first)["isError"], true);
    still_serving(&mut wharf, 3);
}

/// Over stdio the protocol is served on one thread. A call whose guest runs for
/// a whole epoch tick moves to the worker threads, leaving that thread free.
/// (That short calls stay is checked by `runtime::placement`'s tests: in a debug
/// build even a short call may last a tick.)
#[test]
fn over_stdio_a_long_call_moves_to_the_workers() {
    const MOVED: &str = "its call moves to the workers";
    let mut wharf = Wharf::start(&["echo", "misbehave"], &["--timeout-ms", "1500"]);
    still_serving(&mut wharf, 1);
    send_call(&mut wharf, 20, "misbehave_spin", json!({}));
    wharf.wait_for_log(MOVED);
    // The serving thread is free while the guest spins on a worker.
    let started = Instant::now();
    still_serving(&mut wharf, 21);
    assert!(started.elapsed() < Duration::from_millis(1000));
    let spun = wharf.response(&json!(20));
    assert_eq!(
        first_text(result_of(&spun)),
        "Tool `misbehave_spin` failed: the call was stopped after its time limit of 1500 ms"
    );
    still_serving(&mut wharf, 22);
}

#[test]
fn memory_returns_to_baseline_after_a_bomb() {
    let mut wharf = Wharf::start(&["echo", "misbehave"], &["--memory-mib", "256"]);
    still_serving(&mut wharf, 1);
    let baseline = wharf.rss_kib();
    for id in 2..6 {
        let result = call(&mut wharf, id, "misbehave_alloc", json!({"mib": 200}));
        assert_eq!(result["isError"], false, "{result}");
        let result = call(&mut wharf, id + 10, "misbehave_alloc", json!({"mib": 1024}));
        assert_eq!(result["isError"], true, "{result}");
    }
    still_serving(&mut wharf, 20);
    let after = wharf.rss_kib();
    assert!(
        after < baseline + 64 * 1024,
        "RSS grew from {baseline} KiB to {after} KiB"
    );
}

/// mimalloc asks for transparent huge pages; with them, memory freed and
/// touched again after a compile or a call was zeroed 2 MiB at a time.
#[test]
fn the_server_runs_without_transparent_huge_pages() {
    let mut wharf = Wharf::start(&["echo"], &[]);
    still_serving(&mut wharf, 1);
    assert_eq!(wharf.proc_status("THP_enabled").as_deref(), Some("0"));
}

#[test]
fn hostile_calls_run_alongside_well_behaved_ones() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let mut wharf = Wharf::start(
        &["echo", "misbehave"],
        &["--timeout-ms", "2000", "--memory-mib", "64"],
    );
    let hostile = [
        ("misbehave_spin", json!({})),
        ("misbehave_alloc", json!({"mib": 512})),
        ("misbehave_recurse", json!({"depth": 100_000_000u64})),
        ("misbehave_trap", json!({})),
        ("misbehave_panic", json!({})),
        ("misbehave_big_output", json!({"kib": 8192})),
        ("misbehave_fetch", json!({"url": format!("http://{addr}/")})),
    ];
    for (id, (tool, arguments)) in hostile.iter().enumerate() {
        send_call(&mut wharf, id as i64 + 1, tool, arguments.clone());
    }
    let started = Instant::now();
    for id in 100..110 {
        still_serving(&mut wharf, id);
    }
    assert!(
        // Generous: this checks that nobody waits for the hostile calls to end.
        started.elapsed() < Duration::from_secs(15),
        "well-behaved calls took {:?}",
        started.elapsed()
    );
    for (id, (tool, _)) in hostile.iter().enumerate() {
        let response = wharf.response(&json!(id as i64 + 1));
        assert_eq!(result_of(&response)["isError"], true, "{tool}: {response}");
    }
    let result = call(&mut wharf, 200, "misbehave_connect", json!({"addr": addr}));
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(
        first_text(&result),
        format!(
            "Tool `misbehave_connect` failed: the plugin tried to connect to {addr}, which \
             was refused: plugins get no sockets (outbound HTTP goes through wasi:http and \
             its manifest's `[http] allow`)"
        )
    );
    assert!(
        listener.accept().is_err(),
        "something connected to the test port"
    );
    still_serving(&mut wharf, 201);
}
