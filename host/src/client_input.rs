//! Questions from plugins to the client (elicitation, sampling, roots), in both
//! eras of MCP.
//!
//! Strategy: the server starts a [`CallInput`] before running the plugin and
//! hands its broker to the runtime; the plugin's `ask` calls reach the broker;
//! after the plugin returns, [`CallInput::conclude`] says whether the server
//! answers normally, with `input_required`, or with an error.
//! - 2026-07-28 ([`rounds`]): servers send no requests. A question the retry's
//!   `inputResponses` does not answer is *pending*; the plugin returns early and
//!   the client gets `resultType: "input_required"` with the questions and a
//!   sealed `requestState` ([`seal`]) carrying the answers so far.
//! - legacy sessions ([`session`]): the question becomes a real
//!   `elicitation/create`, `sampling/createMessage` or `roots/list` request
//!   through rmcp's peer, awaited while the guest is suspended.
//!
//! Either way a question the client did not declare the capability for is
//! `unsupported`; a call that then fails is answered with -32021 naming the
//! missing capabilities.

mod rounds;
pub mod seal;
mod session;

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    ClientCapabilities, ErrorCode, InputRequest as McpInputRequest, InputRequests,
    InputRequiredResult, JsonObject,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::{Map, Value, json};

use crate::runtime::{InputBroker, InputRequest};
pub use seal::{Binding, MIN_STATE_KEY_BYTES, StateKeyError, StateSeal};

/// Longest a legacy session's question may stay unanswered. The call's own
/// timeout stands still meanwhile (the plugin is not running).
pub const LEGACY_ANSWER_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// Largest plugin state (`set-request-state`), in bytes.
pub const MAX_PLUGIN_STATE_BYTES: usize = 16 * 1024;

/// The client-input side of one MRTR-capable request.
pub enum CallInput {
    Rounds(Arc<rounds::RoundBroker>),
    Session(Arc<session::SessionBroker>),
}

/// What to answer once the plugin has returned.
#[derive(Debug)]
pub enum Conclusion {
    /// The plugin's own result stands.
    Proceed,
    /// Questions are pending, or the plugin wants another round.
    InputRequired(InputRequiredResult),
    /// A protocol error (-32021 for a missing capability, -32602 for a bad
    /// `inputResponses` value).
    Error(McpError),
    /// The plugin misused the interface; the call fails with this reason.
    Failed(String),
}

impl CallInput {
    /// Starts the client-input side of a request: for a 2026-07-28 request,
    /// checks `inputResponses` and opens `requestState` (-32602 on either);
    /// for a legacy session, prepares to send requests to the client.
    pub fn begin(
        seal: &Arc<StateSeal>,
        binding: Binding<'_>,
        input_responses: Option<&JsonObjectLike>,
        request_state: Option<&str>,
        context: &RequestContext<RoleServer>,
    ) -> Result<Self, McpError> {
        if context.meta.protocol_version().is_none() {
            let capabilities = context
                .peer
                .peer_info()
                .map(|info| info.capabilities.clone());
            return Ok(CallInput::Session(Arc::new(session::SessionBroker::new(
                context.peer.clone(),
                capabilities.unwrap_or_default(),
                context.ct.clone(),
            ))));
        }
        let capabilities = context.meta.client_capabilities().unwrap_or_default();
        let broker = rounds::RoundBroker::begin(
            seal.clone(),
            binding,
            capabilities,
            input_responses,
            request_state,
        )?;
        Ok(CallInput::Rounds(Arc::new(broker)))
    }

    /// A 2026-07-28 round with the client's `capabilities`, whatever the
    /// request's era: the rounds of a task, whose questions reach the client
    /// through `tasks/get` and come back through `tasks/update`.
    pub fn round(
        seal: &Arc<StateSeal>,
        binding: Binding<'_>,
        capabilities: ClientCapabilities,
        input_responses: Option<&JsonObjectLike>,
        request_state: Option<&str>,
    ) -> Result<Self, McpError> {
        let broker = rounds::RoundBroker::begin(
            seal.clone(),
            binding,
            capabilities,
            input_responses,
            request_state,
        )?;
        Ok(CallInput::Rounds(Arc::new(broker)))
    }

    /// The broker to put in the call's context.
    pub fn broker(&self) -> Arc<dyn InputBroker> {
        match self {
            CallInput::Rounds(broker) => broker.clone(),
            CallInput::Session(broker) => broker.clone(),
        }
    }

    /// What to answer, given whether the plugin's call failed (a trap, a
    /// timeout or an error it returned; not an `isError` result).
    pub fn conclude(&self, binding: Binding<'_>, failed: bool) -> Conclusion {
        match self {
            CallInput::Rounds(broker) => broker.conclude(binding, failed),
            CallInput::Session(broker) => broker.conclude(failed),
        }
    }
}

/// `inputResponses` as rmcp parses it (a map of JSON values).
pub type JsonObjectLike = std::collections::BTreeMap<String, Value>;

/// The MCP form of a plugin's question, as it appears in `inputRequests`
/// (method and params, no `jsonrpc`/`id`). Malformed params (a sampling
/// request without `maxTokens`, a schema MCP does not allow) are the
/// plugin's error, named. A URL elicitation's `elicitationId` (2025-11-25) is
/// the question's key.
pub fn mcp_request(key: &str, request: &InputRequest) -> Result<McpInputRequest, String> {
    let (method, params) = match request {
        InputRequest::ElicitForm { message, schema } => (
            "elicitation/create",
            json!({"mode": "form", "message": message, "requestedSchema": schema}),
        ),
        InputRequest::ElicitUrl { message, url } => (
            "elicitation/create",
            json!({"mode": "url", "message": message, "url": url, "elicitationId": key}),
        ),
        InputRequest::Sampling(params) => ("sampling/createMessage", params.clone()),
        InputRequest::ListRoots => ("roots/list", json!({})),
    };
    serde_json::from_value(json!({"method": method, "params": params}))
        .map_err(|e| format!("invalid {method} request: {e}"))
}

/// The capability a question needs, as a `ClientCapabilities` object for
/// `requiredCapabilities`.
pub fn required_capability(request: &InputRequest) -> Value {
    match request {
        InputRequest::ElicitForm { .. } => json!({"elicitation": {}}),
        InputRequest::ElicitUrl { .. } => json!({"elicitation": {"url": {}}}),
        InputRequest::Sampling(_) => json!({"sampling": {}}),
        InputRequest::ListRoots => json!({"roots": {}}),
    }
}

/// Whether `capabilities` allow the question. Elicitation `{}` means form
/// mode only; URL mode must be named.
pub fn declared(capabilities: &ClientCapabilities, request: &InputRequest) -> bool {
    match request {
        InputRequest::ElicitForm { .. } => capabilities
            .elicitation
            .as_ref()
            .is_some_and(|e| e.form.is_some() || e.url.is_none()),
        InputRequest::ElicitUrl { .. } => capabilities
            .elicitation
            .as_ref()
            .is_some_and(|e| e.url.is_some()),
        InputRequest::Sampling(_) => capabilities.sampling.is_some(),
        InputRequest::ListRoots => capabilities.roots.is_some(),
    }
}

/// Merges capability objects (`{"elicitation":{}}` and `{"elicitation":{"url":{}}}`
/// make `{"elicitation":{"url":{}}}`).
fn merge(into: &mut Map<String, Value>, from: &Value) {
    let Value::Object(from) = from else { return };
    for (key, value) in from {
        match into.get_mut(key) {
            Some(Value::Object(existing)) => merge(existing, value),
            _ => {
                into.insert(key.clone(), value.clone());
            }
        }
    }
}

/// -32021 naming every capability the call asked for and did not have.
pub fn missing_capability_error(missing: &[Value]) -> McpError {
    let mut required = Map::new();
    for capability in missing {
        merge(&mut required, capability);
    }
    let names: Vec<&str> = required.keys().map(String::as_str).collect();
    McpError::new(
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!(
            "Server requires the {} capability for this request",
            names.join(" and ")
        ),
        Some(json!({ "requiredCapabilities": Value::Object(required) })),
    )
}

/// The `input_required` result for pending questions and a sealed state.
fn input_required(requests: InputRequests, state: String) -> InputRequiredResult {
    InputRequiredResult::new((!requests.is_empty()).then_some(requests), Some(state))
}

/// Tool arguments as the JSON value the state is bound to.
pub fn arguments_value(arguments: Option<&JsonObject>) -> Value {
    arguments
        .map(|a| Value::Object(a.clone()))
        .unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form() -> InputRequest {
        InputRequest::ElicitForm {
            message: "Name?".into(),
            schema: json!({"type": "object", "properties": {"name": {"type": "string"}}}),
        }
    }

    fn url() -> InputRequest {
        InputRequest::ElicitUrl {
            message: "Sign in".into(),
            url: "https://example.com/login".into(),
        }
    }

    #[test]
    fn elicitation_modes_follow_the_declared_capability() {
        let none = ClientCapabilities::default();
        let bare: ClientCapabilities = serde_json::from_value(json!({"elicitation": {}})).unwrap();
        let url_only: ClientCapabilities =
            serde_json::from_value(json!({"elicitation": {"url": {}}})).unwrap();
        let both: ClientCapabilities =
            serde_json::from_value(json!({"elicitation": {"form": {}, "url": {}}})).unwrap();
        assert!(!declared(&none, &form()));
        assert!(declared(&bare, &form()));
        assert!(!declared(&bare, &url()));
        assert!(!declared(&url_only, &form()));
        assert!(declared(&url_only, &url()));
        assert!(declared(&both, &form()));
        let sampling: ClientCapabilities = serde_json::from_value(json!({"sampling": {}})).unwrap();
        assert!(declared(&sampling, &InputRequest::Sampling(json!({}))));
        assert!(!declared(&sampling, &InputRequest::ListRoots));
        assert!(!declared(&sampling, &form()));
    }

    #[test]
    fn missing_capabilities_merge_into_one_object() {
        let error = missing_capability_error(&[
            required_capability(&form()),
            required_capability(&url()),
            required_capability(&InputRequest::Sampling(json!({}))),
        ]);
        assert_eq!(error.code, ErrorCode(-32021));
        assert_eq!(
            error.message,
            "Server requires the elicitation and sampling capability for this request"
        );
        assert_eq!(
            error.data,
            Some(json!({"requiredCapabilities": {"elicitation": {"url": {}}, "sampling": {}}}))
        );
    }

    #[test]
    fn questions_become_mcp_requests() {
        let value = |r: &InputRequest| serde_json::to_value(mcp_request("k", r).unwrap()).unwrap();
        assert_eq!(
            value(&form()),
            json!({"method": "elicitation/create", "params": {"mode": "form", "message": "Name?",
                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}})
        );
        assert_eq!(
            value(&url())["params"],
            json!({"mode": "url", "message": "Sign in", "url": "https://example.com/login",
                "elicitationId": "k"})
        );
        assert_eq!(value(&InputRequest::ListRoots)["method"], "roots/list");
        let sampling = InputRequest::Sampling(json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "Hi"}}],
            "maxTokens": 10
        }));
        assert_eq!(value(&sampling)["method"], "sampling/createMessage");
        assert_eq!(value(&sampling)["params"]["maxTokens"], 10);
        let error = mcp_request("k", &InputRequest::Sampling(json!({"messages": []}))).unwrap_err();
        assert!(
            error.starts_with("invalid sampling/createMessage request: "),
            "{error}"
        );
    }
}
