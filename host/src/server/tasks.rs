//! The tasks extension's methods (`tasks/get`, `tasks/update`,
//! `tasks/cancel`) and the live side of each task: the token that stops its
//! guest, who created it, and the answers it waits for.
//!
//! rmcp routes the methods here only for a request that declared the
//! extension (-32021 otherwise) and checks `Mcp-Name` against `taskId` over
//! HTTP; the records and their state machine are [`crate::tasks`]'s; the run
//! of a task's call is `task_call.rs`.
//!
//! Errors: an unknown, expired or foreign task id is -32602 for all three
//! methods ("Task not found"); a task of another OAuth caller is not
//! distinguished from an unknown one, so ids cannot be probed.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolResult, DetailedTask, ErrorCode, GetTaskResult, InputRequests, JsonObject, Task,
    TaskPayload, TaskStatus,
};
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::client_input::JsonObjectLike;
use crate::tasks::{
    CreateError, MemoryStore, POLL_INTERVAL, Status, TaskId, TaskRecord, TaskState, TaskStore,
    Transition, new_task_id,
};

/// The tasks of one server.
pub(crate) struct Tasks {
    store: Arc<dyn TaskStore>,
    live: Mutex<HashMap<TaskId, Live>>,
    ttl: Duration,
    route: Option<String>,
}

/// What only this process knows of a running task.
struct Live {
    /// Stops the guest (`tasks/cancel`, expiry).
    cancel: CancellationToken,
    /// Who created it (an OAuth subject or client); only they may use it.
    owner: Option<String>,
    /// The current round's questions still unanswered, the answers so far,
    /// and who waits for all of them.
    waiting: Option<Waiting>,
}

struct Waiting {
    outstanding: BTreeSet<String>,
    answers: JsonObjectLike,
    wake: oneshot::Sender<JsonObjectLike>,
}

impl Tasks {
    /// `ttl`: how long a record lives; `max`: most unexpired records;
    /// `route`: the prefix of every task id (`--session-route`).
    pub(crate) fn new(ttl: Duration, max: usize, route: Option<String>) -> Self {
        Self {
            store: Arc::new(MemoryStore::new(max)),
            live: Mutex::default(),
            ttl,
            route,
        }
    }

    fn live(&self) -> std::sync::MutexGuard<'_, HashMap<TaskId, Live>> {
        self.live.lock().expect("live tasks lock")
    }

    /// Removes expired records and stops their guests.
    fn purge(&self) {
        let expired = self.store.purge_expired();
        if expired.is_empty() {
            return;
        }
        let mut live = self.live();
        for id in expired {
            if let Some(task) = live.remove(&id) {
                tracing::debug!(task = %id, "task expired while running; its guest is stopped");
                task.cancel.cancel();
            }
        }
    }

    /// A new `working` task, owned by `owner`, whose guest `cancel` stops
    /// (returned again for the caller's convenience). The record is in the store before this returns, so a `tasks/get`
    /// right after the `CreateTaskResult` finds it.
    pub(super) fn create(
        &self,
        owner: Option<String>,
        cancel: CancellationToken,
    ) -> Result<(Task, CancellationToken), CreateError> {
        self.purge();
        let record = TaskRecord::new(new_task_id(self.route.as_deref()), self.ttl);
        let task = wire_task(&record);
        self.store.create(record)?;
        self.live().insert(
            task.task_id.clone(),
            Live {
                cancel: cancel.clone(),
                owner,
                waiting: None,
            },
        );
        Ok((task, cancel))
    }

    /// Puts `requests` to the client: the task is `input_required` until
    /// `tasks/update` has answered every one; the receiver then gets the
    /// answers. `None` if the task is gone or over (cancelled, expired).
    pub(super) fn ask(
        &self,
        id: &str,
        requests: &InputRequests,
    ) -> Option<oneshot::Receiver<JsonObjectLike>> {
        let mut live = self.live();
        let task = live.get_mut(id)?;
        for (key, request) in requests {
            let request = serde_json::to_value(request).ok()?;
            let transition = Transition::Ask {
                key: key.clone(),
                request,
            };
            match self.store.update(id, transition) {
                Ok(Some(_)) => {}
                Ok(None) => return None,
                Err(error) => {
                    tracing::warn!(task = %id, "a task's question was refused: {error}");
                    return None;
                }
            }
        }
        let (wake, answers) = oneshot::channel();
        task.waiting = Some(Waiting {
            outstanding: requests.keys().cloned().collect(),
            answers: JsonObjectLike::new(),
            wake,
        });
        Some(answers)
    }

    /// Records how the task's request ended (unless it was cancelled first)
    /// and forgets its live side.
    pub(super) fn finish(&self, id: &str, end: Result<CallToolResult, McpError>) {
        let transition = match end {
            Ok(result) => match serde_json::to_value(result) {
                // The `CallToolResult` as a 2026-07-28 client reads it,
                // `resultType: "complete"` included (the TypeScript tasks
                // client's schema requires it).
                Ok(Value::Object(result)) => Transition::Complete { result },
                _ => Transition::Fail {
                    error: error_object(&McpError::internal_error(
                        "the tool's result could not be serialized",
                        None,
                    )),
                },
            },
            Err(error) => Transition::Fail {
                error: error_object(&error),
            },
        };
        if let Err(error) = self.store.update(id, transition) {
            tracing::debug!(task = %id, "task ended after it was over: {error}");
        }
        self.live().remove(id);
    }

    /// The live task `id`, if `owner` may use it.
    fn check_owner(&self, id: &str, owner: &Option<String>) -> Result<(), McpError> {
        match self.live().get(id) {
            Some(task) if task.owner != *owner => Err(not_found("retrieve", id)),
            _ => Ok(()),
        }
    }

    /// `tasks/get`.
    pub(super) fn get(&self, id: &str, owner: Option<String>) -> Result<GetTaskResult, McpError> {
        self.purge();
        self.check_owner(id, &owner)?;
        let record = self
            .store
            .get(id)
            .ok_or_else(|| not_found("retrieve", id))?;
        Ok(GetTaskResult::new(detailed(&record)))
    }

    /// `tasks/update`: answers to outstanding questions; answers under any
    /// other key are ignored (SEP-2663). The guest goes on once every question
    /// of its round is answered.
    pub(super) fn update(
        &self,
        id: &str,
        owner: Option<String>,
        responses: &JsonObjectLike,
    ) -> Result<(), McpError> {
        self.purge();
        self.check_owner(id, &owner)?;
        if self.store.get(id).is_none() {
            return Err(not_found("update", id));
        }
        let mut live = self.live();
        let Some(waiting) = live.get_mut(id).and_then(|task| task.waiting.as_mut()) else {
            return Ok(());
        };
        let answered: Vec<(&String, &Value)> = responses
            .iter()
            .filter(|(key, _)| waiting.outstanding.contains(*key))
            .collect();
        if let Some((key, value)) = answered.iter().find(|(_, value)| !value.is_object()) {
            return Err(McpError::invalid_params(
                format!("Invalid params: inputResponses[\"{key}\"] must be an object, not {value}"),
                Some(json!({ "inputResponse": key })),
            ));
        }
        for (key, value) in answered {
            let _ = self
                .store
                .update(id, Transition::Answer { key: key.clone() });
            waiting.outstanding.remove(key);
            waiting.answers.insert(key.clone(), value.clone());
        }
        if waiting.outstanding.is_empty()
            && let Some(waiting) = live.get_mut(id).and_then(|task| task.waiting.take())
        {
            let _ = waiting.wake.send(waiting.answers);
        }
        Ok(())
    }

    /// `tasks/cancel`: the task becomes `cancelled` and its guest is stopped;
    /// a task already over is left as it is (the ack is the same).
    pub(super) fn cancel(&self, id: &str, owner: Option<String>) -> Result<(), McpError> {
        self.purge();
        self.check_owner(id, &owner)?;
        // A task already over refuses the transition; that is still an ack.
        if let Ok(None) = self.store.update(id, Transition::Cancel) {
            return Err(not_found("cancel", id));
        }
        if let Some(task) = self.live().remove(id) {
            task.cancel.cancel();
        }
        Ok(())
    }

    /// How many unexpired tasks there are.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.store.len()
    }
}

/// -32602 for a task that does not exist (or is not the caller's).
fn not_found(action: &str, id: &str) -> McpError {
    McpError::invalid_params(
        format!("Failed to {action} task: Task not found"),
        Some(json!({ "taskId": id })),
    )
}

/// The -32603 past the bound on tasks.
pub(super) fn too_many(error: CreateError) -> McpError {
    let CreateError::Full { max } = error;
    McpError::new(
        ErrorCode::INTERNAL_ERROR,
        error.to_string(),
        Some(json!({ "maxTasks": max })),
    )
}

/// A JSON-RPC error as the `error` of a failed task.
fn error_object(error: &McpError) -> JsonObject {
    match serde_json::to_value(error) {
        Ok(Value::Object(object)) => object,
        _ => JsonObject::from_iter([
            ("code".into(), json!(error.code.0)),
            ("message".into(), json!(error.message)),
        ]),
    }
}

/// The base `Task` of a record.
fn wire_task(record: &TaskRecord) -> Task {
    let mut task = Task::new(
        record.id.clone(),
        match record.status() {
            Status::Working => TaskStatus::Working,
            Status::InputRequired => TaskStatus::InputRequired,
            Status::Completed => TaskStatus::Completed,
            Status::Failed => TaskStatus::Failed,
            Status::Cancelled => TaskStatus::Cancelled,
        },
        TaskRecord::timestamp(&record.created_at),
        TaskRecord::timestamp(&record.last_updated_at),
    )
    .with_ttl_ms(record.ttl.as_millis() as u64)
    .with_poll_interval_ms(POLL_INTERVAL.as_millis() as u64);
    task.status_message = record.status_message.clone();
    task
}

/// A record as `tasks/get` shows it.
fn detailed(record: &TaskRecord) -> DetailedTask {
    let payload = match &record.state {
        TaskState::Working => TaskPayload::Working,
        TaskState::InputRequired { requests } => TaskPayload::InputRequired {
            input_requests: requests
                .iter()
                .filter_map(|(key, request)| {
                    Some((key.clone(), serde_json::from_value(request.clone()).ok()?))
                })
                .collect(),
        },
        TaskState::Completed { result } => TaskPayload::Completed {
            result: result.clone(),
        },
        TaskState::Failed { error } => TaskPayload::Failed {
            error: error.clone(),
        },
        TaskState::Cancelled => TaskPayload::Cancelled,
    };
    DetailedTask::new(wire_task(record), payload)
}

/// The owner of a task `context` creates or uses: the OAuth subject (or
/// client) of its token, if it had one.
pub(super) fn owner_of(context: &rmcp::service::RequestContext<RoleServer>) -> Option<String> {
    super::caller::caller_of(context).and_then(|caller| caller.subject.or(caller.client_id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ContentBlock;

    fn tasks() -> Tasks {
        Tasks::new(Duration::from_secs(60), 3, Some("r1".into()))
    }

    fn wire(result: GetTaskResult) -> Value {
        serde_json::to_value(result).unwrap()
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
}
