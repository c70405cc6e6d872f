//! The stdio thread's busy-poll (`--stdio-busy-poll-us`): back-to-back calls
//! are answered while it polls, and a client that pauses or leaves finds the
//! server as without it.

use std::process::Command;
use std::time::Duration;

use serde_json::json;

use crate::harness::{Wharf, cache_dir, call, first_text, plugin_dir};

fn expected_state() -> &'static str {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus > 1 {
        "stdio busy-poll on"
    } else {
        "stdio busy-poll off"
    }
}

#[test]
fn back_to_back_calls_are_answered_while_the_thread_polls() {
    let mut wharf = Wharf::start(&["echo"], &[]);
    wharf.wait_for_log(expected_state());
    // This test answers each response at once: after the first sleep, the
    // server polls for the next request instead of sleeping.
    for id in 1..=300 {
        let text = format!("call {id}");
        let result = call(&mut wharf, id, "echo_echo", json!({"text": text}));
        assert_eq!(first_text(&result), text);
    }
    // A pause longer than the budget: the server sleeps, and wakes for this.
    std::thread::sleep(Duration::from_millis(50));
    let result = call(
        &mut wharf,
        301,
        "echo_echo",
        json!({"text": "after a pause"}),
    );
    assert_eq!(first_text(&result), "after a pause");
    // Leaving mid-poll ends the poll and the server.
    for id in 302..=304 {
        assert_eq!(
            first_text(&call(&mut wharf, id, "echo_echo", json!({"text": "x"}))),
            "x"
        );
    }
    assert!(wharf.close().success());
}

#[test]
fn a_zero_budget_turns_the_poll_off() {
    let mut wharf = Wharf::start(&["echo"], &["--stdio-busy-poll-us", "0"]);
    wharf.wait_for_log("stdio busy-poll off");
    for id in 1..=20 {
        let result = call(&mut wharf, id, "echo_echo", json!({"text": "off"}));
        assert_eq!(first_text(&result), "off");
    }
    assert!(wharf.close().success());
}

#[test]
fn a_budget_over_a_millisecond_is_refused() {
    let dir = plugin_dir(&["echo"]);
    let out = Command::new(env!("CARGO_BIN_EXE_wharf"))
        .args(["serve", "--plugins"])
        .arg(dir.path())
        .args(["--stdio-busy-poll-us", "1001"])
        .env("WHARF_CACHE_DIR", cache_dir())
        .output()
        .expect("run wharf");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "invalid value '1001' for '--stdio-busy-poll-us <STDIO_BUSY_POLL_US>': \
             1001 is not in 0..=1000"
        ),
        "{stderr}"
    );
}
