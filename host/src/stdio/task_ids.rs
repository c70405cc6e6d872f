//! A listen request's `taskIds` on stdio: lifted past rmcp on the way in,
//! and added to rmcp's acknowledgement on the way out (see
//! [`crate::task_subscriptions`] for why).

use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ServerJsonRpcMessage, ServerNotification};
use serde_json::Value;

use super::LineTransport;
use crate::task_subscriptions::{Lifted, acknowledge, is_acknowledgement_of, lift};

impl<R> LineTransport<R> {
    /// `message`, read from `line`, as rmcp should see it: a 2026-07-28
    /// listen request with its task ids moved into `_meta` (remembered for
    /// the acknowledgement), any other message as it is. `None` when the
    /// request was refused here (the error is already queued).
    pub(super) fn lift_task_ids(
        &mut self,
        line: &[u8],
        message: ClientJsonRpcMessage,
    ) -> Option<ClientJsonRpcMessage> {
        let ClientJsonRpcMessage::Request(request) = &message else {
            return Some(message);
        };
        let (ClientRequest::SubscriptionsListenRequest(_), Some(directory)) =
            (&request.request, &self.task_directory)
        else {
            return Some(message);
        };
        let id = request.id.clone();
        let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        match lift(line, directory.as_ref()) {
            Lifted::Untouched => Some(message),
            Lifted::Rewritten { body, task_ids } => match serde_json::from_slice(&body) {
                Ok(rewritten) => {
                    self.task_acks.insert(id, task_ids);
                    Some(rewritten)
                }
                Err(error) => {
                    tracing::warn!("a listen request could not be rewritten: {error}");
                    Some(message)
                }
            },
            Lifted::Refused(error) => {
                self.in_flight.end(&id);
                self.reply(ServerJsonRpcMessage::error(error, Some(id)));
                None
            }
        }
    }

    /// The acknowledgement `item` with the task ids its listen request was
    /// granted, if it is the acknowledgement of such a request.
    pub(super) fn acknowledgement(&mut self, item: &ServerJsonRpcMessage) -> Option<Value> {
        if self.task_acks.is_empty() {
            return None;
        }
        let ServerJsonRpcMessage::Notification(notification) = item else {
            return None;
        };
        let ServerNotification::SubscriptionsAcknowledgedNotification(_) =
            &notification.notification
        else {
            return None;
        };
        let mut message = serde_json::to_value(item).ok()?;
        let id = self
            .task_acks
            .keys()
            .find(|id| is_acknowledgement_of(&message, id))?
            .clone();
        let task_ids = self.task_acks.remove(&id)?;
        acknowledge(&mut message, &task_ids);
        Some(message)
    }
}
