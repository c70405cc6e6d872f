//! The screen of the stdio transport: what becomes of one input line before
//! rmcp sees it.
//!
//! rmcp's own line codec drops malformed JSON without a reply and stops serving
//! for good on a stray client response or on a notification before the first
//! request (rmcp gap, see docs/protocol.md). So each line is judged here first: malformed
//! lines get `-32700`/`-32600`/`-32602` replies, a method removed in the
//! stateless revision gets `-32601`, responses to no request of Wharf's and
//! early notifications are dropped with a log line, and only well-formed client
//! messages are handed on. A line that does not parse is answered with its
//! request's id when a scan can read it (`jsonrpc_id::recover`), so a client
//! whose request was too deep or held `1e400` is not left waiting.
//!
//! A well-formed request is then judged against the connection: a request
//! whose id is in flight (`in_flight`) and an `initialize` after the
//! lifecycle started (`lifecycle`) are refused here.

use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, ErrorData, GetMeta, RequestId,
    ServerJsonRpcMessage,
};
use serde_json::Value;

use super::LineTransport;
use super::in_flight;
use super::lifecycle::{refuse_initialize, started_by};
use crate::excerpt::Excerpt;
use crate::protocol::{
    KNOWN_METHODS, META_PROTOCOL_VERSION, REMOVED_IN_STATELESS, claims_stateless_era,
    removed_method_message,
};
use crate::{json_values, jsonrpc_id};

mod well_formed;

/// The request a line holds, if it is a plainly well-formed one for a method
/// rmcp knows: what the screen hands rmcp for a usual request (anything else
/// takes the full screen, which answers errors itself). For the overhead
/// benchmark.
#[doc(hidden)]
pub fn well_formed_request(line: &[u8]) -> Option<ClientJsonRpcMessage> {
    well_formed::request(line, KNOWN_METHODS)
}

impl<R> LineTransport<R> {
    /// Decides what to do with one line: pass it to rmcp, answer it, or drop it.
    pub(super) fn screen(&mut self, line: &[u8]) -> Option<ClientJsonRpcMessage> {
        let verdict = if json_values::more_than(line, self.max_json_values) {
            Screened::Reply(
                jsonrpc_id::recover(line),
                ErrorData::invalid_request(json_values::too_many(self.max_json_values), None),
            )
        } else {
            classify(line)
        };
        match verdict {
            Screened::Blank => None,
            Screened::Reply(id, error) => {
                // The message may quote the client's method name: bounded.
                tracing::debug!(
                    code = error.code.0,
                    "rejected a message: {}",
                    Excerpt::new(error.message.as_ref())
                );
                self.reply(ServerJsonRpcMessage::error(error, id));
                None
            }
            Screened::Drop(why) => {
                tracing::warn!("ignored a message: {}", Excerpt::new(&why));
                None
            }
            Screened::Response(id, message) => {
                if self.awaited.lock().expect("awaited lock").remove(&id) {
                    return Some(*message);
                }
                tracing::warn!("ignored a message: a response (id {id}) to no request of Wharf's");
                None
            }
            Screened::Message(message) => {
                let message = *message;
                if let ClientJsonRpcMessage::Request(request) = &message
                    && REMOVED_IN_STATELESS.contains(&request.request.method())
                    && request
                        .request
                        .get_meta()
                        .protocol_version()
                        .is_some_and(|version| claims_stateless_era(version.as_str()))
                {
                    // rmcp would still answer these (ping even before the
                    // lifecycle starts).
                    self.reply(ServerJsonRpcMessage::error(
                        ErrorData::new(
                            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                            removed_method_message(request.request.method()),
                            None,
                        ),
                        Some(request.id.clone()),
                    ));
                    return None;
                }
                match &message {
                    ClientJsonRpcMessage::Request(request) => {
                        if let Some(error) = self.refusal(&request.request, &request.id) {
                            tracing::debug!(
                                code = error.code.0,
                                "refused a request: {}",
                                error.message
                            );
                            self.reply(ServerJsonRpcMessage::error(
                                error,
                                Some(request.id.clone()),
                            ));
                            return None;
                        }
                        if self.lifecycle.is_none() {
                            self.lifecycle = started_by(&request.request, self.supported);
                        }
                    }
                    _ if self.lifecycle.is_none() => {
                        tracing::debug!("ignored a message before the first request");
                        return None;
                    }
                    ClientJsonRpcMessage::Notification(notification) => {
                        if let ClientNotification::CancelledNotification(cancelled) =
                            &notification.notification
                            && let Some(id) = &cancelled.params.request_id
                        {
                            // rmcp sends no answer for a cancelled request.
                            self.in_flight.end(id);
                        }
                    }
                    _ => {}
                }
                self.lift_task_ids(line, message)
            }
        }
    }

    /// Why a well-formed request must not reach rmcp, if it must not: an
    /// `initialize` once the lifecycle has started (the era never changes),
    /// or an id already in flight. Otherwise the request is now in flight.
    fn refusal(&mut self, request: &ClientRequest, id: &RequestId) -> Option<ErrorData> {
        if let (ClientRequest::InitializeRequest(initialize), Some(lifecycle)) =
            (request, self.lifecycle)
        {
            return Some(refuse_initialize(
                lifecycle,
                &initialize.params.protocol_version,
                self.supported,
            ));
        }
        (!self.in_flight.admit(id)).then(|| in_flight::duplicate(id))
    }
}

/// The verdict on one input line.
enum Screened {
    Blank,
    Message(Box<ClientJsonRpcMessage>),
    Reply(Option<RequestId>, ErrorData),
    Drop(String),
    /// A well-formed response, passed on only if Wharf awaits it.
    Response(RequestId, Box<ClientJsonRpcMessage>),
}

fn classify(line: &[u8]) -> Screened {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Screened::Blank;
    }
    if let Some(message) = well_formed::request(line, KNOWN_METHODS) {
        return Screened::Message(Box::new(message));
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(error) => {
            return Screened::Reply(
                jsonrpc_id::recover(line),
                ErrorData::parse_error(format!("Parse error: {error}"), None),
            );
        }
    };
    let Value::Object(object) = &value else {
        let why = if value.is_array() {
            "Invalid Request: batches are not supported; send one message per line"
        } else {
            "Invalid Request: a message must be a JSON object"
        };
        return Screened::Reply(None, ErrorData::invalid_request(why, None));
    };
    let id = match object.get("id") {
        None => None,
        Some(raw) => match serde_json::from_value::<RequestId>(raw.clone()) {
            Ok(id) if !raw.is_null() => Some(id),
            _ => {
                return Screened::Reply(
                    None,
                    ErrorData::invalid_request(
                        "Invalid Request: `id` must be a string or an integer",
                        None,
                    ),
                );
            }
        },
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Screened::Reply(
            id,
            ErrorData::invalid_request("Invalid Request: `jsonrpc` must be \"2.0\"", None),
        );
    }
    let method = match object.get("method") {
        Some(Value::String(method)) => method.clone(),
        Some(_) => {
            return Screened::Reply(
                id,
                ErrorData::invalid_request("Invalid Request: `method` must be a string", None),
            );
        }
        None if object.contains_key("result") || object.contains_key("error") => {
            let parsed = serde_json::from_value::<ClientJsonRpcMessage>(value.clone());
            return match (id, parsed) {
                (Some(id), Ok(message)) => Screened::Response(id, Box::new(message)),
                (id, _) => Screened::Drop(format!(
                    "a malformed response (id {})",
                    id.map(|id| id.to_string()).unwrap_or_else(|| "none".into())
                )),
            };
        }
        None => {
            return Screened::Reply(
                id,
                ErrorData::invalid_request("Invalid Request: `method` is missing", None),
            );
        }
    };
    if let Some(params) = object.get("params")
        && !params.is_object()
    {
        return match id {
            Some(id) => Screened::Reply(
                Some(id),
                ErrorData::invalid_params("Invalid params: `params` must be an object", None),
            ),
            None => Screened::Drop(format!("notification {method} with non-object params")),
        };
    }
    let params = object.get("params").cloned();
    if let Some(id) = &id
        && REMOVED_IN_STATELESS.contains(&method.as_str())
        && params
            .as_ref()
            .and_then(|p| p.get("_meta")?.get(META_PROTOCOL_VERSION)?.as_str())
            .is_some_and(claims_stateless_era)
    {
        // Whatever its params hold, the method is gone in that revision.
        return Screened::Reply(
            Some(id.clone()),
            ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                removed_method_message(&method),
                None,
            ),
        );
    }
    match serde_json::from_value::<ClientJsonRpcMessage>(value) {
        // rmcp files a known method whose params do not fit under "custom request",
        // which would answer "method not found"; it is a params problem.
        Ok(ClientJsonRpcMessage::Request(request))
            if matches!(request.request, ClientRequest::CustomRequest(_))
                && KNOWN_METHODS.contains(&method.as_str()) =>
        {
            Screened::Reply(
                Some(request.id),
                ErrorData::invalid_params(
                    format!(
                        "Invalid params for {method}: {}",
                        params_problem(&method, params)
                    ),
                    None,
                ),
            )
        }
        Ok(message) => Screened::Message(Box::new(message)),
        Err(error) => match id {
            None => Screened::Drop(format!("notification {method} is malformed: {error}")),
            Some(id) if KNOWN_METHODS.contains(&method.as_str()) => Screened::Reply(
                Some(id),
                ErrorData::invalid_params(format!("Invalid params for {method}: {error}"), None),
            ),
            Some(id) => Screened::Reply(
                Some(id),
                ErrorData::invalid_request(format!("Invalid Request: {error}"), None),
            ),
        },
    }
}

/// Why `params` do not fit `method`, in serde's words where we can tell.
fn params_problem(method: &str, params: Option<Value>) -> String {
    use rmcp::model::{
        CallToolRequestParams, CompleteRequestParams, GetPromptRequestParams,
        InitializeRequestParams, PaginatedRequestParams, ReadResourceRequestParams,
        SubscriptionsListenRequestParams,
    };
    use rmcp::model::{CancelTaskParams, GetTaskParams, UpdateTaskParams};
    fn check<T: serde::de::DeserializeOwned>(params: Option<Value>) -> Option<String> {
        serde_json::from_value::<T>(params.unwrap_or(Value::Null))
            .err()
            .map(|e| e.to_string())
    }
    let problem = match method {
        "tools/call" => check::<CallToolRequestParams>(params),
        "initialize" => check::<InitializeRequestParams>(params),
        "resources/read" => check::<ReadResourceRequestParams>(params),
        "prompts/get" => check::<GetPromptRequestParams>(params),
        "completion/complete" => check::<CompleteRequestParams>(params),
        "subscriptions/listen" => check::<SubscriptionsListenRequestParams>(params),
        "tasks/get" => check::<GetTaskParams>(params),
        "tasks/update" => check::<UpdateTaskParams>(params),
        "tasks/cancel" => check::<CancelTaskParams>(params),
        "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list" => {
            check::<PaginatedRequestParams>(params)
        }
        _ => None,
    };
    problem.unwrap_or_else(|| "they do not match the method's schema".to_string())
}

/// The id a request line reaches rmcp with (for the unit tests of ids).
#[cfg(test)]
pub(super) fn request_id(line: &[u8]) -> Option<RequestId> {
    match classify(line) {
        Screened::Message(message) => match *message {
            ClientJsonRpcMessage::Request(request) => Some(request.id),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests;
