//! A misbehaving plugin fails its own call, never the server.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::harness::*;

#[test]
fn a_trap_is_a_tool_error() {
    let mut wharf = Wharf::start(&["echo", "misbehave"], &[]);
    let result = call(&mut wharf, 1, "misbehave_trap", json!({}));
    assert_eq!(result["isError"], true);
    let text = first_text(&result);
    assert!(text.starts_with("Tool `misbehave_trap` failed: the plugin crashed: it executed an `unreachable` instruction"), "{text}");
    still_serving(&mut wharf, 2);
}

#[test]
fn a_panic_is_a_tool_error_with_its_message() {
    let mut wharf = Wharf::start(&["echo", "misbehave"], &[]);
    let result = call(&mut wharf, 1, "misbehave_panic", json!({}));
    assert_eq!(result["isError"], true);
    assert!(first_text(&result).contains("deliberate panic"), "{result}");
    still_serving(&mut wharf, 2);
}

#[test]
fn plugin_reported_failures_are_tool_errors() {
    let mut wharf = Wharf::start(&["echo", "misbehave"], &[]);
    let result = call(&mut wharf, 1, "misbehave_fail", json!({}));
    assert_eq!(result["isError"], true);
    assert_eq!(
        first_text(&result),
        "Tool `misbehave_fail` failed: deliberate failure"
    );
    let result = call(&mut wharf, 2, "misbehave_error_result", json!({}));
    assert_eq!(result["isError"], true);
    assert_eq!(first_text(&result), "deliberate tool error");
    still_serving(&mut wharf, 3);
}

#[test]
fn a_spinning_plugin_is_stopped_at_its_deadline() {
    let mut wharf = Wharf::start(&["echo", "misbehave"], &["--timeout-ms", "500"]);
    let started = Instant::now();
    let result = call(&mut wharf, 1, "misbehave_spin", json!({}));
    let took = started.elapsed();
    assert_eq!(result["isError"], true);
    assert_eq!(
        first_text(&result),
        "Tool `misbehave_spin` failed: the call was stopped after its time limit of 500 ms"
    );
    // Generous: this checks that the deadline is enforced, not how precisely.
    assert!(took < Duration::from_secs(10), "took {took:?}");
    still_serving(&mut wharf, 2);
}

#[test]
fn other_calls_proceed_while_one_spins() {
    // The spinner would run for a minute: echo must come back while it still runs.
    let mut wharf = Wharf::start(&["echo", "misbehave"], &["--timeout-ms", "60000"]);
    wharf.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": modern(json!({"name": "misbehave_spin", "arguments": {}}))}));
    for id in 2..5 {
        still_serving(&mut wharf, id);
    }
    let early = wharf.drain(Duration::ZERO);
    assert!(
        early.iter().all(|m| m.get("id") != Some(&json!(1))),
        "the spinner finished first: {early:?}"
    );
    wharf.notify("notifications/cancelled", json!({"requestId": 1}));
    wharf.wait_for_log("call failed: the call was cancelled");
}

#[test]
fn a_cancelled_call_gets_no_response() {
    let mut wharf = Wharf::start(&["echo", "misbehave"], &[]);
    wharf.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": modern(json!({"name": "misbehave_spin", "arguments": {}}))}));
    std::thread::sleep(Duration::from_millis(300));
    wharf.notify(
        "notifications/cancelled",
        json!({"requestId": 1, "reason": "test"}),
    );
    still_serving(&mut wharf, 2);
    let late = wharf.drain(Duration::from_millis(500));
    assert!(
        late.iter().all(|m| m.get("id") != Some(&json!(1))),
        "{late:?}"
    );
    wharf.wait_for_log("call failed: the call was cancelled");
}

#[test]
fn a_memory_bomb_hits_the_memory_limit() {
    let mut wharf = Wharf::start(&["echo", "misbehave"], &["--memory-mib", "32"]);
    let result = call(&mut wharf, 1, "misbehave_alloc", json!({"mib": 64}));
    assert_eq!(result["isError"], true);
    assert_eq!(
        first_text(&result),
        "Tool `misbehave_alloc` failed: the plugin exceeded its memory limit of 32 MiB and was stopped"
    );
    let result = call(&mut wharf, 2, "misbehave_alloc", json!({"mib": 4}));
    assert_eq!(result["isError"], false, "{result}");
    still_serving(&mut wharf, 3);
}

#[test]
fn no_files_and_no_environment_by_default() {
    let mut wharf = Wharf::start(&["echo", "misbehave"], &[]);
    let result = call(
        &mut wharf,
        1,
        "misbehave_read_file",
        json!({"path": "/etc/passwd"}),
    );
    assert!(!first_text(&result).contains("root:"), "{result}");
    let result = call(&mut wharf, 2, "misbehave_env", json!({"name": "PATH"}));
    assert!(!first_text(&result).contains("/usr"), "{result}");
}

#[test]
fn progress_reaches_the_client_before_the_result() {
    let mut wharf = Wharf::start(&["misbehave"], &[]);
    let mut params = modern(json!({"name": "misbehave_log", "arguments": {}}));
    params["_meta"]["progressToken"] = json!("tok");
    wharf.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}));
    let response = wharf.response(&json!(1));
    assert_eq!(result_of(&response)["isError"], false);
    let progress: Vec<_> = wharf
        .drain(Duration::from_millis(100))
        .into_iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert!(
        progress
            .iter()
            .all(|m| m["params"]["progressToken"] == "tok")
    );
    // Three reports in a burst: the first goes out, and the last, which
    // reaches the total; the middle one is coalesced unless the plugin was
    // slow enough between them.
    let values: Vec<f64> = progress
        .iter()
        .map(|m| m["params"]["progress"].as_f64().unwrap())
        .collect();
    assert_eq!(values.first(), Some(&1.0), "{values:?}");
    assert_eq!(values.last(), Some(&3.0), "{values:?}");
    assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
    wharf.wait_for_log("plugin=\"misbehave\"");
}

#[test]
fn a_flood_of_progress_is_rate_limited_to_the_latest() {
    let mut wharf = Wharf::start(&["misbehave"], &[]);
    let mut params =
        modern(json!({"name": "misbehave_progress", "arguments": {"reports": 200_000}}));
    params["_meta"]["progressToken"] = json!(9);
    let started = std::time::Instant::now();
    wharf.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}));
    let response = wharf.response(&json!(1));
    let elapsed = started.elapsed();
    assert_eq!(first_text(result_of(&response)), "reported 200000 times");
    let values: Vec<f64> = wharf
        .drain(Duration::from_millis(100))
        .into_iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| m["params"]["progress"].as_f64().unwrap())
        .collect();
    // One report per 25 ms at most, plus the first and the last.
    let bound = (elapsed.as_millis() / 25) as usize + 2;
    assert!(
        values.len() <= bound,
        "{} reports in {elapsed:?}",
        values.len()
    );
    assert_eq!(values.first(), Some(&1.0), "{values:?}");
    assert_eq!(values.last(), Some(&200_000.0), "{values:?}");
    assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
}

/// Every call runs in an instance no other call has used, including the spare
/// a plugin makes after each call for the next one: a counter in the guest's
/// memory starts from zero each time, one call after another and after a call
/// that trapped.
#[test]
fn no_call_sees_what_an_earlier_call_left_in_memory() {
    let mut wharf = Wharf::start(&["misbehave"], &[]);
    for id in 1..=6 {
        let result = call(&mut wharf, id, "misbehave_calls", json!({}));
        assert_eq!(first_text(&result), "1", "call {id}: {result}");
        if id == 3 {
            let failed = call(&mut wharf, 100, "misbehave_trap", json!({}));
            assert_eq!(failed["isError"], true);
        }
    }
}
