//! Legacy sessions (initialize-era): a question is a real server-to-client
//! request, sent through rmcp's peer and awaited while the guest is suspended.

use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;

use rmcp::model::{ClientCapabilities, InputRequest as McpInputRequest, ServerRequest};
use rmcp::{Peer, RoleServer};
use tokio_util::sync::CancellationToken;

use super::{
    Conclusion, LEGACY_ANSWER_TIMEOUT, declared, mcp_request, missing_capability_error,
    required_capability,
};
use crate::runtime::{InputBroker, InputOutcome, InputRequest};

/// Sends one call's questions to a legacy client.
pub struct SessionBroker {
    peer: Peer<RoleServer>,
    capabilities: ClientCapabilities,
    cancel: CancellationToken,
    missing: Mutex<Vec<serde_json::Value>>,
}

impl SessionBroker {
    pub fn new(
        peer: Peer<RoleServer>,
        capabilities: ClientCapabilities,
        cancel: CancellationToken,
    ) -> Self {
        Self {
            peer,
            capabilities,
            cancel,
            missing: Mutex::default(),
        }
    }

    pub fn conclude(&self, failed: bool) -> Conclusion {
        let missing = self.missing.lock().expect("missing lock");
        if failed && !missing.is_empty() {
            return Conclusion::Error(missing_capability_error(&missing));
        }
        Conclusion::Proceed
    }

    async fn send(&self, request: McpInputRequest) -> InputOutcome {
        let request = match request {
            McpInputRequest::Elicitation(r) => ServerRequest::ElicitRequest(r),
            McpInputRequest::CreateMessage(r) => ServerRequest::CreateMessageRequest(r),
            McpInputRequest::ListRoots(r) => ServerRequest::ListRootsRequest(r),
            _ => return InputOutcome::Failed("an unknown kind of request".into()),
        };
        tokio::select! {
            _ = self.cancel.cancelled() => InputOutcome::Failed("the call was cancelled".into()),
            answer = tokio::time::timeout(LEGACY_ANSWER_TIMEOUT, self.peer.send_request(request)) => {
                match answer {
                    Err(_) => InputOutcome::Failed(format!(
                        "the client did not answer within {} s",
                        LEGACY_ANSWER_TIMEOUT.as_secs()
                    )),
                    Ok(Err(error)) => InputOutcome::Failed(format!("the client did not answer: {error}")),
                    Ok(Ok(result)) => match serde_json::to_value(result) {
                        Ok(value) => InputOutcome::Answered(value),
                        Err(error) => InputOutcome::Failed(error.to_string()),
                    },
                }
            }
        }
    }
}

impl InputBroker for SessionBroker {
    fn ask<'a>(
        &'a self,
        key: &'a str,
        request: InputRequest,
    ) -> Pin<Box<dyn Future<Output = InputOutcome> + Send + 'a>> {
        Box::pin(async move {
            let mcp = match mcp_request(key, &request) {
                Ok(mcp) => mcp,
                Err(why) => return InputOutcome::Failed(why),
            };
            if !declared(&self.capabilities, &request) {
                self.missing
                    .lock()
                    .expect("missing lock")
                    .push(required_capability(&request));
                return InputOutcome::Unsupported;
            }
            self.send(mcp).await
        })
    }

    /// A legacy call has one round: there is no earlier state.
    fn request_state(&self) -> Option<String> {
        None
    }

    fn set_request_state(&self, _state: String) {}
}
