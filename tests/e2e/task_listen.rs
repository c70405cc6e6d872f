//! Tasks over HTTP (routed ids, `Mcp-Name`) and on listen streams
//! (docs/tasks.md): the acknowledgement names the task ids granted, each
//! watched task is sent as `notifications/tasks` as it is when the stream
//! opens and again at each change until it is over, and a listen naming task
//! ids without the extension, or with bad ids, gets its exact error; over
//! stdio and HTTP.

use serde_json::{Value, json};

use crate::harness::*;
use crate::tasks::{
    TASKS, accept, create, declared, fixture_dir, http_request, meta_with, params, serve,
    tasks_request,
};

const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";

/// Opens a listen stream over stdio with `notifications` from a client with
/// `capabilities`.
fn listen(wharf: &mut Wharf, id: &str, notifications: Value, capabilities: Value) {
    wharf.send(
        json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
        "params": {"_meta": meta_with(capabilities), "notifications": notifications}}),
    );
}

fn acknowledgement(wharf: &mut Wharf, id: &str) -> Value {
    wharf.next_matching(|m| {
        m["method"] == ACKNOWLEDGED
            && m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == id
    })
}

/// The next `notifications/tasks` for `task` on stream `id`.
fn next_status(wharf: &mut Wharf, id: &str, task: &str) -> Value {
    let notification = wharf
        .next_matching(|m| m["method"] == "notifications/tasks" && m["params"]["taskId"] == task);
    assert_eq!(
        notification["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], id,
        "{notification}"
    );
    notification["params"].clone()
}

/// The server still answers on this connection.
fn serving(wharf: &mut Wharf, id: i64) {
    let listed = wharf.modern(id, "tools/list", json!({}));
    assert!(!result_of(&listed)["tools"].as_array().unwrap().is_empty());
}

#[test]
fn a_watched_task_is_sent_as_it_is_then_at_each_change_until_it_is_over() {
    let mut wharf = serve(&[]);
    let task = create(
        &mut wharf,
        1,
        "slow_compute",
        json!({"seconds": 0.6, "label": "a"}),
    )["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    listen(
        &mut wharf,
        "l1",
        json!({"toolsListChanged": true, "taskIds": [task, "no-such-task", task]}),
        declared(),
    );
    let ack = acknowledgement(&mut wharf, "l1");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true, "taskIds": [task]})
    );
    let now = next_status(&mut wharf, "l1", &task);
    assert_eq!(now["status"], "working");
    assert_eq!(now["ttlMs"], 3_600_000);
    let done = next_status(&mut wharf, "l1", &task);
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["isError"], false);
    // Identical to what tasks/get shows.
    let got = tasks_request(&mut wharf, 2, "tasks/get", json!({"taskId": task}));
    let mut got = result_of(&got).clone();
    got.as_object_mut().unwrap().remove("resultType");
    let mut sent = done.clone();
    sent.as_object_mut().unwrap().remove("_meta");
    assert_eq!(sent, got);
    // Nothing more for a task that is over; the stream stays open.
    let later = wharf.drain(std::time::Duration::from_millis(300));
    assert!(
        later.iter().all(|m| m["method"] != "notifications/tasks"),
        "{later:?}"
    );
    serving(&mut wharf, 3);
}

#[test]
fn input_required_and_back_to_working_are_sent_with_the_questions() {
    let mut wharf = serve(&[]);
    let task = create(
        &mut wharf,
        1,
        "confirm_delete",
        json!({"filename": "a.txt"}),
    )["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    listen(&mut wharf, "l", json!({"taskIds": [task]}), declared());
    acknowledgement(&mut wharf, "l");
    let mut status = next_status(&mut wharf, "l", &task);
    if status["status"] == "working" {
        status = next_status(&mut wharf, "l", &task);
    }
    assert_eq!(status["status"], "input_required", "{status}");
    assert_eq!(
        status["inputRequests"]["confirm"]["method"],
        "elicitation/create"
    );
    let answer = json!({"taskId": task,
        "inputResponses": {"confirm": accept(json!({"confirm": true}))}});
    tasks_request(&mut wharf, 2, "tasks/update", answer);
    let mut statuses = vec![];
    loop {
        let status = next_status(&mut wharf, "l", &task);
        let over = status["status"] == "completed";
        statuses.push(status);
        if over {
            break;
        }
    }
    assert_eq!(statuses[0]["status"], "working", "{statuses:?}");
    assert_eq!(
        first_text(&statuses.last().unwrap()["result"]),
        "Deleted a.txt"
    );
}

#[test]
fn a_cancelled_task_is_sent_cancelled() {
    let mut wharf = serve(&[]);
    let task = create(&mut wharf, 1, "slow_compute", json!({"seconds": 60}))["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    listen(&mut wharf, "l", json!({"taskIds": [task]}), declared());
    assert_eq!(next_status(&mut wharf, "l", &task)["status"], "working");
    tasks_request(&mut wharf, 2, "tasks/cancel", json!({"taskId": task}));
    let cancelled = next_status(&mut wharf, "l", &task);
    assert_eq!(cancelled["status"], "cancelled");
    assert_eq!(cancelled["statusMessage"], "Cancelled by the client");
}

#[test]
fn task_ids_without_the_extension_or_malformed_get_their_exact_errors() {
    let mut wharf = serve(&[]);
    listen(&mut wharf, "a", json!({"taskIds": ["x"]}), json!({}));
    assert_eq!(
        error_of(&wharf.response(&json!("a"))),
        &json!({"code": -32021, "message": "Missing required client capability",
            "data": {"requiredCapabilities": {"extensions": {TASKS: {}}}}})
    );
    for (id, ids, message) in [
        (
            "b",
            json!("x"),
            "Invalid params: `notifications.taskIds` must be an array of task ids",
        ),
        (
            "c",
            json!(["x", null]),
            "Invalid params: `notifications.taskIds` must hold strings only",
        ),
    ] {
        listen(&mut wharf, id, json!({"taskIds": ids}), declared());
        assert_eq!(
            error_of(&wharf.response(&json!(id))),
            &json!({"code": -32602, "message": message})
        );
    }
    // A listen without task ids needs no extension, and an empty list is granted empty.
    listen(
        &mut wharf,
        "d",
        json!({"toolsListChanged": true}),
        json!({}),
    );
    let ack = acknowledgement(&mut wharf, "d");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    listen(&mut wharf, "e", json!({"taskIds": []}), declared());
    let ack = acknowledgement(&mut wharf, "e");
    assert_eq!(ack["params"]["notifications"], json!({"taskIds": []}));
    serving(&mut wharf, 9);
}

#[test]
fn over_http_the_listen_stream_carries_the_ids_and_the_statuses() {
    let dir = fixture_dir();
    let mut wharf = Wharf::start_in(dir.path(), &["--http", "127.0.0.1:0"]);
    wharf.keep_dir(dir);
    let addr = wharf.http_addr();
    let created = http_request(
        addr,
        1,
        "tools/call",
        params(
            json!({"name": "slow_compute", "arguments": {"seconds": 0.5}}),
            declared(),
        ),
        &[("Mcp-Name", "slow_compute")],
    );
    let task = result_of(&created.json())["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let mut stream = http_request(
        addr,
        2,
        "subscriptions/listen",
        params(json!({"notifications": {"taskIds": [task]}}), declared()),
        &[],
    );
    assert_eq!(stream.status, 200);
    let ack = stream.next_event().expect("an acknowledgement");
    assert_eq!(ack["method"], ACKNOWLEDGED);
    assert_eq!(ack["params"]["notifications"], json!({"taskIds": [task]}));
    let mut statuses = vec![];
    while let Some(event) = stream.next_event() {
        assert_eq!(event["method"], "notifications/tasks", "{event}");
        assert_eq!(
            event["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            2
        );
        let status = event["params"]["status"].as_str().unwrap().to_string();
        statuses.push(status.clone());
        if status == "completed" {
            break;
        }
    }
    assert_eq!(statuses, ["working", "completed"]);

    let refused = http_request(
        addr,
        3,
        "subscriptions/listen",
        params(json!({"notifications": {"taskIds": [task]}}), json!({})),
        &[],
    );
    assert_eq!(refused.status, 400);
    assert_eq!(error_of(&refused.json())["code"], -32021);
}

#[test]
fn over_http_task_ids_carry_the_route_and_mcp_name_must_match() {
    let dir = fixture_dir();
    let wharf = Wharf::start_in(
        dir.path(),
        &["--http", "127.0.0.1:0", "--session-route", "pod-7"],
    );
    let addr = wharf.http_addr();
    let created = http_request(
        addr,
        1,
        "tools/call",
        params(
            json!({"name": "slow_compute", "arguments": {"seconds": 0.2}}),
            declared(),
        ),
        &[("Mcp-Name", "slow_compute")],
    );
    assert_eq!(created.status, 200);
    let created = created.json();
    let task = result_of(&created)["taskId"].as_str().unwrap().to_string();
    let (route, random) = task.split_once('.').unwrap();
    assert_eq!(route, "pod-7");
    assert_eq!(random.len(), 32);

    let get_params = params(json!({"taskId": task}), declared());
    let got = http_request(
        addr,
        2,
        "tasks/get",
        get_params.clone(),
        &[("Mcp-Name", &task)],
    );
    assert_eq!(got.status, 200);
    assert_eq!(result_of(&got.json())["taskId"], task.as_str());

    for (id, name) in [(3, Some("pod-7.0000")), (4, None)] {
        let headers: Vec<(&str, &str)> = name.map(|n| ("Mcp-Name", n)).into_iter().collect();
        let refused = http_request(addr, id, "tasks/get", get_params.clone(), &headers);
        assert_eq!(refused.status, 400, "{name:?}");
        assert_eq!(error_of(&refused.json())["code"], -32020, "{name:?}");
    }
    drop(wharf);
}
