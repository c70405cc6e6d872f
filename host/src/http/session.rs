//! The legacy session rules, checked before rmcp sees a request.
//!
//! Gaps in rmcp 3.11 closed here (each small and named):
//! - rmcp sends a request to its stateless path whenever its `_meta` holds a
//!   protocol version and client capabilities, *whatever the version*. So a
//!   request whose `_meta` names 2025-11-25 skipped the session checks: it
//!   was served with no session, or with `Mcp-Session-Id: nope` (200, not
//!   404), `logging/setLevel` included. MCP classifies a request by the era of
//!   the revision its `_meta` names (the TypeScript SDK's
//!   `classifyInboundRequest` does the same), so such a request is legacy:
//!   without a session it is refused 400, with an unknown one 404, and with a
//!   live one it is served *in* that session (see [`into_session`]).
//! - rmcp answers a `DELETE` of an unknown or already ended session 202
//!   (Wharf's 200); the spec's answer for an unknown session is 404.
//! - rmcp answers a successful `DELETE` with 202. The spec leaves the success
//!   status open, but the official Python SDK treats anything but 200 (or 405)
//!   as a failed termination and warns, and the TypeScript reference server
//!   answers 200, so Wharf does too ([`delete_answers_ok`]).
//! - rmcp keeps any number of sessions; a legacy `initialize` past
//!   `--max-sessions` is refused 503 here (see [`SessionTable`]).
//!
//! The rules, for a request of the legacy era (by `_meta`, else by method,
//! else by the `MCP-Protocol-Version` header, as the spec orders them):
//! `initialize` without `Mcp-Session-Id` opens a session (503 when the table
//! is full); anything else needs the id of a live session (400 without one,
//! 404 for an unknown or ended one).

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Value, json};

use super::session_table::{Admission, SessionTable};
use crate::protocol::{SUPPORTED_VERSIONS, claims_stateless_era};

/// The session header.
pub const SESSION_ID: &str = "mcp-session-id";
/// The protocol version header.
const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// The `_meta` keys of a 2026-07-28 request that rmcp routes on.
use crate::protocol::META_PROTOCOL_VERSION as META_VERSION;
const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// How long a client refused for a full session table is asked to wait.
pub const RETRY_AFTER_SECS: u64 = 30;

/// What [`admit`] lets through.
pub struct Admitted {
    /// The request to hand to rmcp.
    pub request: Request,
    /// The place of the session it opens, to hold until its answer is back.
    pub session: Option<Admission>,
    /// The JSON-RPC method and id of a POST body that has them.
    pub method: Option<String>,
    pub id: Value,
    /// `params.name` (the tool of a `tools/call`), if a string.
    pub name: Option<String>,
}

impl Admitted {
    fn pass(request: Request) -> Self {
        Self {
            request,
            session: None,
            method: None,
            id: Value::Null,
            name: None,
        }
    }
}

/// The session checks of one request: a refusal, or the request to hand to
/// rmcp (its body rewritten if it must be served in its session).
pub async fn admit(table: &Arc<SessionTable>, request: Request) -> Result<Admitted, Response> {
    let method = request.method().clone();
    if method == Method::POST {
        return admit_post(table, request).await;
    }
    // GET (the session's stream) and DELETE are session operations unless the
    // header claims the stateless era (rmcp answers those 405).
    if (method == Method::GET || method == Method::DELETE)
        && !header_claims_stateless(request.headers())
        && let Some(id) = session_id(request.headers())
        && !table.knows(id, owner(&request).as_deref()).await
    {
        return Err(unknown_session(Value::Null));
    }
    Ok(Admitted::pass(request))
}

/// Just the fields the session rules need; everything else is skipped.
#[derive(Deserialize, Default)]
struct Probe {
    id: Option<Value>,
    method: Option<String>,
    params: Option<ProbeParams>,
}

#[derive(Deserialize, Default)]
struct ProbeParams {
    #[serde(rename = "_meta")]
    meta: Option<ProbeMeta>,
    name: Option<Value>,
}

#[derive(Deserialize, Default)]
struct ProbeMeta {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    protocol_version: Option<Value>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities")]
    client_capabilities: Option<IgnoredAny>,
}

impl Probe {
    /// The fields of `body`; `None` when it is not a JSON object (a batch, or
    /// no JSON at all: rmcp's and the envelope's to judge).
    fn read(body: &[u8]) -> Option<Self> {
        match serde_json::from_slice::<Self>(body) {
            Ok(probe) => Some(probe),
            // A repeated key fails the typed read; read it as rmcp would
            // (the last one wins) rather than let it past the rules.
            Err(_) => Self::from_value(&serde_json::from_slice::<Value>(body).ok()?),
        }
    }

    fn from_value(value: &Value) -> Option<Self> {
        let object = value.as_object()?;
        let meta = object
            .get("params")
            .and_then(|p| p.get("_meta"))
            .and_then(Value::as_object);
        Some(Self {
            id: object.get("id").cloned(),
            method: object.get("method").and_then(Value::as_str).map(Into::into),
            params: Some(ProbeParams {
                name: object.get("params").and_then(|p| p.get("name")).cloned(),
                meta: meta.map(|meta| ProbeMeta {
                    protocol_version: meta.get(META_VERSION).cloned(),
                    client_capabilities: meta.get(META_CAPABILITIES).map(|_| IgnoredAny),
                }),
            }),
        })
    }

    fn meta(&self) -> Option<&ProbeMeta> {
        self.params.as_ref()?.meta.as_ref()
    }

    /// Whether the request belongs to the legacy era: by the revision its
    /// `_meta` names, else `initialize` is, else by the header.
    fn is_legacy(&self, headers: &HeaderMap) -> bool {
        if let Some(version) = self.meta().and_then(|m| m.protocol_version.as_ref()) {
            // Only a legacy revision Wharf speaks: an unknown one (or one that
            // is not a string) is refused by rmcp's stateless path (-32022).
            return version.as_str().is_some_and(|v| {
                !claims_stateless_era(v) && SUPPORTED_VERSIONS.iter().any(|s| s.as_str() == v)
            });
        }
        self.method.as_deref() == Some("initialize") || !header_claims_stateless(headers)
    }

    /// Whether rmcp would take this request to its stateless path although
    /// it is legacy: its `_meta` holds both keys rmcp routes on.
    fn routed_stateless_by_rmcp(&self) -> bool {
        self.meta()
            .is_some_and(|m| m.protocol_version.is_some() && m.client_capabilities.is_some())
    }
}

async fn admit_post(table: &Arc<SessionTable>, request: Request) -> Result<Admitted, Response> {
    let (parts, body) = request.into_parts();
    // The envelope has read the body already: this takes its one chunk.
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return Err(super::rejection(
            StatusCode::BAD_REQUEST,
            "Bad Request: unreadable body",
        ));
    };
    let Some(probe) = Probe::read(&bytes) else {
        return Ok(Admitted::pass(Request::from_parts(
            parts,
            Body::from(bytes),
        )));
    };
    let id = probe.id.clone().unwrap_or(Value::Null);
    let mut admitted = Admitted {
        request: Request::from_parts(parts, Body::empty()),
        session: None,
        method: probe.method.clone(),
        id: id.clone(),
        name: probe
            .params
            .as_ref()
            .and_then(|p| p.name.as_ref())
            .and_then(Value::as_str)
            .map(Into::into),
    };
    let headers = admitted.request.headers();
    let bytes = if !probe.is_legacy(headers) {
        bytes
    } else if let Some(session) = session_id(headers) {
        if !table
            .knows(session, owner(&admitted.request).as_deref())
            .await
        {
            return Err(unknown_session(id));
        }
        if probe.routed_stateless_by_rmcp() {
            into_session(bytes)
        } else {
            bytes
        }
    } else if probe.method.as_deref() == Some("initialize") && probe.id.is_some() {
        let Some(admission) = table.admit() else {
            return Err(sessions_full(id, table.max()));
        };
        admitted.session = Some(admission);
        bytes
    } else {
        return Err(session_required(id));
    };
    *admitted.request.body_mut() = Body::from(bytes);
    Ok(admitted)
}

/// The owner key of the request's OAuth caller, if a token let it in.
pub fn owner(request: &Request) -> Option<String> {
    request
        .extensions()
        .get::<crate::oauth::Caller>()
        .map(crate::oauth::Caller::session_owner)
}

/// The body with `clientCapabilities` taken out of its `_meta`, so that rmcp
/// serves the legacy request in its session rather than statelessly (rmcp
/// routes on that key's presence). A legacy session's capabilities are the
/// ones its `initialize` declared, so nothing the handler uses is lost.
fn into_session(body: Bytes) -> Bytes {
    let Ok(mut value) = serde_json::from_slice::<Value>(&body) else {
        return body;
    };
    let removed = value
        .get_mut("params")
        .and_then(|p| p.get_mut("_meta"))
        .and_then(Value::as_object_mut)
        .and_then(|meta| meta.remove(META_CAPABILITIES));
    match removed {
        Some(_) => Bytes::from(value.to_string()),
        None => body,
    }
}

fn session_id(headers: &HeaderMap) -> Option<&str> {
    headers.get(SESSION_ID).and_then(|v| v.to_str().ok())
}

pub(super) fn header_claims_stateless(headers: &HeaderMap) -> bool {
    headers
        .get(PROTOCOL_VERSION)
        .and_then(|v| v.to_str().ok())
        .is_some_and(claims_stateless_era)
}

/// 400: a legacy request other than `initialize` without a session.
fn session_required(id: Value) -> Response {
    refusal(
        StatusCode::BAD_REQUEST,
        id,
        "Bad Request: a legacy request needs the Mcp-Session-Id of its session; \
         send initialize first",
    )
}

/// 404: a session id that names no live session.
fn unknown_session(id: Value) -> Response {
    refusal(
        StatusCode::NOT_FOUND,
        id,
        "Not Found: no such session (it ended, expired or never existed); \
         send initialize to start a new one",
    )
}

/// 503 with `Retry-After`: no room for another session.
fn sessions_full(id: Value, max: usize) -> Response {
    let mut response = refusal(
        StatusCode::SERVICE_UNAVAILABLE,
        id,
        &format!(
            "Service Unavailable: the server already holds its limit of {max} sessions \
             (--max-sessions); retry later, or end unused sessions with DELETE"
        ),
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
    response
}

/// A JSON-RPC error (-32600) answering the request `id`, with `status`.
fn refusal(status: StatusCode, id: Value, message: &str) -> Response {
    let body = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": -32600, "message": message},
    });
    let mut response = (status, body.to_string()).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// Turns rmcp's 202 for a successful session DELETE into 200.
pub fn delete_answers_ok(method: &Method, response: &mut Response) {
    if method == Method::DELETE && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::OK;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_static(value));
        }
        map
    }

    fn probe(body: &str) -> Probe {
        Probe::read(body.as_bytes()).expect("an object")
    }

    #[test]
    fn the_era_comes_from_meta_then_method_then_header() {
        let modern_header = headers(&[("mcp-protocol-version", "2026-07-28")]);
        let legacy_meta = probe(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{
            "io.modelcontextprotocol/protocolVersion":"2025-11-25",
            "io.modelcontextprotocol/clientCapabilities":{}}}}"#,
        );
        // The body wins over the header.
        assert!(legacy_meta.is_legacy(&modern_header));
        assert!(legacy_meta.routed_stateless_by_rmcp());
        let modern_meta = probe(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{
            "io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        );
        assert!(!modern_meta.is_legacy(&HeaderMap::new()));
        let initialize = probe(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#);
        assert!(initialize.is_legacy(&modern_header));
        let plain = probe(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
        assert!(plain.is_legacy(&HeaderMap::new()));
        assert!(!plain.is_legacy(&modern_header));
        assert!(!plain.routed_stateless_by_rmcp());
        let odd_version = probe(
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{
            "io.modelcontextprotocol/protocolVersion":7}}}"#,
        );
        assert!(!odd_version.is_legacy(&HeaderMap::new()));
        let unknown_version = probe(
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{
            "io.modelcontextprotocol/protocolVersion":"1900-01-01"}}}"#,
        );
        assert!(!unknown_version.is_legacy(&HeaderMap::new()));
    }

    #[test]
    fn a_repeated_key_is_read_as_rmcp_reads_it() {
        let twice = probe(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","method":"tools/list","params":{
            "_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25",
            "io.modelcontextprotocol/clientCapabilities":{}}}}"#,
        );
        assert_eq!(twice.method.as_deref(), Some("tools/list"));
        assert!(twice.routed_stateless_by_rmcp());
        assert!(Probe::read(b"[1,2]").is_none());
        assert!(Probe::read(b"{oops").is_none());
    }

    #[test]
    fn into_session_drops_only_the_capabilities_key() {
        let body = Bytes::from_static(
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{
            "io.modelcontextprotocol/protocolVersion":"2025-11-25",
            "io.modelcontextprotocol/clientCapabilities":{},"progressToken":3}}}"#,
        );
        let rewritten: Value = serde_json::from_slice(&into_session(body)).unwrap();
        assert_eq!(
            rewritten["params"]["_meta"],
            json!({"io.modelcontextprotocol/protocolVersion": "2025-11-25", "progressToken": 3})
        );
        let untouched = Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
        assert_eq!(into_session(untouched.clone()), untouched);
    }

    #[tokio::test]
    async fn refusals_carry_the_request_id_and_exact_status() {
        let response = sessions_full(json!(4), 10);
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(response.headers()[header::RETRY_AFTER], "30");
        let body = axum::body::to_bytes(response.into_body(), 4096)
            .await
            .unwrap();
        let body: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["id"], 4);
        assert_eq!(body["error"]["code"], -32600);
        assert_eq!(
            body["error"]["message"],
            "Service Unavailable: the server already holds its limit of 10 sessions \
             (--max-sessions); retry later, or end unused sessions with DELETE"
        );
        assert_eq!(unknown_session(json!("a")).status(), StatusCode::NOT_FOUND);
        assert_eq!(session_required(json!(1)).status(), StatusCode::BAD_REQUEST);
    }
}
