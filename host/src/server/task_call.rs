//! A `tools/call` that becomes a task (SEP-2663).
//!
//! Strategy: the guest runs in a tokio task of its own, so it can outlive
//! the request. A tool whose `[tasks]` says so gets its task before the guest
//! starts; otherwise the request waits up to `after-ms`: a call that ends
//! sooner is answered as any call (questions asked by then go back to the
//! client as a multi round-trip `input_required`, so input is gathered
//! before a task exists), one still running then gets its task and the
//! client a `CreateTaskResult` at once.
//!
//! From then on a driver owns the call: it runs the guest in rounds, as a
//! multi round-trip request does, but the questions of a round become the
//! task's `inputRequests` and their answers come through `tasks/update`; the
//! next round runs the guest again with every answer so far. The end of the
//! last round is the task's end: its result (`completed`, tool errors
//! included) or its JSON-RPC error (`failed`). `tasks/cancel` (or the
//! record's expiry) cancels the guest's token, which the runtime turns into
//! an epoch interruption.
//!
//! A task's call sends no progress or log notifications: SEP-2663 leaves
//! them out of tasks, and the request that could carry them is over.

use std::sync::Arc;

use rmcp::model::{CallToolResponse, CreateTaskResult, InputRequiredResult, InputResponses};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::Value;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::WharfServer;
use super::call_audit::CallAudit;
use super::call_context::{call_trace, caller_identity};
use super::tasks::{Tasks, owner_of, too_many};
use super::tools::{answer, finish};
use crate::audit::CallOutcome as Audited;
use crate::client_input::{Binding, CallInput, Conclusion, StateSeal};
use crate::manifest::TaskStart;
use crate::metrics::{CallOutcome, CallTimer};
use crate::registry::ToolSet;
use crate::runtime::{CallContext, CallFailure, CallOutput, CallerIdentity};

/// Most rounds one task runs: a plugin that keeps asking for another round
/// without a question would otherwise run forever.
pub const MAX_TASK_ROUNDS: usize = 64;

/// A `tools/call` that may become a task, with what it needs to go on
/// after its request is answered.
pub(super) struct TaskCall {
    pub set: Arc<ToolSet>,
    /// The tool's exposed name.
    pub tool: String,
    pub arguments: Value,
    pub input_responses: Option<InputResponses>,
    pub request_state: Option<String>,
    pub start: TaskStart,
    pub audit: Option<CallAudit>,
    pub timer: CallTimer,
}

/// How one round of the guest ended.
enum RoundEnd {
    Ran(Result<CallOutput, CallFailure>),
    InputRequired(InputRequiredResult),
    Error(McpError),
}

/// What every round of one call shares.
#[derive(Clone)]
struct Rounds {
    set: Arc<ToolSet>,
    tool: Arc<str>,
    arguments: Arc<Value>,
    seal: Arc<StateSeal>,
    capabilities: rmcp::model::ClientCapabilities,
    cancel: CancellationToken,
    /// Who asked for the task, for every round's `host.caller`.
    caller: Option<Arc<CallerIdentity>>,
}

impl Rounds {
    fn binding(&self) -> Binding<'_> {
        Binding {
            method: "tools/call",
            name: &self.tool,
            arguments: &self.arguments,
        }
    }

    /// Opens a round with these answers and state (-32602 if they do not
    /// check out) and starts the guest on it.
    fn start(
        &self,
        responses: Option<&InputResponses>,
        state: Option<&str>,
    ) -> Result<JoinHandle<RoundEnd>, McpError> {
        let input = CallInput::round(
            &self.seal,
            self.binding(),
            self.capabilities.clone(),
            responses,
            state,
        )?;
        let rounds = self.clone();
        Ok(tokio::spawn(async move { rounds.run(input).await }))
    }

    async fn run(self, input: CallInput) -> RoundEnd {
        let Some(tool) = self.set.get(&self.tool) else {
            return RoundEnd::Error(McpError::internal_error("the tool is gone", None));
        };
        let call = CallContext {
            cancel: self.cancel.clone(),
            events: None,
            input: Some(input.broker()),
            trace: call_trace(),
            caller: self.caller.clone(),
        };
        let outcome = tool
            .plugin()
            .call(&tool.spec().name, &self.arguments, call)
            .await;
        match input.conclude(self.binding(), outcome.is_err()) {
            Conclusion::Proceed => RoundEnd::Ran(outcome),
            Conclusion::InputRequired(result) => RoundEnd::InputRequired(result),
            Conclusion::Error(error) => RoundEnd::Error(error),
            Conclusion::Failed(why) => RoundEnd::Ran(Err(CallFailure::Failed(why))),
        }
    }
}

/// The end of a round's tokio task (a panic there is an internal error).
fn joined(result: Result<RoundEnd, tokio::task::JoinError>) -> RoundEnd {
    result.unwrap_or_else(|error| {
        RoundEnd::Error(McpError::internal_error(
            format!("the call's task ended abnormally: {error}"),
            None,
        ))
    })
}

impl TaskCall {
    pub(super) async fn run(
        self,
        server: &WharfServer,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let owner = owner_of(&context);
        let rounds = Rounds {
            set: self.set.clone(),
            tool: self.tool.as_str().into(),
            arguments: Arc::new(self.arguments.clone()),
            seal: server.seal.clone(),
            capabilities: context.meta.client_capabilities().unwrap_or_default(),
            cancel: CancellationToken::new(),
            caller: caller_identity(&context),
        };
        let tasks = server.tasks.clone();
        let after = match self.start {
            TaskStart::After(after) => after,
            TaskStart::Immediately | TaskStart::Never => {
                // The request's own answers are checked (-32602) before a task
                // exists for them.
                let first = match rounds
                    .start(self.input_responses.as_ref(), self.request_state.as_deref())
                {
                    Ok(job) => job,
                    Err(error) => return self.respond(RoundEnd::Error(error)),
                };
                let task = match tasks.create(owner, rounds.cancel.clone()) {
                    Ok((task, _)) => task,
                    Err(full) => {
                        rounds.cancel.cancel();
                        first.abort();
                        return self.respond(RoundEnd::Error(too_many(full)));
                    }
                };
                let id = task.task_id.clone();
                tokio::spawn(drive(tasks, id, rounds, Ok(first), self.audit, self.timer));
                return Ok(CreateTaskResult::new(task).into());
            }
        };
        let mut job =
            match rounds.start(self.input_responses.as_ref(), self.request_state.as_deref()) {
                Ok(job) => job,
                Err(error) => return self.respond(RoundEnd::Error(error)),
            };
        let deadline = tokio::time::sleep(after);
        tokio::pin!(deadline);
        let mut promotable = true;
        loop {
            tokio::select! {
                biased;
                end = &mut job => return self.respond(joined(end)),
                () = context.ct.cancelled(), if !rounds.cancel.is_cancelled() => {
                    rounds.cancel.cancel();
                }
                () = &mut deadline, if promotable && !rounds.cancel.is_cancelled() => {
                    match tasks.create(owner.clone(), rounds.cancel.clone()) {
                        Ok((task, _)) => {
                            let id = task.task_id.clone();
                            tokio::spawn(drive(tasks, id, rounds, Ok(job), self.audit, self.timer));
                            return Ok(CreateTaskResult::new(task).into());
                        }
                        Err(full) => {
                            // Past the bound the call simply goes on as a
                            // normal one: the client waits, as without tasks.
                            tracing::debug!(tool = %self.tool, "no task for a long call: {full}");
                            promotable = false;
                        }
                    }
                }
            }
        }
    }

    /// The answer to a call that ended before it became a task.
    fn respond(self, end: RoundEnd) -> Result<CallToolResponse, McpError> {
        match end {
            RoundEnd::Ran(outcome) => {
                let Some(tool) = self.set.get(&self.tool) else {
                    return Err(McpError::internal_error("the tool is gone", None));
                };
                answer(&self.set, tool, outcome, self.audit, self.timer).map(Into::into)
            }
            RoundEnd::InputRequired(result) => {
                self.timer.finish(CallOutcome::Success);
                finish(self.audit, Audited::InputRequired, None);
                Ok(result.into())
            }
            RoundEnd::Error(error) => {
                self.timer.finish(CallOutcome::Error);
                finish(self.audit, Audited::ProtocolError, None);
                Err(error)
            }
        }
    }
}

/// Runs a task's call to its end: round after round, each round's questions
/// put to the client through the task, then the end recorded.
async fn drive(
    tasks: Arc<Tasks>,
    id: String,
    rounds: Rounds,
    first: Result<JoinHandle<RoundEnd>, McpError>,
    audit: Option<CallAudit>,
    timer: CallTimer,
) {
    let mut job = first;
    let mut count = 1;
    let end = loop {
        let end = match job {
            Ok(handle) => joined(handle.await),
            Err(error) => RoundEnd::Error(error),
        };
        let RoundEnd::InputRequired(result) = end else {
            break end;
        };
        if count == MAX_TASK_ROUNDS {
            break RoundEnd::Error(McpError::internal_error(
                format!("the plugin asked for more than {MAX_TASK_ROUNDS} rounds"),
                None,
            ));
        }
        count += 1;
        let requests = result.input_requests.unwrap_or_default();
        let answers = if requests.is_empty() {
            // The plugin wants another round with its new state.
            InputResponses::new()
        } else {
            let Some(answers) = tasks.ask(&id, &requests) else {
                // Cancelled or expired while the round ended.
                break RoundEnd::Ran(Err(CallFailure::Cancelled));
            };
            tokio::select! {
                answers = answers => match answers {
                    Ok(answers) => answers,
                    Err(_) => break RoundEnd::Ran(Err(CallFailure::Cancelled)),
                },
                () = rounds.cancel.cancelled() => break RoundEnd::Ran(Err(CallFailure::Cancelled)),
            }
        };
        job = rounds.start(Some(&answers), result.request_state.as_deref());
    };
    let recorded = match end {
        RoundEnd::Ran(outcome) => match rounds.set.get(&rounds.tool) {
            Some(tool) => answer(&rounds.set, tool, outcome, audit, timer),
            None => Err(McpError::internal_error("the tool is gone", None)),
        },
        RoundEnd::Error(error) => {
            timer.finish(CallOutcome::Error);
            finish(audit, Audited::ProtocolError, None);
            Err(error)
        }
        RoundEnd::InputRequired(_) => unreachable!("the loop goes on after input_required"),
    };
    tasks.finish(&id, recorded);
}
