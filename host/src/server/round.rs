//! One round of a request that may ask the client for input (`tools/call`,
//! `prompts/get`, `resources/read`): start the client-input side, run the
//! plugin, then conclude. The same steps in both eras; see
//! [`crate::client_input`] for what differs between them.

use std::sync::Arc;

use rmcp::model::InputRequiredResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};

use super::WharfServer;
use crate::client_input::{Binding, CallInput, Conclusion, JsonObjectLike};
use crate::runtime::InputBroker;

/// How a round ended, unless it ended in a protocol error.
pub(super) enum Round<T> {
    /// The plugin's outcome stands; a plugin that misused the client-input
    /// interface has already been turned into a failure.
    Ran(T),
    /// Questions are pending, or the plugin wants another round.
    InputRequired(InputRequiredResult),
}

impl WharfServer {
    /// Runs one round of the request `binding` names: `run` gets the broker
    /// that answers the plugin's questions; `misused` names the failure of a
    /// plugin that misused the interface (with the reason).
    ///
    /// An `Err` is a protocol error for the client: a bad `inputResponses` or
    /// `requestState` (before the plugin runs), or a missing capability.
    pub(super) async fn round<T, E, Run>(
        &self,
        binding: Binding<'_>,
        input_responses: Option<&JsonObjectLike>,
        request_state: Option<&str>,
        context: &RequestContext<RoleServer>,
        run: impl FnOnce(Arc<dyn InputBroker>) -> Run,
        misused: impl FnOnce(String) -> E,
    ) -> Result<Round<Result<T, E>>, McpError>
    where
        Run: Future<Output = Result<T, E>>,
    {
        let input = CallInput::begin(&self.seal, binding, input_responses, request_state, context)?;
        let outcome = run(input.broker()).await;
        match input.conclude(binding, outcome.is_err()) {
            Conclusion::Proceed => Ok(Round::Ran(outcome)),
            Conclusion::InputRequired(result) => Ok(Round::InputRequired(result)),
            Conclusion::Error(error) => Err(error),
            Conclusion::Failed(why) => Ok(Round::Ran(Err(misused(why)))),
        }
    }
}
