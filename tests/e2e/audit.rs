//! The audit trail (`--audit-log`): the exact line of each call and plugin
//! change, over stdio and HTTP, and the file's rotation.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::harness::{
    MODERN, PATIENCE, Wharf, call, first_text, meta, modern, plugin_dir, plugin_file, result_of,
    serve_http,
};
use crate::http_client::post;

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const HEADER_TRACE_ID: &str = "0af7651916cd43dd8448eb211c80319c";
const HEADER_TRACEPARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

/// The SHA-256 of a built plugin, as audit lines give it.
fn digest(plugin: &str) -> String {
    let bytes = std::fs::read(plugin_file(plugin)).unwrap();
    Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The lines of an audit file, each with `time` checked and removed, and
/// `duration_ms` (of call lines) checked to be a non-negative number and removed.
fn lines_of(text: &str) -> Vec<Value> {
    text.lines()
        .filter(|line| line.starts_with("{\"time\""))
        .map(|line| {
            let mut value: Value = serde_json::from_str(line).unwrap();
            let object = value.as_object_mut().unwrap();
            let time = object.remove("time").unwrap();
            let time = time.as_str().unwrap();
            assert!(time.len() == 27 && time.ends_with('Z'), "{time}");
            if object["event"] == "call" {
                let ms = object.remove("duration_ms").unwrap();
                assert!(ms.as_f64().is_some_and(|ms| ms >= 0.0), "{line}");
            }
            value
        })
        .collect()
}

fn lines(path: &Path) -> Vec<Value> {
    lines_of(&std::fs::read_to_string(path).unwrap_or_default())
}

/// Waits until `path` has at least `count` lines.
fn wait_for_lines(path: &Path, count: usize) -> Vec<Value> {
    let started = Instant::now();
    loop {
        let lines = lines(path);
        if lines.len() >= count || started.elapsed() > PATIENCE {
            return lines;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn loaded(plugin: &str, dir: &Path) -> Value {
    json!({"event": "plugin", "change": "loaded", "plugin": plugin,
        "digest": digest(plugin), "previous_digest": null,
        "file": dir.join(format!("{plugin}.wasm")).display().to_string()})
}

fn call_line(tool: &str, plugin: Option<&str>, outcome: &str, limit: Option<&str>) -> Value {
    json!({"event": "call", "trace_id": null, "session_id": null, "caller": null, "tool": tool,
        "plugin": plugin, "digest": plugin.map(digest), "outcome": outcome, "limit": limit})
}

fn with(mut line: Value, key: &str, value: Value) -> Value {
    line[key] = value;
    line
}

fn audit_path(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("audit.log")
}

#[test]
fn stdio_calls_and_plugin_loads_have_exact_audit_lines() {
    let logs = tempfile::tempdir().unwrap();
    let path = audit_path(&logs);
    let plugins = plugin_dir(&["echo", "misbehave"]);
    let mut wharf = Wharf::start_in(
        plugins.path(),
        &["--audit-log", path.to_str().unwrap(), "--fuel", "5000000"],
    );
    // The call's trace comes from `_meta.traceparent` (SEP-414).
    let mut params = modern(json!({"name": "echo_echo", "arguments": {"text": "secret"}}));
    params["_meta"]["traceparent"] = json!(TRACEPARENT);
    let response = wharf.request(json!(1), "tools/call", params);
    assert_eq!(first_text(result_of(&response)), "secret");
    call(&mut wharf, 2, "echo_echo", json!({"wrong": 1}));
    let unknown = wharf.modern(3, "tools/call", json!({"name": "nope", "arguments": {}}));
    assert!(unknown.get("error").is_some(), "{unknown}");
    call(&mut wharf, 4, "misbehave_spin", json!({}));

    let lines = lines(&path);
    assert_eq!(
        lines,
        vec![
            loaded("echo", plugins.path()),
            loaded("misbehave", plugins.path()),
            with(
                call_line("echo_echo", Some("echo"), "success", None),
                "trace_id",
                json!(TRACE_ID)
            ),
            call_line("echo_echo", Some("echo"), "invalid_arguments", None),
            call_line("nope", None, "unknown_tool", None),
            call_line("misbehave_spin", Some("misbehave"), "failed", Some("fuel")),
        ]
    );
    // Arguments stay out unless asked for.
    assert!(!std::fs::read_to_string(&path).unwrap().contains("secret"));
}

#[test]
fn arguments_are_audited_only_with_audit_arguments() {
    let logs = tempfile::tempdir().unwrap();
    let path = audit_path(&logs);
    let mut wharf = Wharf::start(
        &["echo"],
        &["--audit-log", path.to_str().unwrap(), "--audit-arguments"],
    );
    call(&mut wharf, 1, "echo_echo", json!({"text": "kept"}));
    let lines = lines(&path);
    assert_eq!(
        lines[1],
        with(
            call_line("echo_echo", Some("echo"), "success", None),
            "arguments",
            json!({"text": "kept"})
        )
    );
}

#[test]
fn secret_fields_of_the_manifest_are_redacted() {
    let logs = tempfile::tempdir().unwrap();
    let path = audit_path(&logs);
    let plugins = plugin_dir(&["echo"]);
    std::fs::write(
        plugins.path().join("echo.toml"),
        "[audit]\nsecret = [\"text\"]\n",
    )
    .unwrap();
    let mut wharf = Wharf::start_in(
        plugins.path(),
        &["--audit-log", path.to_str().unwrap(), "--audit-arguments"],
    );
    call(&mut wharf, 1, "echo_echo", json!({"text": "hunter2"}));
    assert_eq!(
        lines(&path)[1],
        with(
            call_line("echo_echo", Some("echo"), "success", None),
            "arguments",
            json!({"text": "[redacted]"})
        )
    );
    assert!(!std::fs::read_to_string(&path).unwrap().contains("hunter2"));
}

#[test]
fn an_authenticated_http_call_names_its_caller() {
    let logs = tempfile::tempdir().unwrap();
    let path = audit_path(&logs);
    let (_wharf, addr) = serve_http(
        &["echo"],
        &[
            "--audit-log",
            path.to_str().unwrap(),
            "--auth-token",
            "s3cret",
        ],
    );
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params":
        {"name": "echo_echo", "arguments": {"text": "a"}, "_meta": meta()}});
    let headers = [
        ("Authorization", "Bearer s3cret"),
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "echo_echo"),
    ];
    assert_eq!(post(addr, &headers, &body).status, 200);
    assert_eq!(
        wait_for_lines(&path, 2)[1],
        with(
            call_line("echo_echo", Some("echo"), "success", None),
            "caller",
            json!({"auth": "static-token", "subject": null})
        )
    );
}

#[test]
fn audit_lines_can_go_to_stderr() {
    let mut wharf = Wharf::start(&["echo"], &["--audit-log", "-"]);
    call(&mut wharf, 1, "echo_echo", json!({"text": "x"}));
    wharf.wait_for_log("\"outcome\":\"success\"");
    let lines = lines_of(&wharf.stderr());
    assert_eq!(
        lines.last().unwrap(),
        &call_line("echo_echo", Some("echo"), "success", None)
    );
}

#[test]
fn http_calls_carry_the_header_trace_and_the_legacy_session() {
    let logs = tempfile::tempdir().unwrap();
    let path = audit_path(&logs);
    let (_wharf, addr) = serve_http(&["echo"], &["--audit-log", path.to_str().unwrap()]);
    let body = |id: i64, traceparent: Option<&str>| {
        let mut params = json!({"name": "echo_echo", "arguments": {"text": "h"}, "_meta": meta()});
        if let Some(traceparent) = traceparent {
            params["_meta"]["traceparent"] = json!(traceparent);
        }
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
    };
    let headers = [
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "echo_echo"),
        ("traceparent", HEADER_TRACEPARENT),
    ];
    // The header gives the trace when `_meta` has none ...
    assert_eq!(post(addr, &headers, &body(1, None)).status, 200);
    // ... and `_meta.traceparent` wins over it.
    assert_eq!(
        post(addr, &headers, &body(2, Some(TRACEPARENT))).status,
        200
    );

    // A legacy session's calls carry its id.
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "legacy", "version": "1"}}});
    let response = post(addr, &[], &init);
    let session = response.header("mcp-session-id").unwrap().to_string();
    response.events();
    let legacy = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(addr, &legacy, &initialized).status, 202);
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "echo_echo", "arguments": {"text": "legacy"}}});
    let events = post(addr, &legacy, &call).events();
    assert!(events.iter().any(|e| e["id"] == 3), "{events:?}");

    let echo = || call_line("echo_echo", Some("echo"), "success", None);
    assert_eq!(
        wait_for_lines(&path, 4)[1..],
        [
            with(echo(), "trace_id", json!(HEADER_TRACE_ID)),
            with(echo(), "trace_id", json!(TRACE_ID)),
            with(echo(), "session_id", json!(session)),
        ]
    );
}

#[test]
fn reloads_are_audited_with_both_digests() {
    let logs = tempfile::tempdir().unwrap();
    let path = audit_path(&logs);
    let plugins = plugin_dir(&["echo"]);
    let _wharf = Wharf::start_in(plugins.path(), &["--audit-log", path.to_str().unwrap()]);
    let file = plugins.path().join("echo.wasm");
    let mut bytes = std::fs::read(&file).unwrap();
    // A custom section: new bytes, the same tools.
    bytes.extend_from_slice(&[0x00, 0x04, 0x03, b'w', b'h', b'f']);
    let new_digest: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    crate::reload::replace_atomically(&file, &bytes);
    let lines = wait_for_lines(&path, 2);
    assert_eq!(
        lines[1],
        json!({"event": "plugin", "change": "loaded", "plugin": "echo",
            "digest": new_digest, "previous_digest": digest("echo"),
            "file": file.display().to_string()})
    );
    std::fs::remove_file(&file).unwrap();
    let lines = wait_for_lines(&path, 3);
    assert_eq!(
        lines[2],
        json!({"event": "plugin", "change": "removed", "plugin": "echo",
            "digest": new_digest, "previous_digest": null, "file": null})
    );
}

#[test]
fn the_audit_file_is_rotated_by_size() {
    let logs = tempfile::tempdir().unwrap();
    let path = audit_path(&logs);
    let mut wharf = Wharf::start(
        &["echo"],
        &[
            "--audit-log",
            path.to_str().unwrap(),
            "--audit-max-bytes",
            "1024",
            "--audit-keep",
            "1",
        ],
    );
    // ~300 bytes a line: the fourth and later lines start new files.
    for id in 1..=8 {
        call(&mut wharf, id, "echo_echo", json!({"text": "r"}));
    }
    let current = lines(&path);
    let rotated = lines(&logs.path().join("audit.log.1"));
    assert!(!logs.path().join("audit.log.2").exists());
    assert!(!current.is_empty() && !rotated.is_empty());
    assert!(std::fs::metadata(&path).unwrap().len() <= 1024);
    // Nothing but whole lines, the newest last.
    assert_eq!(
        current.last().unwrap(),
        &call_line("echo_echo", Some("echo"), "success", None)
    );
}

#[test]
fn an_audit_file_that_cannot_be_opened_stops_the_server_at_start() {
    let plugins = plugin_dir(&["echo"]);
    let output = Command::new(env!("CARGO_BIN_EXE_wharf"))
        .args(["serve", "--plugins"])
        .arg(plugins.path())
        .args(["--audit-log", "/nonexistent-dir/audit.log"])
        .env("WHARF_CACHE_DIR", crate::harness::cache_dir())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "cannot open the audit log /nonexistent-dir/audit.log: No such file or directory (os error 2)"
        ),
        "{stderr}"
    );
}
