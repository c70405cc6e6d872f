use std::path::Path;

use serde_json::{Value, json};

use super::sink::numbered;
use super::*;

fn settings(path: &Path, max_bytes: u64, keep: usize, arguments: bool) -> AuditSettings {
    AuditSettings {
        destination: AuditDestination::File(path.to_path_buf()),
        max_bytes,
        keep,
        arguments,
    }
}

/// The lines of `path`, each parsed, with `time` checked for its form and taken out.
fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| {
            let mut value: Value = serde_json::from_str(line).unwrap();
            let time = value.as_object_mut().unwrap().remove("time").unwrap();
            let time = time.as_str().unwrap();
            chrono::DateTime::parse_from_rfc3339(time).unwrap();
            assert!(time.ends_with('Z') && time.len() == 27, "{time}");
            value
        })
        .collect()
}

fn call<'a>(arguments: Option<&'a Value>) -> CallEntry<'a> {
    CallEntry {
        trace_id: Some("4bf92f3577b34da6a3ce929d0e0e4736"),
        session_id: None,
        caller: None,
        tool: "echo",
        plugin: Some("echo"),
        digest: Some("ab12"),
        outcome: CallOutcome::Success,
        duration_ms: 1.25,
        limit: None,
        arguments,
    }
}

#[test]
fn a_call_line_has_every_field_in_order_and_no_arguments_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.log");
    let log = AuditLog::open(&settings(&path, 1 << 20, 2, false)).unwrap();
    let arguments = json!({"message": "secret"});
    log.call(&call(Some(&arguments)));
    let text = std::fs::read_to_string(&path).unwrap();
    let (time, rest) = text.split_once(",\"event\"").unwrap();
    assert!(time.starts_with("{\"time\":\""), "{text}");
    assert_eq!(
        rest,
        ":\"call\",\"trace_id\":\"4bf92f3577b34da6a3ce929d0e0e4736\",\"session_id\":null,\
         \"caller\":null,\"tool\":\"echo\",\"plugin\":\"echo\",\"digest\":\"ab12\",\"outcome\":\"success\",\
         \"duration_ms\":1.25,\"limit\":null}\n"
    );
}

#[test]
fn arguments_are_written_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.log");
    let log = AuditLog::open(&settings(&path, 1 << 20, 2, true)).unwrap();
    assert!(log.wants_arguments());
    let arguments = json!({"message": "hi"});
    log.call(&call(Some(&arguments)));
    assert_eq!(lines(&path)[0]["arguments"], json!({"message": "hi"}));
}

#[test]
fn secret_fields_are_redacted_at_any_depth_for_their_plugin_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.log");
    let log = AuditLog::open(&settings(&path, 1 << 20, 2, true)).unwrap();
    log.set_secret_fields("echo", Arc::from(["password".to_string()]));
    let arguments = json!({"user": "ann", "password": "hunter2",
        "nested": [{"password": {"deep": 1}, "keep": "x"}]});
    log.call(&call(Some(&arguments)));
    log.call(&CallEntry {
        plugin: Some("other"),
        ..call(Some(&arguments))
    });
    // Removed from the manifest (or the plugin removed): written as sent.
    log.set_secret_fields("echo", Arc::from([]));
    log.call(&call(Some(&arguments)));
    let lines = lines(&path);
    assert_eq!(
        lines[0]["arguments"],
        json!({"user": "ann", "password": "[redacted]",
            "nested": [{"password": "[redacted]", "keep": "x"}]})
    );
    assert_eq!(lines[1]["arguments"], arguments);
    assert_eq!(lines[2]["arguments"], arguments);
}

#[test]
fn an_authenticated_caller_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.log");
    let log = AuditLog::open(&settings(&path, 1 << 20, 2, false)).unwrap();
    let caller = Caller::static_token();
    log.call(&CallEntry {
        caller: Some(&caller),
        ..call(None)
    });
    assert_eq!(
        lines(&path)[0]["caller"],
        json!({"auth": "static-token", "subject": null})
    );
}

#[test]
fn a_plugin_line_names_the_change_and_both_digests() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.log");
    let log = AuditLog::open(&settings(&path, 1 << 20, 2, false)).unwrap();
    log.plugin(&PluginEntry {
        change: PluginChange::Loaded,
        plugin: "echo",
        digest: Some("new"),
        previous_digest: Some("old"),
        file: Some("/p/echo.wasm"),
    });
    assert_eq!(
        lines(&path),
        vec![json!({
            "event": "plugin", "change": "loaded", "plugin": "echo", "digest": "new",
            "previous_digest": "old", "file": "/p/echo.wasm"
        })]
    );
}

#[test]
fn the_file_is_appended_to_not_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.log");
    std::fs::write(
        &path,
        "{\"time\":\"2026-01-01T00:00:00.000000Z\",\"event\":\"old\"}\n",
    )
    .unwrap();
    let log = AuditLog::open(&settings(&path, 1 << 20, 2, false)).unwrap();
    log.call(&call(None));
    let lines = lines(&path);
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["event"], "old");
    assert_eq!(lines[1]["event"], "call");
}

#[test]
fn rotation_keeps_the_newest_files_and_deletes_the_oldest() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.log");
    // Each call line is ~230 bytes: one line per file.
    let log = AuditLog::open(&settings(&path, 300, 2, false)).unwrap();
    for tool in ["a", "b", "c", "d"] {
        log.call(&CallEntry { tool, ..call(None) });
    }
    let tool = |path: &Path| {
        let lines = lines(path);
        assert_eq!(lines.len(), 1, "{}", path.display());
        lines[0]["tool"].as_str().unwrap().to_string()
    };
    assert_eq!(tool(&path), "d");
    assert_eq!(tool(&numbered(&path, 1)), "c");
    assert_eq!(tool(&numbered(&path, 2)), "b");
    assert!(!numbered(&path, 3).exists());
}

#[test]
fn keeping_no_old_files_starts_the_file_afresh() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.log");
    let log = AuditLog::open(&settings(&path, 300, 0, false)).unwrap();
    log.call(&CallEntry {
        tool: "a",
        ..call(None)
    });
    log.call(&CallEntry {
        tool: "b",
        ..call(None)
    });
    let lines = lines(&path);
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["tool"], "b");
    assert!(!numbered(&path, 1).exists());
}

#[test]
fn lines_fit_under_the_size_before_rotating() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.log");
    let log = AuditLog::open(&settings(&path, 10_000, 1, false)).unwrap();
    for _ in 0..3 {
        log.call(&call(None));
    }
    assert_eq!(lines(&path).len(), 3);
    assert!(!numbered(&path, 1).exists());
}

#[test]
fn a_path_that_cannot_be_opened_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing").join("audit.log");
    let error = AuditLog::open(&settings(&path, 100, 1, false)).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "cannot open the audit log {}: No such file or directory (os error 2)",
            path.display()
        )
    );
}

#[test]
fn millis_keeps_microseconds() {
    assert_eq!(
        millis(std::time::Duration::from_micros(1_234_567)),
        1234.567
    );
}
