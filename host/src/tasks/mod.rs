//! Tasks (the `io.modelcontextprotocol/tasks` extension, SEP-2663): the record
//! of a call that outlives its `tools/call`, its state machine, and the store
//! that keeps records until their time to live ends.
//!
//! Strategy: the server (`server/task_call.rs`) decides that a call becomes a
//! task, creates its record here, and keeps running the guest in a tokio task
//! of its own; every change of the call (a question to the client, the answer,
//! the end) is a transition of the record ([`TaskState`]). `tasks/get` reads
//! the record; nothing here knows JSON-RPC or the guest: payloads are JSON
//! objects the server built.
//!
//! The store is a trait ([`TaskStore`]) so that records could live outside
//! the process; only [`MemoryStore`] ships. What cannot leave the process is
//! the running guest and the channels that wake it, so a task id starts with
//! the replica's route (`--session-route`), as a legacy session id does, and a
//! load balancer sends `Mcp-Name: <task id>` to the replica that runs it
//! (docs/tasks.md).

mod id;
mod memory;
mod state;

pub use id::{TaskId, new_task_id};
pub use memory::MemoryStore;
pub use state::{Status, TaskRecord, TaskState, Transition, TransitionError};

use std::time::Duration;

/// Default time to live of a task record (`--task-ttl-secs`).
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(60 * 60);

/// Default bound on the task records one server keeps (`--max-tasks`).
pub const DEFAULT_MAX_TASKS: usize = 1000;

/// How often clients are asked to poll `tasks/get` (`pollIntervalMs`).
pub const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// Why a task could not be created.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CreateError {
    /// The store holds its bound of unexpired tasks.
    #[error(
        "Too many tasks: this server keeps at most {max} unexpired tasks; \
         retry once some have expired"
    )]
    Full { max: usize },
}

/// Where task records live. Every method is atomic with respect to the
/// others; a record past its time to live is gone for all of them.
pub trait TaskStore: Send + Sync {
    /// Stores `record` (its id fresh), unless the store is full.
    fn create(&self, record: TaskRecord) -> Result<(), CreateError>;
    /// The record of `id`, if it exists and has not expired.
    fn get(&self, id: &str) -> Option<TaskRecord>;
    /// Applies `transition` to the record of `id` and returns the record
    /// after it; `Ok(None)` when there is no such record.
    fn update(
        &self,
        id: &str,
        transition: Transition,
    ) -> Result<Option<TaskRecord>, TransitionError>;
    /// Removes the expired records and returns their ids (so the server can
    /// stop guests still running for them).
    fn purge_expired(&self) -> Vec<TaskId>;
    /// How many unexpired records the store holds.
    fn len(&self) -> usize;
    /// Whether the store holds no record.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
