//! The JSON-RPC screen of a POST body: the verdict on a body before rmcp sees
//! it, with the same codes the stdio screen gives the same bytes on a line.
//!
//! rmcp 3.11 answers every body it cannot read as a client message with 415
//! and a plain-text body (gap), and files a known method whose params do not
//! fit under "custom request", answered -32601 (404). So the body is judged
//! here first, rule for rule as `stdio::screen` judges a line:
//!
//! | body | status | code | `id` |
//! | --- | --- | --- | --- |
//! | not JSON, or JSON rmcp cannot read (invalid UTF-8, a lone surrogate, deeper than 126 levels, `1e400`) | 400 | -32700 | the request's, when it can be read |
//! | not an object (`null`, a number, an array: batches are not served) | 400 | -32600 | none |
//! | `id` not a string or an integer | 400 | -32600 | none |
//! | `jsonrpc` not `"2.0"`, `method` missing or not a string | 400 | -32600 | the request's |
//! | `params` not an object, or params a known method cannot take | 400 | -32602 | the request's |
//! | a method 2026-07-28 removed, in a request claiming 2026-07-28 | 404 | -32601 | the request's |
//!
//! Everything else goes on to rmcp (unknown methods too: its -32601 is 404).
//!
//! Cost: one pass over the body that builds nothing ([`probe`]), and for a
//! known method one typed parse of the request, the one that tells whether its
//! params fit (rmcp parses the body once more after that).

use axum::http::StatusCode;
use rmcp::model::{ErrorData, RequestId};
use serde::de::DeserializeOwned;

use super::probe::{Params, Scalar, probe};
#[cfg(doc)]
use crate::protocol::KNOWN_METHODS;
use crate::protocol::{REMOVED_IN_STATELESS, claims_stateless_era, removed_method_message};

/// The verdict on a POST body.
#[derive(Debug, PartialEq)]
pub(super) enum Verdict {
    /// Hand it to rmcp.
    Pass,
    /// Answer this error, with this status, and do not hand the body on.
    Refuse(Refusal),
}

/// A JSON-RPC error answered by the screen.
#[derive(Debug, PartialEq)]
pub(super) struct Refusal {
    pub status: StatusCode,
    pub id: Option<RequestId>,
    pub error: ErrorData,
}

fn refuse(status: StatusCode, id: Option<RequestId>, error: ErrorData) -> Verdict {
    Verdict::Refuse(Refusal { status, id, error })
}

fn invalid_request(id: Option<RequestId>, why: &'static str) -> Verdict {
    refuse(
        StatusCode::BAD_REQUEST,
        id,
        ErrorData::invalid_request(why, None),
    )
}

/// Judges one POST body.
pub(super) fn judge(body: &[u8]) -> Verdict {
    let envelope = match probe(body) {
        Ok(envelope) => envelope,
        Err(error) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                crate::jsonrpc_id::recover(body),
                ErrorData::parse_error(format!("Parse error: {error}"), None),
            );
        }
    };
    if !envelope.object {
        return invalid_request(
            None,
            if envelope.array {
                "Invalid Request: batches are not supported; send one message per request"
            } else {
                "Invalid Request: a message must be a JSON object"
            },
        );
    }
    let id = match &envelope.id {
        None => None,
        Some(raw) => match raw.request_id() {
            Some(id) => Some(id),
            None => {
                return invalid_request(
                    None,
                    "Invalid Request: `id` must be a string or an integer",
                );
            }
        },
    };
    if envelope.jsonrpc.as_ref().and_then(Scalar::as_str) != Some("2.0") {
        return invalid_request(id, "Invalid Request: `jsonrpc` must be \"2.0\"");
    }
    let method = match &envelope.method {
        Some(Scalar::Str(method)) => method,
        Some(_) => return invalid_request(id, "Invalid Request: `method` must be a string"),
        // A client's answer to a request of Wharf's (legacy sessions): rmcp's.
        None if (envelope.result || envelope.error) && id.is_some() => return Verdict::Pass,
        None if envelope.result || envelope.error => {
            return invalid_request(
                None,
                "Invalid Request: a response needs the `id` of the request it answers",
            );
        }
        None => return invalid_request(id, "Invalid Request: `method` is missing"),
    };
    let claimed_version = match &envelope.params {
        None => None,
        Some(Params::Object { protocol_version }) => protocol_version.as_deref(),
        Some(Params::NotAnObject) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                id,
                ErrorData::invalid_params("Invalid params: `params` must be an object", None),
            );
        }
    };
    let Some(id) = id else {
        // A notification: rmcp takes any method and params.
        return Verdict::Pass;
    };
    if claimed_version.is_some_and(claims_stateless_era)
        && REMOVED_IN_STATELESS.contains(&method.as_ref())
    {
        // Before the params: whatever they hold, the method is gone (and rmcp
        // would still route `initialize` to the legacy handshake).
        return refuse(
            StatusCode::NOT_FOUND,
            Some(id),
            ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                removed_method_message(method),
                None,
            ),
        );
    }
    if let Some(problem) = typed_check(method).and_then(|check| check(body)) {
        return refuse(
            StatusCode::BAD_REQUEST,
            Some(id),
            ErrorData::invalid_params(format!("Invalid params for {method}: {problem}"), None),
        );
    }
    Verdict::Pass
}

/// Why a request's params do not fit its method, in serde's words.
type Check = fn(&[u8]) -> Option<String>;

/// The check of a method rmcp knows ([`KNOWN_METHODS`]): parses the request as
/// rmcp's type for that method, the one rmcp would otherwise fall back from.
#[allow(deprecated)] // legacy-only methods are still known to rmcp
fn typed_check(method: &str) -> Option<Check> {
    use rmcp::model::{
        CallToolRequest, CompleteRequest, DiscoverRequest, GetPromptRequest, InitializeRequest,
        ListPromptsRequest, ListResourceTemplatesRequest, ListResourcesRequest, ListToolsRequest,
        PingRequest, ReadResourceRequest, SetLevelRequest, SubscribeRequest,
        SubscriptionsListenRequest, UnsubscribeRequest,
    };
    fn check<T: DeserializeOwned>(body: &[u8]) -> Option<String> {
        let error = serde_json::from_slice::<T>(body).err()?;
        // The position is in the body, which the client has; the stdio screen
        // words the same problem without one.
        let position = format!(" at line {} column {}", error.line(), error.column());
        let text = error.to_string();
        Some(text.strip_suffix(&position).unwrap_or(&text).to_owned())
    }
    let check: Check = match method {
        "initialize" => check::<InitializeRequest>,
        "ping" => check::<PingRequest>,
        "server/discover" => check::<DiscoverRequest>,
        "tools/list" => check::<ListToolsRequest>,
        "tools/call" => check::<CallToolRequest>,
        "prompts/list" => check::<ListPromptsRequest>,
        "prompts/get" => check::<GetPromptRequest>,
        "resources/list" => check::<ListResourcesRequest>,
        "resources/read" => check::<ReadResourceRequest>,
        "resources/templates/list" => check::<ListResourceTemplatesRequest>,
        "resources/subscribe" => check::<SubscribeRequest>,
        "resources/unsubscribe" => check::<UnsubscribeRequest>,
        "subscriptions/listen" => check::<SubscriptionsListenRequest>,
        "completion/complete" => check::<CompleteRequest>,
        "logging/setLevel" => check::<SetLevelRequest>,
        _ => return None,
    };
    Some(check)
}

#[cfg(test)]
mod tests;
