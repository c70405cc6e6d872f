//! The tasks extension (docs/tasks.md) on the conformance fixture's task tools,
//! served with the conformance manifest: each status, `tasks/update` (whole
//! and partial), `tasks/cancel`, the multi round-trip before a task, the TTL
//! and the bound, bad ids and undeclared clients with their exact errors,
//! over stdio and HTTP (`Mcp-Name`).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::*;
use crate::http_client::post;

pub(crate) const TASKS: &str = "io.modelcontextprotocol/tasks";
const MANIFEST: &str = include_str!("../interop/conformance/conformance.toml");

/// The conformance fixture with its manifest and the state folder the
/// manifest grants (the list-changing tools keep their state there).
pub(crate) fn fixture_dir() -> tempfile::TempDir {
    let dir = plugin_dir(&["conformance"]);
    std::fs::write(dir.path().join("conformance.toml"), MANIFEST).unwrap();
    std::fs::create_dir(dir.path().join("conformance-state")).unwrap();
    dir
}

pub(crate) fn serve(flags: &[&str]) -> Wharf {
    let dir = fixture_dir();
    let mut wharf = Wharf::start_in(dir.path(), flags);
    wharf.keep_dir(dir);
    wharf
}

/// `_meta` declaring `capabilities`.
pub(crate) fn meta_with(capabilities: Value) -> Value {
    let mut meta = meta();
    meta["io.modelcontextprotocol/clientCapabilities"] = capabilities;
    meta
}

/// A client that declared the extension (and elicitation).
pub(crate) fn declared() -> Value {
    json!({"elicitation": {}, "extensions": {TASKS: {}}})
}

pub(crate) fn params(extra: Value, capabilities: Value) -> Value {
    let mut params = extra;
    params["_meta"] = meta_with(capabilities);
    params
}

/// A `tools/call` from a client with `capabilities`.
fn call_with(wharf: &mut Wharf, id: i64, tool: &str, arguments: Value, caps: Value) -> Value {
    wharf.request(
        json!(id),
        "tools/call",
        params(json!({"name": tool, "arguments": arguments}), caps),
    )
}

/// A `tasks/*` request from a client that declared the extension.
pub(crate) fn tasks_request(wharf: &mut Wharf, id: i64, method: &str, extra: Value) -> Value {
    wharf.request(json!(id), method, params(extra, declared()))
}

fn get(wharf: &mut Wharf, id: i64, task: &str) -> Value {
    result_of(&tasks_request(
        wharf,
        id,
        "tasks/get",
        json!({"taskId": task}),
    ))
    .clone()
}

/// Polls `tasks/get` until the task has `status` (or any terminal status).
fn wait_for(wharf: &mut Wharf, id: &mut i64, task: &str, status: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        *id += 1;
        let got = get(wharf, *id, task);
        let now = got["status"].as_str().unwrap().to_string();
        if now == status || ["completed", "failed", "cancelled"].contains(&now.as_str()) {
            return got;
        }
        assert!(Instant::now() < deadline, "task {task} stuck in {got}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Starts a task and returns its `CreateTaskResult`.
pub(crate) fn create(wharf: &mut Wharf, id: i64, tool: &str, arguments: Value) -> Value {
    let response = call_with(wharf, id, tool, arguments, declared());
    let created = result_of(&response).clone();
    assert_eq!(created["resultType"], "task", "{created}");
    created
}

pub(crate) fn ack() -> Value {
    json!({"resultType": "complete"})
}

pub(crate) fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

#[test]
fn a_task_works_then_completes_with_its_result_inlined() {
    let mut wharf = serve(&[]);
    let created = create(
        &mut wharf,
        1,
        "slow_compute",
        json!({"seconds": 0.5, "label": "a"}),
    );
    let task = created["taskId"].as_str().unwrap();
    assert_eq!(task.len(), 32, "{task}");
    assert!(task.bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(created["status"], "working");
    assert_eq!(created["ttlMs"], 3_600_000);
    assert_eq!(created["pollIntervalMs"], 500);
    for key in [
        "result",
        "error",
        "inputRequests",
        "requestState",
        "task",
        "ttl",
    ] {
        assert!(created.get(key).is_none(), "{key} in {created}");
    }
    let working = get(&mut wharf, 2, task);
    assert_eq!(working["status"], "working");
    assert_eq!(working["resultType"], "complete");
    assert_eq!(working["taskId"], task);
    assert!(working.get("result").is_none());

    let mut id = 10;
    let done = wait_for(&mut wharf, &mut id, task, "completed");
    assert_eq!(done["status"], "completed");
    assert_eq!(
        done["result"],
        json!({"content": [{"type": "text", "text": "Computed a in 0.5 s"}], "isError": false,
               "resultType": "complete"})
    );
    assert_eq!(done["createdAt"], created["createdAt"]);
    assert!(done["lastUpdatedAt"].as_str() >= created["createdAt"].as_str());
    // Cancelling a finished task is acknowledged and changes nothing.
    let cancelled = tasks_request(&mut wharf, 90, "tasks/cancel", json!({"taskId": task}));
    assert_eq!(result_of(&cancelled), &ack());
    assert_eq!(get(&mut wharf, 91, task)["status"], "completed");
}

#[test]
fn a_tool_error_completes_and_a_protocol_error_fails() {
    let mut wharf = serve(&[]);
    let failing = create(&mut wharf, 1, "failing_job", json!({}));
    let broken = create(&mut wharf, 2, "protocol_error_job", json!({}));
    let mut id = 10;
    let done = wait_for(
        &mut wharf,
        &mut id,
        failing["taskId"].as_str().unwrap(),
        "completed",
    );
    assert_eq!(done["status"], "completed");
    assert_eq!(done["result"]["isError"], true);
    assert!(
        first_text(&done["result"]).contains("the job failed on purpose"),
        "{done}"
    );
    let failed = wait_for(
        &mut wharf,
        &mut id,
        broken["taskId"].as_str().unwrap(),
        "failed",
    );
    assert_eq!(failed["status"], "failed");
    assert_eq!(
        failed["error"],
        json!({"code": -32021,
               "message": "Server requires the roots capability for this request",
               "data": {"requiredCapabilities": {"roots": {}}}})
    );
    assert_eq!(
        failed["statusMessage"],
        "Server requires the roots capability for this request"
    );
    assert!(failed.get("result").is_none());
}

#[test]
fn a_question_waits_for_tasks_update_and_stray_answers_are_ignored() {
    let mut wharf = serve(&[]);
    let created = create(
        &mut wharf,
        1,
        "confirm_delete",
        json!({"filename": "a.txt"}),
    );
    let task = created["taskId"].as_str().unwrap();
    let mut id = 10;
    let waiting = wait_for(&mut wharf, &mut id, task, "input_required");
    assert_eq!(waiting["status"], "input_required");
    assert_eq!(
        waiting["inputRequests"],
        json!({"confirm": {"method": "elicitation/create", "params": {
            "mode": "form", "message": "Delete a.txt?",
            "requestedSchema": {"type": "object",
                "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}}}})
    );

    let stray = tasks_request(
        &mut wharf,
        50,
        "tasks/update",
        json!({"taskId": task, "inputResponses": {"unknown-key": {"ignored": true}}}),
    );
    assert_eq!(result_of(&stray), &ack());
    assert_eq!(get(&mut wharf, 51, task)["status"], "input_required");

    let malformed = tasks_request(
        &mut wharf,
        52,
        "tasks/update",
        json!({"taskId": task, "inputResponses": {"confirm": 7}}),
    );
    assert_eq!(
        error_of(&malformed),
        &json!({"code": -32602,
                "message": "Invalid params: inputResponses[\"confirm\"] must be an object, not 7",
                "data": {"inputResponse": "confirm"}})
    );

    let answered = tasks_request(
        &mut wharf,
        53,
        "tasks/update",
        json!({"taskId": task, "inputResponses": {"confirm": accept(json!({"confirm": true}))}}),
    );
    assert_eq!(result_of(&answered), &ack());
    let done = wait_for(&mut wharf, &mut id, task, "completed");
    assert_eq!(first_text(&done["result"]), "Deleted a.txt");
}

#[test]
fn partial_answers_keep_the_task_waiting_for_the_rest() {
    let mut wharf = serve(&[]);
    let created = create(&mut wharf, 1, "multi_input", json!({}));
    let task = created["taskId"].as_str().unwrap();
    let mut id = 10;
    let waiting = wait_for(&mut wharf, &mut id, task, "input_required");
    let keys: Vec<&String> = waiting["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(keys, ["first", "second"]);

    let first = json!({"taskId": task, "inputResponses": {"first": accept(json!({"name": "a"}))}});
    assert_eq!(
        result_of(&tasks_request(&mut wharf, 50, "tasks/update", first)),
        &ack()
    );
    let still = get(&mut wharf, 51, task);
    assert_eq!(still["status"], "input_required");
    let keys: Vec<&String> = still["inputRequests"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["second"]);

    let second = json!({"taskId": task, "inputResponses": {"second": {"action": "decline"}}});
    assert_eq!(
        result_of(&tasks_request(&mut wharf, 52, "tasks/update", second)),
        &ack()
    );
    let done = wait_for(&mut wharf, &mut id, task, "completed");
    assert_eq!(first_text(&done["result"]), "Got 1 of 2 answers");
}

#[test]
fn cancel_stops_a_running_task_at_once() {
    let mut wharf = serve(&[]);
    let created = create(&mut wharf, 1, "slow_compute", json!({"seconds": 60}));
    let task = created["taskId"].as_str().unwrap();
    let started = Instant::now();
    let cancelled = tasks_request(&mut wharf, 2, "tasks/cancel", json!({"taskId": task}));
    assert_eq!(result_of(&cancelled), &ack());
    let got = get(&mut wharf, 3, task);
    assert_eq!(got["status"], "cancelled");
    assert_eq!(got["statusMessage"], "Cancelled by the client");
    assert!(got.get("result").is_none() && got.get("error").is_none());
    // The guest is stopped: the server serves on, and the task stays cancelled.
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(get(&mut wharf, 4, task)["status"], "cancelled");
    assert!(started.elapsed() < Duration::from_secs(10));
    let again = tasks_request(&mut wharf, 5, "tasks/cancel", json!({"taskId": task}));
    assert_eq!(result_of(&again), &ack());
}

#[test]
fn unknown_task_ids_are_invalid_params() {
    let mut wharf = serve(&[]);
    for (id, method, action, extra) in [
        (1, "tasks/get", "retrieve", json!({})),
        (2, "tasks/cancel", "cancel", json!({})),
        (3, "tasks/update", "update", json!({"inputResponses": {}})),
    ] {
        let mut params = extra;
        params["taskId"] = json!("nope");
        let response = tasks_request(&mut wharf, id, method, params);
        assert_eq!(
            error_of(&response),
            &json!({"code": -32602, "message": format!("Failed to {action} task: Task not found"),
                    "data": {"taskId": "nope"}}),
            "{method}"
        );
    }
    let missing = tasks_request(&mut wharf, 4, "tasks/get", json!({}));
    assert_eq!(error_of(&missing)["code"], -32602, "{missing}");
}

#[test]
fn a_client_that_did_not_declare_the_extension_never_gets_a_task() {
    let mut wharf = serve(&[]);
    let sync = call_with(
        &mut wharf,
        1,
        "slow_compute",
        json!({"seconds": 0.1}),
        json!({}),
    );
    let result = result_of(&sync);
    assert_eq!(result["resultType"], "complete");
    assert!(result.get("taskId").is_none());
    assert_eq!(first_text(result), "Computed job in 0.1 s");

    let required = call_with(&mut wharf, 2, "failing_job", json!({}), json!({}));
    let missing = json!({"code": -32021, "message": "Missing required client capability",
        "data": {"requiredCapabilities": {"extensions": {TASKS: {}}}}});
    assert_eq!(error_of(&required)["code"], -32021, "{required}");
    assert_eq!(error_of(&required)["data"], missing["data"], "{required}");
    for (id, method) in [(3, "tasks/get"), (4, "tasks/cancel")] {
        let response = wharf.request(json!(id), method, params(json!({"taskId": "x"}), json!({})));
        assert_eq!(error_of(&response)["code"], -32021, "{response}");
        assert_eq!(error_of(&response)["data"], missing["data"]);
    }

    let plain = wharf.request(json!(5), "server/discover", params(json!({}), json!({})));
    assert!(
        result_of(&plain)["capabilities"]
            .get("extensions")
            .is_none(),
        "{plain}"
    );
    let offered = wharf.request(json!(6), "server/discover", params(json!({}), declared()));
    assert_eq!(
        result_of(&offered)["capabilities"]["extensions"],
        json!({TASKS: {}})
    );
}

#[test]
fn input_comes_first_then_a_long_call_becomes_a_task() {
    let mut wharf = serve(&[]);
    let first = call_with(&mut wharf, 1, "test_tool_with_task", json!({}), declared());
    let round = result_of(&first);
    assert_eq!(round["resultType"], "input_required", "{first}");
    assert!(round.get("taskId").is_none());
    let state = round["requestState"].clone();
    let second = wharf.request(
        json!(2),
        "tools/call",
        params(
            json!({"name": "test_tool_with_task", "arguments": {},
                   "inputResponses": {"user_name": accept(json!({"name": "Alice"}))},
                   "requestState": state}),
            declared(),
        ),
    );
    let created = result_of(&second);
    assert_eq!(created["resultType"], "task", "{second}");
    assert!(created.get("requestState").is_none());
    let task = created["taskId"].as_str().unwrap().to_string();
    let mut id = 10;
    let done = wait_for(&mut wharf, &mut id, &task, "completed");
    assert_eq!(first_text(&done["result"]), "Hello, Alice!");
}

#[test]
fn the_bound_refuses_one_task_more_until_the_ttl_frees_a_place() {
    let mut wharf = serve(&["--max-tasks", "1", "--task-ttl-secs", "1"]);
    let created = create(&mut wharf, 1, "slow_compute", json!({"seconds": 0}));
    assert_eq!(created["ttlMs"], 1000);
    let task = created["taskId"].as_str().unwrap().to_string();
    let refused = call_with(
        &mut wharf,
        2,
        "slow_compute",
        json!({"seconds": 0}),
        declared(),
    );
    assert_eq!(
        error_of(&refused),
        &json!({"code": -32603,
                "message": "Too many tasks: this server keeps at most 1 unexpired tasks; retry once some have expired",
                "data": {"maxTasks": 1}})
    );
    // Still there just before its TTL, gone after it.
    std::thread::sleep(Duration::from_millis(700));
    assert_eq!(get(&mut wharf, 3, &task)["status"], "completed");
    std::thread::sleep(Duration::from_millis(500));
    let gone = tasks_request(&mut wharf, 4, "tasks/get", json!({"taskId": task}));
    assert_eq!(
        error_of(&gone)["message"],
        "Failed to retrieve task: Task not found"
    );
    create(&mut wharf, 5, "slow_compute", json!({"seconds": 0}));
}

/// A 2026-07-28 POST of `method` with `params` and these MCP headers.
pub(crate) fn http_request(
    addr: SocketAddr,
    id: i64,
    method: &str,
    params: Value,
    headers: &[(&str, &str)],
) -> crate::http_client::Response {
    let mut all = vec![("MCP-Protocol-Version", MODERN), ("Mcp-Method", method)];
    all.extend_from_slice(headers);
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    post(addr, &all, &body)
}

#[test]
fn a_manifest_naming_an_unknown_tool_or_a_bad_hint_keeps_the_plugin_out() {
    let wharf = Wharf::start_with_manifests(
        &["conformance"],
        &[("conformance", "[tasks]\ntools = [\"greet\", \"nope\"]\n")],
        &[],
    );
    wharf.wait_for_log("conformance.toml, key `tasks.tools`: the plugin has no tool `nope`");
    let wharf = Wharf::start_with_manifests(
        &["conformance"],
        &[("conformance", "[tasks]\nafter-ms = 0\n")],
        &[],
    );
    wharf
        .wait_for_log("conformance.toml, key `tasks.after-ms`: must be 1 to 86400000 milliseconds");
}

#[test]
fn a_legacy_session_is_offered_the_extension_only_when_it_declares_it_and_never_gets_a_task() {
    let mut plain = serve(&[]);
    let result = plain.initialize("2025-11-25");
    assert!(
        result["capabilities"].get("extensions").is_none(),
        "{result}"
    );

    let mut declaring = serve(&[]);
    let response = declaring.request(
        json!("init"),
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {"extensions": {TASKS: {}}},
               "clientInfo": {"name": "wharf-e2e", "version": "0"}}),
    );
    assert_eq!(
        result_of(&response)["capabilities"]["extensions"],
        json!({TASKS: {}})
    );
    declaring.notify("notifications/initialized", json!({}));
    // Tasks are a 2026-07-28 feature: a legacy call runs to its end.
    let call = declaring.request(
        json!(1),
        "tools/call",
        json!({"name": "slow_compute", "arguments": {"seconds": 0.1}}),
    );
    assert_eq!(first_text(result_of(&call)), "Computed job in 0.1 s");
    assert!(result_of(&call).get("taskId").is_none());
}
