use super::*;
use rmcp::model::ContentBlock;

fn tasks() -> Tasks {
    Tasks::new(Duration::from_secs(60), 3, Some("r1".into()))
}

fn wire(result: GetTaskResult) -> Value {
    serde_json::to_value(result).unwrap()
}

#[test]
fn a_task_stays_its_owners_after_it_is_over() {
    let tasks = tasks();
    let alice = Some("alice".to_string());
    let (task, _cancel) = tasks
        .create(alice.clone(), CancellationToken::new())
        .unwrap();
    tasks.finish(
        &task.task_id,
        Ok(CallToolResult::success(vec![ContentBlock::text("secret")])),
    );
    for other in [None, Some("bob".to_string())] {
        let error = tasks.get(&task.task_id, other.clone()).unwrap_err();
        assert_eq!(error.message, "Failed to retrieve task: Task not found");
        assert!(tasks.detailed(&task.task_id, &other).is_none());
        let error = tasks.cancel(&task.task_id, other).unwrap_err();
        assert_eq!(error.message, "Failed to cancel task: Task not found");
    }
    assert!(tasks.get(&task.task_id, alice.clone()).is_ok());
    assert!(tasks.holds(&task.task_id));
    assert!(!tasks.holds("r1.0"));
}

#[test]
fn each_change_of_a_task_is_announced_once() {
    let tasks = tasks();
    let mut changes = tasks.changes();
    let (task, _cancel) = tasks.create(None, CancellationToken::new()).unwrap();
    let id = task.task_id;
    let mut requests = InputRequests::new();
    requests.insert(
        "q".into(),
        serde_json::from_value(json!({"method": "roots/list", "params": {}})).unwrap(),
    );
    let _answers = tasks.ask(&id, &requests).unwrap();
    assert_eq!(changes.try_recv().unwrap(), id);
    let mut stray = JsonObjectLike::new();
    stray.insert("other".into(), json!({}));
    tasks.update(&id, None, &stray).unwrap();
    assert!(
        changes.try_recv().is_err(),
        "a stray answer changes nothing"
    );
    let mut answer = JsonObjectLike::new();
    answer.insert("q".into(), json!({"roots": []}));
    tasks.update(&id, None, &answer).unwrap();
    assert_eq!(changes.try_recv().unwrap(), id);
    tasks.cancel(&id, None).unwrap();
    assert_eq!(changes.try_recv().unwrap(), id);
    tasks.cancel(&id, None).unwrap();
    tasks.finish(&id, Ok(CallToolResult::success(vec![])));
    assert!(changes.try_recv().is_err(), "a task over changes no more");
}

#[test]
fn a_task_is_working_then_completed_with_its_result_inlined() {
    let tasks = tasks();
    let (task, _cancel) = tasks.create(None, CancellationToken::new()).unwrap();
    assert!(task.task_id.starts_with("r1."));
    assert_eq!(task.ttl_ms, Some(60_000));
    let got = wire(tasks.get(&task.task_id, None).unwrap());
    assert_eq!(got["status"], "working");
    assert_eq!(got["resultType"], "complete");
    tasks.finish(
        &task.task_id,
        Ok(CallToolResult::success(vec![ContentBlock::text("done")])),
    );
    let got = wire(tasks.get(&task.task_id, None).unwrap());
    assert_eq!(got["status"], "completed");
    assert_eq!(got["result"]["content"][0]["text"], "done");
    assert_eq!(got["result"]["resultType"], "complete");
    assert!(got.get("error").is_none());
}

#[test]
fn a_protocol_error_fails_the_task_with_the_error_inlined() {
    let tasks = tasks();
    let (task, _) = tasks.create(None, CancellationToken::new()).unwrap();
    tasks.finish(
        &task.task_id,
        Err(McpError::invalid_params("bad", Some(json!({"x": 1})))),
    );
    let got = wire(tasks.get(&task.task_id, None).unwrap());
    assert_eq!(got["status"], "failed");
    assert_eq!(
        got["error"],
        json!({"code": -32602, "message": "bad", "data": {"x": 1}})
    );
    assert_eq!(got["statusMessage"], "bad");
    assert!(got.get("result").is_none());
}

#[test]
fn unknown_and_foreign_ids_are_not_found() {
    let tasks = tasks();
    let error = tasks.get("r1.nope", None).unwrap_err();
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(error.message, "Failed to retrieve task: Task not found");
    assert_eq!(
        tasks.cancel("r1.nope", None).unwrap_err().message,
        "Failed to cancel task: Task not found"
    );
    assert_eq!(
        tasks
            .update("r1.nope", None, &JsonObjectLike::new())
            .unwrap_err()
            .message,
        "Failed to update task: Task not found"
    );
    let (task, _) = tasks
        .create(Some("alice".into()), CancellationToken::new())
        .unwrap();
    assert!(tasks.get(&task.task_id, Some("alice".into())).is_ok());
    assert_eq!(
        tasks
            .get(&task.task_id, Some("mallory".into()))
            .unwrap_err()
            .message,
        "Failed to retrieve task: Task not found"
    );
    assert!(tasks.cancel(&task.task_id, None).is_err());
}

#[test]
fn cancel_stops_the_guest_and_is_idempotent() {
    let tasks = tasks();
    let (task, cancel) = tasks.create(None, CancellationToken::new()).unwrap();
    tasks.cancel(&task.task_id, None).unwrap();
    assert!(cancel.is_cancelled());
    tasks.cancel(&task.task_id, None).unwrap();
    tasks.finish(
        &task.task_id,
        Ok(CallToolResult::success(vec![ContentBlock::text("late")])),
    );
    assert_eq!(
        wire(tasks.get(&task.task_id, None).unwrap())["status"],
        "cancelled"
    );
}

#[test]
fn the_bound_is_a_clear_error() {
    let tasks = tasks();
    for _ in 0..3 {
        tasks.create(None, CancellationToken::new()).unwrap();
    }
    let error = too_many(tasks.create(None, CancellationToken::new()).unwrap_err());
    assert_eq!(error.code, ErrorCode::INTERNAL_ERROR);
    assert_eq!(
        error.message,
        "Too many tasks: this server keeps at most 3 unexpired tasks; retry once some have expired"
    );
    assert_eq!(error.data, Some(json!({"maxTasks": 3})));
    assert_eq!(tasks.len(), 3);
}

#[tokio::test]
async fn answers_wake_the_task_once_every_question_has_one() {
    let tasks = tasks();
    let (task, _) = tasks.create(None, CancellationToken::new()).unwrap();
    let id = &task.task_id;
    let requests: InputRequests = serde_json::from_value(json!({
        "a": {"method": "elicitation/create", "params": {"mode": "form", "message": "A?",
            "requestedSchema": {"type": "object", "properties": {}}}},
        "b": {"method": "elicitation/create", "params": {"mode": "form", "message": "B?",
            "requestedSchema": {"type": "object", "properties": {}}}}
    }))
    .unwrap();
    let mut woken = tasks.ask(id, &requests).unwrap();
    let got = wire(tasks.get(id, None).unwrap());
    assert_eq!(got["status"], "input_required");
    assert_eq!(got["inputRequests"]["a"]["params"]["message"], "A?");
    let answer = json!({"action": "accept", "content": {}});
    let partial: JsonObjectLike =
        serde_json::from_value(json!({"a": answer, "stray": {"x": 1}})).unwrap();
    tasks.update(id, None, &partial).unwrap();
    let got = wire(tasks.get(id, None).unwrap());
    assert_eq!(got["status"], "input_required");
    assert_eq!(
        got["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["b"]
    );
    assert!(woken.try_recv().is_err(), "b is still unanswered");
    let bad: JsonObjectLike = serde_json::from_value(json!({"b": 7})).unwrap();
    assert_eq!(
        tasks.update(id, None, &bad).unwrap_err().message,
        "Invalid params: inputResponses[\"b\"] must be an object, not 7"
    );
    let rest: JsonObjectLike = serde_json::from_value(json!({"b": answer})).unwrap();
    tasks.update(id, None, &rest).unwrap();
    assert_eq!(wire(tasks.get(id, None).unwrap())["status"], "working");
    let answers = woken.await.unwrap();
    assert_eq!(answers.keys().collect::<Vec<_>>(), ["a", "b"]);
}
