//! The POST body envelope: size limit, JSON well-formedness, and the one era
//! rule rmcp 3.11 gets wrong.
//!
//! Gaps closed here (each is small and named):
//! - rmcp answers a body that is not JSON with 415 and a plain-text body; MCP
//!   clients expect a JSON-RPC parse error (-32700), so Wharf answers 400 with one.
//! - rmcp routes every `initialize` to the legacy handshake, even one whose
//!   `_meta` claims 2026-07-28. Over a modern request `initialize` is a removed
//!   method: 404 with -32601, as the spec and the conformance suite require.
//!
//! The body is read once here (bounded: 413 above the limit) and handed on as
//! bytes, so rmcp does not read the network again.

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt as _;
use serde::Deserialize;
use serde_json::{Value, json};

use super::rejection;
use crate::protocol::{REMOVED_IN_STATELESS, claims_stateless_era, removed_method_message};

/// Just the fields the envelope checks need; everything else is skipped.
#[derive(Deserialize)]
struct Probe {
    id: Option<Value>,
    method: Option<String>,
    params: Option<ProbeParams>,
}

#[derive(Deserialize)]
struct ProbeParams {
    #[serde(rename = "_meta")]
    meta: Option<ProbeMeta>,
}

#[derive(Deserialize)]
struct ProbeMeta {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    protocol_version: Option<Value>,
}

/// What to do with a POST body.
#[derive(Debug, PartialEq)]
enum Verdict {
    /// Hand it to rmcp.
    Pass,
    /// Not JSON at all: -32700.
    ParseError,
    /// A method that 2026-07-28 removed, sent as a 2026-07-28 request: -32601
    /// echoing this id.
    RemovedMethod { id: Value, method: String },
}

fn judge(body: &[u8]) -> Verdict {
    let probe = match serde_json::from_slice::<Probe>(body) {
        Ok(probe) => probe,
        // Arrays (legacy batches) and other shapes are rmcp's to judge.
        Err(_) if serde_json::from_slice::<serde::de::IgnoredAny>(body).is_ok() => {
            return Verdict::Pass;
        }
        Err(_) => return Verdict::ParseError,
    };
    let modern_claim = probe
        .params
        .and_then(|p| p.meta)
        .and_then(|m| m.protocol_version)
        .as_ref()
        .and_then(Value::as_str)
        .is_some_and(claims_stateless_era);
    if modern_claim
        && let Some(method) = probe.method
        && REMOVED_IN_STATELESS.contains(&method.as_str())
    {
        return Verdict::RemovedMethod {
            id: probe.id.unwrap_or(Value::Null),
            method,
        };
    }
    Verdict::Pass
}

/// The check of a `POST`: 413, 400/-32700 or 404/-32601, else the request
/// with its body read, to go on to rmcp. Other methods pass untouched.
pub async fn admit(limit: usize, request: Request) -> Result<Request, Response> {
    if request.method() != Method::POST {
        return Ok(request);
    }
    let too_large = || {
        rejection(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!("Payload Too Large: the body exceeds {limit} bytes"),
        )
    };
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let (parts, body) = request.into_parts();
    let mut stream = body.into_data_stream();
    let mut collected = Vec::with_capacity(declared.unwrap_or(0) as usize);
    while let Some(chunk) = stream.next().await {
        let Ok(chunk) = chunk else {
            return Err(rejection(
                StatusCode::BAD_REQUEST,
                "Bad Request: unreadable body",
            ));
        };
        if collected.len() + chunk.len() > limit {
            return Err(too_large());
        }
        collected.extend_from_slice(&chunk);
    }
    match judge(&collected) {
        Verdict::Pass => Ok(Request::from_parts(
            parts,
            Body::from(Bytes::from(collected)),
        )),
        Verdict::ParseError => Err(json_rpc_error(
            StatusCode::BAD_REQUEST,
            Value::Null,
            -32700,
            "Parse error: the body is not JSON",
        )),
        Verdict::RemovedMethod { id, method } => Err(json_rpc_error(
            StatusCode::NOT_FOUND,
            id,
            -32601,
            &removed_method_message(&method),
        )),
    }
}

fn json_rpc_error(status: StatusCode, id: Value, code: i64, message: &str) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    let mut response = (status, body.to_string()).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modern_initialize_is_a_removed_method() {
        let body = br#"{"jsonrpc":"2.0","id":"i","method":"initialize","params":{
            "protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"c","version":"1"},
            "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                     "io.modelcontextprotocol/clientCapabilities":{}}}}"#;
        assert_eq!(
            judge(body),
            Verdict::RemovedMethod {
                id: json!("i"),
                method: "initialize".into()
            }
        );
        let set_level = br#"{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{
            "level":"debug","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        assert_eq!(
            judge(set_level),
            Verdict::RemovedMethod {
                id: json!(2),
                method: "logging/setLevel".into()
            }
        );
    }

    #[test]
    fn legacy_initialize_and_other_shapes_pass() {
        let legacy = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{
            "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
        assert_eq!(judge(legacy), Verdict::Pass);
        assert_eq!(
            judge(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#),
            Verdict::Pass
        );
        assert_eq!(
            judge(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            Verdict::Pass
        );
        assert_eq!(judge(b"\"just a string\""), Verdict::Pass);
    }

    #[test]
    fn bytes_that_are_not_json_are_a_parse_error() {
        assert_eq!(judge(b"{not json"), Verdict::ParseError);
        assert_eq!(judge(b""), Verdict::ParseError);
        assert_eq!(judge(&[0xff, 0xfe]), Verdict::ParseError);
    }
}
