//! `notifications/tasks` on a listen stream: the tasks a client named in
//! `notifications.taskIds`, sent as `tasks/get` would show them, once when
//! the stream opens and again at each change, until each is over.
//!
//! The ids reach the handler through `_meta` (rmcp 3.11 drops `taskIds`; see
//! [`crate::task_subscriptions`]). rmcp's subscription sink refuses
//! `notifications/tasks`, so they are sent on the listen request's peer with
//! its subscription id, as the sink sends the others.

use std::collections::BTreeSet;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{
    GetMeta, RequestId, ServerNotification, TaskStatus, TaskStatusNotification,
    TaskStatusNotificationParams,
};
use rmcp::service::{RequestContext, ServiceError};
use tokio::sync::broadcast::Receiver;
use tokio::sync::broadcast::error::RecvError;

use super::tasks::{Tasks, owner_of};
use crate::task_subscriptions::lifted_ids;
use crate::tasks::TaskId;

/// The tasks one listen stream watches.
pub(super) struct WatchedTasks {
    tasks: Arc<Tasks>,
    /// Watched and not over yet.
    ids: BTreeSet<TaskId>,
    owner: Option<String>,
    changes: Receiver<TaskId>,
    peer: rmcp::Peer<RoleServer>,
    subscription: RequestId,
}

/// What the stream should send next.
pub(super) enum Due {
    /// This task changed.
    One(TaskId),
    /// Changes were missed: every watched task.
    All,
}

impl WatchedTasks {
    /// The tasks the listen request of `context` named, if it named any.
    pub(super) fn of(tasks: &Arc<Tasks>, context: &RequestContext<RoleServer>) -> Option<Self> {
        let ids: BTreeSet<TaskId> = lifted_ids(&context.meta.0).into_iter().collect();
        if ids.is_empty() {
            return None;
        }
        Some(Self {
            // Subscribed before anything is read, so no change is missed.
            changes: tasks.changes(),
            tasks: tasks.clone(),
            ids,
            owner: owner_of(context),
            peer: context.peer.clone(),
            subscription: context.id.clone(),
        })
    }

    /// Waits for the next change of a watched task (forever once none is
    /// left to watch).
    pub(super) async fn next(&mut self) -> Due {
        loop {
            if self.ids.is_empty() {
                std::future::pending::<()>().await;
            }
            match self.changes.recv().await {
                Ok(id) if self.ids.contains(&id) => return Due::One(id),
                Ok(_) => {}
                Err(RecvError::Lagged(_)) => return Due::All,
                // The server is gone; the stream ends with it.
                Err(RecvError::Closed) => std::future::pending::<()>().await,
            }
        }
    }

    /// Sends what is `due`.
    pub(super) async fn send(&mut self, due: Due) -> Result<(), ServiceError> {
        match due {
            Due::One(id) => self.send_one(id).await,
            Due::All => self.send_all().await,
        }
    }

    /// Sends every watched task as it is now.
    pub(super) async fn send_all(&mut self) -> Result<(), ServiceError> {
        for id in self.ids.clone() {
            self.send_one(id).await?;
        }
        Ok(())
    }

    /// Sends task `id` as it is now; a task over (or gone: expired, or not
    /// the caller's) is watched no more.
    async fn send_one(&mut self, id: TaskId) -> Result<(), ServiceError> {
        let Some(task) = self.tasks.detailed(&id, &self.owner) else {
            self.ids.remove(&id);
            return Ok(());
        };
        if matches!(
            task.task.status,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        ) {
            self.ids.remove(&id);
        }
        let mut notification = ServerNotification::TaskStatusNotification(
            TaskStatusNotification::new(TaskStatusNotificationParams::new(task)),
        );
        notification
            .get_meta_mut()
            .set_subscription_id(self.subscription.clone());
        self.peer.send_notification(notification).await
    }
}
