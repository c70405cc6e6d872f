//! Streamable HTTP operations: concurrency with a hanging plugin, graceful
//! shutdown, `/healthz` and `/metrics`.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::*;
use crate::http_client::{post, send};

/// Calls a tool with a 2026-07-28 request; returns the status and the body.
fn call(addr: SocketAddr, id: i64, name: &str, arguments: Value) -> (u16, Value) {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": modern(json!({"name": name, "arguments": arguments}))});
    let headers = [
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", name),
    ];
    let response = post(addr, &headers, &body);
    (response.status, response.json())
}

#[test]
fn a_spinning_plugin_never_delays_other_calls() {
    // One spinner keeps a core busy for its whole time limit; more would only
    // starve the other tests running beside this one on a small machine.
    let (_wharf, addr) = serve_http(&["echo", "misbehave"], &["--timeout-ms", "2500"]);
    // Warm up so the timings below measure serving, not first-call effects.
    assert_eq!(call(addr, 0, "echo_echo", json!({"text": "warm"})).0, 200);
    let spinner = std::thread::spawn(move || call(addr, 100, "misbehave_spin", json!({})));
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    let callers: Vec<_> = (0..16)
        .map(|i| {
            std::thread::spawn(move || {
                let began = Instant::now();
                let (status, body) = call(addr, i, "echo_echo", json!({"text": format!("n{i}")}));
                assert_eq!(status, 200);
                assert_eq!(first_text(result_of(&body)), format!("n{i}"));
                began.elapsed()
            })
        })
        .collect();
    for caller in callers {
        let took = caller.join().unwrap();
        assert!(took < Duration::from_secs(2), "an echo call took {took:?}");
    }
    assert!(started.elapsed() < Duration::from_secs(3));
    let (status, body) = spinner.join().unwrap();
    assert_eq!(status, 200);
    assert_eq!(result_of(&body)["isError"], true, "{body}");
}

#[test]
fn shutdown_lets_calls_in_flight_finish() {
    let (mut wharf, addr) = serve_http(&["misbehave"], &["--timeout-ms", "1500"]);
    let spinner = std::thread::spawn(move || call(addr, 1, "misbehave_spin", json!({})));
    std::thread::sleep(Duration::from_millis(400));
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &wharf.pid().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    // The call runs to its own time limit and its answer still arrives.
    let (status, body) = spinner.join().unwrap();
    assert_eq!(status, 200);
    let result = result_of(&body);
    assert_eq!(result["isError"], true, "{body}");
    let status = wharf
        .wait_exit(Duration::from_secs(10))
        .unwrap_or_else(|| panic!("wharf did not exit:\n{}", wharf.stderr()));
    assert!(status.success(), "{status}:\n{}", wharf.stderr());
    assert!(wharf.stderr().contains("shutting down"));
    // No new connections once it is gone.
    assert!(std::net::TcpStream::connect(addr).is_err());
}

#[test]
fn healthz_and_metrics_report_state() {
    let (_wharf, addr) = serve_http(&["echo", "misbehave"], &[]);
    let health = send(addr, "GET", "/healthz", &[], b"");
    assert_eq!(health.status, 200);
    assert_eq!(health.content_type(), "application/json");
    let health = health.json();
    assert_eq!(health["status"], "ok");

    assert_eq!(call(addr, 1, "echo_echo", json!({"text": "m"})).0, 200);
    assert_eq!(call(addr, 2, "misbehave_fail", json!({})).0, 200);
    let metrics = send(addr, "GET", "/metrics", &[], b"");
    assert_eq!(metrics.status, 200);
    assert!(
        metrics
            .content_type()
            .starts_with("text/plain; version=0.0.4")
    );
    let text = metrics.text();
    for line in [
        "wharf_tool_calls_total{tool=\"echo_echo\"} 1",
        "wharf_tool_errors_total{tool=\"echo_echo\"} 0",
        "wharf_tool_calls_total{tool=\"misbehave_fail\"} 1",
        "wharf_tool_errors_total{tool=\"misbehave_fail\"} 1",
        "wharf_tool_call_duration_seconds_count{tool=\"echo_echo\"} 1",
        "wharf_tool_call_duration_seconds_bucket{tool=\"echo_echo\",le=\"+Inf\"} 1",
        "wharf_plugins_loaded 2",
        "wharf_reloads_total 0",
        "wharf_tool_calls_in_flight 0",
    ] {
        assert!(text.lines().any(|l| l == line), "{line:?} missing:\n{text}");
    }
    assert_eq!(send(addr, "GET", "/nope", &[], b"").status, 404);
}
