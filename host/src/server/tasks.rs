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
use tokio::sync::{broadcast, oneshot};
use tokio_util::sync::CancellationToken;

use crate::client_input::JsonObjectLike;
use crate::task_subscriptions::TaskDirectory;
use crate::tasks::{
    CreateError, MemoryStore, POLL_INTERVAL, Status, TaskId, TaskRecord, TaskState, TaskStore,
    Transition, new_task_id,
};

/// How many status changes a listen stream may fall behind before it
/// re-reads every task it watches (see [`Tasks::changes`]).
const CHANGES_BACKLOG: usize = 256;

/// The tasks of one server.
pub(crate) struct Tasks {
    store: Arc<dyn TaskStore>,
    live: Mutex<HashMap<TaskId, Live>>,
    ttl: Duration,
    route: Option<String>,
    /// The id of each task whose status (or questions) changed, for the
    /// `notifications/tasks` of listen streams.
    changed: broadcast::Sender<TaskId>,
}

/// What only this process knows of a running task.
struct Live {
    /// Stops the guest (`tasks/cancel`, expiry).
    cancel: CancellationToken,
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
            changed: broadcast::channel(CHANGES_BACKLOG).0,
        }
    }

    /// The ids of tasks as they change, from now on. A receiver that lags
    /// gets `RecvError::Lagged` and should re-read what it watches.
    pub(super) fn changes(&self) -> broadcast::Receiver<TaskId> {
        self.changed.subscribe()
    }

    /// Tells listen streams that task `id` changed.
    fn announce(&self, id: &str) {
        // No receiver (no listen stream) is the usual case, not an error.
        let _ = self.changed.send(id.to_owned());
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
        let record = TaskRecord::new(new_task_id(self.route.as_deref()), self.ttl, owner);
        let task = wire_task(&record);
        self.store.create(record)?;
        self.live().insert(
            task.task_id.clone(),
            Live {
                cancel: cancel.clone(),
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
        drop(live);
        self.announce(id);
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
        match self.store.update(id, transition) {
            Ok(Some(_)) => self.announce(id),
            Ok(None) => {}
            Err(error) => tracing::debug!(task = %id, "task ended after it was over: {error}"),
        }
        self.live().remove(id);
    }

    /// The record of `id`, if it exists and `owner` may use it; another
    /// caller's task is not told apart from an unknown one.
    fn record(&self, id: &str, owner: &Option<String>) -> Option<TaskRecord> {
        self.store.get(id).filter(|record| record.owner == *owner)
    }

    /// `tasks/get`.
    pub(super) fn get(&self, id: &str, owner: Option<String>) -> Result<GetTaskResult, McpError> {
        self.purge();
        let record = self
            .record(id, &owner)
            .ok_or_else(|| not_found("retrieve", id))?;
        Ok(GetTaskResult::new(detailed(&record)))
    }

    /// The task `id` as `tasks/get` would show it to `owner`, for a
    /// `notifications/tasks`; `None` when there is no such task of theirs.
    pub(super) fn detailed(&self, id: &str, owner: &Option<String>) -> Option<DetailedTask> {
        self.record(id, owner).map(|record| detailed(&record))
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
        if self.record(id, &owner).is_none() {
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
        let answered_all = waiting.outstanding.is_empty();
        if answered_all && let Some(waiting) = live.get_mut(id).and_then(|task| task.waiting.take())
        {
            let _ = waiting.wake.send(waiting.answers);
        }
        drop(live);
        if answered_all {
            // input_required -> working
            self.announce(id);
        }
        Ok(())
    }

    /// `tasks/cancel`: the task becomes `cancelled` and its guest is stopped;
    /// a task already over is left as it is (the ack is the same).
    pub(super) fn cancel(&self, id: &str, owner: Option<String>) -> Result<(), McpError> {
        self.purge();
        if self.record(id, &owner).is_none() {
            return Err(not_found("cancel", id));
        }
        // A task already over refuses the transition; that is still an ack.
        match self.store.update(id, Transition::Cancel) {
            Ok(None) => return Err(not_found("cancel", id)),
            Ok(Some(_)) => self.announce(id),
            Err(_) => {}
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

impl TaskDirectory for Tasks {
    fn holds(&self, task_id: &str) -> bool {
        self.store.get(task_id).is_some()
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
mod tests;
