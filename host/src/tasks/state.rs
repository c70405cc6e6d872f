//! A task's record and its state machine:
//!
//! ```text
//! working <-> input_required
//!    \            /
//!     completed | failed | cancelled   (terminal: nothing leaves them)
//! ```
//!
//! A question key is unique over the task's life (SEP-2663): once asked it is
//! never asked again, so an answer under a key always means that question.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Map, Value};

use super::TaskId;

/// A task's status, as `tasks/get` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Working,
    InputRequired,
    Completed,
    Failed,
    Cancelled,
}

impl Status {
    /// `completed`, `failed` and `cancelled`: the task will not change again.
    pub fn is_terminal(self) -> bool {
        matches!(self, Status::Completed | Status::Failed | Status::Cancelled)
    }
}

/// What the task is doing, with what `tasks/get` shows of it.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskState {
    Working,
    /// Questions to the client, by key, each `{"method", "params"}`.
    InputRequired {
        requests: Map<String, Value>,
    },
    /// The result of the original request (a `CallToolResult`).
    Completed {
        result: Map<String, Value>,
    },
    /// The JSON-RPC error the original request ended in.
    Failed {
        error: Map<String, Value>,
    },
    Cancelled,
}

impl TaskState {
    pub fn status(&self) -> Status {
        match self {
            TaskState::Working => Status::Working,
            TaskState::InputRequired { .. } => Status::InputRequired,
            TaskState::Completed { .. } => Status::Completed,
            TaskState::Failed { .. } => Status::Failed,
            TaskState::Cancelled => Status::Cancelled,
        }
    }
}

/// A change of a task.
#[derive(Debug, Clone, PartialEq)]
pub enum Transition {
    /// The guest asks the client `request` under `key`.
    Ask { key: String, request: Value },
    /// The client answered the question under `key`.
    Answer { key: String },
    /// The request ended with a result.
    Complete { result: Map<String, Value> },
    /// The request ended with a JSON-RPC error.
    Fail { error: Map<String, Value> },
    /// The client cancelled the task.
    Cancel,
}

/// A transition the state machine refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransitionError {
    #[error("the task is already {0:?}")]
    Terminal(Status),
    #[error("the question key `{0}` was already used in this task")]
    KeyReused(String),
    #[error("no question is outstanding under `{0}`")]
    NotOutstanding(String),
}

/// One task as the store keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRecord {
    pub id: TaskId,
    pub state: TaskState,
    pub status_message: Option<String>,
    pub created_at: DateTime<Utc>,
    pub last_updated_at: DateTime<Utc>,
    /// How long the record lives after its creation (`ttlMs`).
    pub ttl: Duration,
    /// When the record expires, on this process's monotonic clock.
    pub expires: Instant,
    /// Who created it (an OAuth subject or client, `None` without OAuth):
    /// only they may see or change it, for as long as the record lives.
    pub owner: Option<String>,
    /// Every question key asked so far.
    asked: BTreeSet<String>,
}

impl TaskRecord {
    /// A new `working` task of `owner`, created now.
    pub fn new(id: TaskId, ttl: Duration, owner: Option<String>) -> Self {
        let now = Utc::now();
        Self {
            id,
            state: TaskState::Working,
            status_message: None,
            created_at: now,
            last_updated_at: now,
            ttl,
            expires: Instant::now() + ttl,
            owner,
            asked: BTreeSet::new(),
        }
    }

    pub fn status(&self) -> Status {
        self.state.status()
    }

    /// An RFC 3339 timestamp with milliseconds, in UTC.
    pub fn timestamp(time: &DateTime<Utc>) -> String {
        time.to_rfc3339_opts(SecondsFormat::Millis, true)
    }

    /// Applies `transition`, or says why it does not apply (the record is
    /// then unchanged).
    pub fn apply(&mut self, transition: Transition) -> Result<(), TransitionError> {
        let status = self.status();
        if status.is_terminal() {
            return Err(TransitionError::Terminal(status));
        }
        match transition {
            Transition::Ask { key, request } => {
                if !self.asked.insert(key.clone()) {
                    return Err(TransitionError::KeyReused(key));
                }
                match &mut self.state {
                    TaskState::InputRequired { requests } => {
                        requests.insert(key, request);
                    }
                    _ => {
                        self.state = TaskState::InputRequired {
                            requests: Map::from_iter([(key, request)]),
                        }
                    }
                }
                self.status_message = Some("Waiting for input from the client".into());
            }
            Transition::Answer { key } => {
                let TaskState::InputRequired { requests } = &mut self.state else {
                    return Err(TransitionError::NotOutstanding(key));
                };
                if requests.remove(&key).is_none() {
                    return Err(TransitionError::NotOutstanding(key));
                }
                if requests.is_empty() {
                    self.state = TaskState::Working;
                    self.status_message = None;
                }
            }
            Transition::Complete { result } => {
                self.state = TaskState::Completed { result };
                self.status_message = None;
            }
            Transition::Fail { error } => {
                self.status_message = error
                    .get("message")
                    .and_then(Value::as_str)
                    .map(String::from);
                self.state = TaskState::Failed { error };
            }
            Transition::Cancel => {
                self.state = TaskState::Cancelled;
                self.status_message = Some("Cancelled by the client".into());
            }
        }
        self.last_updated_at = Utc::now();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record() -> TaskRecord {
        TaskRecord::new("t".into(), Duration::from_secs(60), None)
    }

    fn ask(key: &str) -> Transition {
        Transition::Ask {
            key: key.into(),
            request: json!({"method": "elicitation/create", "params": {}}),
        }
    }

    #[test]
    fn questions_move_the_task_to_input_required_and_answers_back_to_working() {
        let mut task = record();
        assert_eq!(task.status(), Status::Working);
        task.apply(ask("a")).unwrap();
        task.apply(ask("b")).unwrap();
        let TaskState::InputRequired { requests } = &task.state else {
            panic!("{:?}", task.state)
        };
        assert_eq!(requests.keys().collect::<Vec<_>>(), ["a", "b"]);
        task.apply(Transition::Answer { key: "a".into() }).unwrap();
        assert_eq!(task.status(), Status::InputRequired);
        let TaskState::InputRequired { requests } = &task.state else {
            panic!()
        };
        assert_eq!(requests.keys().collect::<Vec<_>>(), ["b"]);
        task.apply(Transition::Answer { key: "b".into() }).unwrap();
        assert_eq!(task.status(), Status::Working);
        assert_eq!(task.status_message, None);
    }

    #[test]
    fn a_key_is_never_asked_or_answered_twice() {
        let mut task = record();
        task.apply(ask("a")).unwrap();
        task.apply(Transition::Answer { key: "a".into() }).unwrap();
        assert_eq!(
            task.apply(ask("a")),
            Err(TransitionError::KeyReused("a".into()))
        );
        assert_eq!(
            task.apply(Transition::Answer { key: "a".into() }),
            Err(TransitionError::NotOutstanding("a".into()))
        );
        assert_eq!(
            task.apply(Transition::Answer {
                key: "never".into()
            }),
            Err(TransitionError::NotOutstanding("never".into()))
        );
        assert_eq!(task.status(), Status::Working);
    }

    #[test]
    fn terminal_states_are_final() {
        for end in [
            Transition::Complete {
                result: Map::from_iter([("content".into(), json!([]))]),
            },
            Transition::Fail {
                error: Map::from_iter([
                    ("code".into(), json!(-32603)),
                    ("message".into(), json!("boom")),
                ]),
            },
            Transition::Cancel,
        ] {
            let mut task = record();
            task.apply(end).unwrap();
            let status = task.status();
            assert!(status.is_terminal());
            let before = task.clone();
            for later in [
                ask("x"),
                Transition::Cancel,
                Transition::Complete { result: Map::new() },
            ] {
                assert_eq!(task.apply(later), Err(TransitionError::Terminal(status)));
            }
            assert_eq!(task, before);
        }
    }

    #[test]
    fn a_failure_names_its_message_and_timestamps_are_rfc3339_utc() {
        let mut task = record();
        task.apply(Transition::Fail {
            error: Map::from_iter([("message".into(), json!("Missing capability"))]),
        })
        .unwrap();
        assert_eq!(task.status_message.as_deref(), Some("Missing capability"));
        let stamp = TaskRecord::timestamp(&task.created_at);
        assert!(stamp.ends_with('Z'), "{stamp}");
        assert!(DateTime::parse_from_rfc3339(&stamp).is_ok());
        assert!(task.last_updated_at >= task.created_at);
    }
}
