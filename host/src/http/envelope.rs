//! The POST body envelope: size limit, the MCP headers' own shape, and the
//! JSON-RPC screen of the body.
//!
//! Gaps closed here (each is small and named):
//! - rmcp answers a body it cannot read as a client message with 415 and a
//!   plain-text body, and a known method whose params do not fit with -32601;
//!   MCP clients expect the JSON-RPC error the stdio transport gives the same
//!   bytes (-32700, -32600, -32602), so [`screen`] judges the body first.
//! - rmcp routes every `initialize` to the legacy handshake, even one whose
//!   `_meta` claims 2026-07-28. Over a modern request `initialize` is a removed
//!   method: 404 with -32601, as the spec and the conformance suite require.
//! - rmcp reads the first of a repeated `MCP-Protocol-Version` (and
//!   `Mcp-Session-Id`) and ignores the rest, so a request could carry two
//!   versions and be checked against one: any MCP header given more than once
//!   is refused (400, -32020), as rmcp already refuses a repeated `Mcp-Method`.
//!
//! The body is read once here (bounded: 413 above the limit) and handed on as
//! bytes, so rmcp does not read the network again.

mod probe;
mod screen;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt as _;
use rmcp::model::{ErrorCode, ErrorData, JsonRpcError};

use super::rejection;
use crate::excerpt::Excerpt;
use crate::{json_values, jsonrpc_id};
use screen::{Refusal, Verdict};

/// The prefix of the headers MCP defines (`MCP-Protocol-Version`, `Mcp-Method`,
/// `Mcp-Name`, `Mcp-Param-*`, `Mcp-Session-Id`); `HeaderMap` names are lowercase.
const MCP_HEADER_PREFIX: &str = "mcp-";

/// The check of a request: repeated MCP headers (400/-32020), then for a
/// `POST` the body: 413 (over `limit` bytes, or over `max_values` JSON
/// values, then with -32600 and the request's id), or the screen's JSON-RPC
/// error, else the request with its body read, to go on to rmcp.
pub async fn admit(limit: usize, max_values: usize, request: Request) -> Result<Request, Response> {
    if let Some(name) = repeated_mcp_header(request.headers()) {
        tracing::debug!(header = %Excerpt::new(name), "refused a repeated MCP header");
        return Err(json_rpc_error(
            StatusCode::BAD_REQUEST,
            None,
            ErrorData::new(
                ErrorCode::HEADER_MISMATCH,
                format!("Header mismatch: the {name} header is repeated"),
                None,
            ),
        ));
    }
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
    if json_values::more_than(&collected, max_values) {
        tracing::debug!(max_values, "refused a POST body with too many JSON values");
        return Err(json_rpc_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            jsonrpc_id::recover(&collected),
            ErrorData::invalid_request(json_values::too_many(max_values), None),
        ));
    }
    match screen::judge(&collected) {
        Verdict::Pass => Ok(Request::from_parts(
            parts,
            Body::from(Bytes::from(collected)),
        )),
        Verdict::Refuse(Refusal { status, id, error }) => {
            tracing::debug!(
                status = status.as_u16(),
                code = error.code.0,
                "refused a POST body: {}",
                Excerpt::new(error.message.as_ref())
            );
            Err(json_rpc_error(status, id, error))
        }
    }
}

/// The name of the first MCP header given more than once. Each names one
/// value, so a repeat is either a contradiction or an attempt at one.
fn repeated_mcp_header(headers: &HeaderMap) -> Option<&str> {
    headers
        .keys()
        .filter(|name| name.as_str().starts_with(MCP_HEADER_PREFIX))
        .find(|name| headers.get_all(*name).iter().nth(1).is_some())
        .map(|name| name.as_str())
}

/// A JSON-RPC error response (`id` omitted when it could not be read, as MCP
/// 2026-07-28 says).
pub(super) fn json_rpc_error(
    status: StatusCode,
    id: Option<rmcp::model::RequestId>,
    error: ErrorData,
) -> Response {
    let body = serde_json::to_vec(&JsonRpcError::new(id, error)).expect("an error serializes");
    let mut response = (status, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn mcp_headers_must_not_repeat() {
        let conflicting = headers(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-protocol-version", "2025-11-25"),
        ]);
        assert_eq!(
            repeated_mcp_header(&conflicting),
            Some("mcp-protocol-version")
        );
        let names = headers(&[("mcp-name", "a"), ("accept", "x"), ("mcp-name", "b")]);
        assert_eq!(repeated_mcp_header(&names), Some("mcp-name"));
        let params = headers(&[("mcp-param-region", "eu"), ("mcp-param-region", "us")]);
        assert_eq!(repeated_mcp_header(&params), Some("mcp-param-region"));
        let same = headers(&[("mcp-method", "tools/call"), ("mcp-method", "tools/call")]);
        assert_eq!(repeated_mcp_header(&same), Some("mcp-method"));
        let once = headers(&[("mcp-method", "tools/call"), ("mcp-name", "x")]);
        assert_eq!(repeated_mcp_header(&once), None);
        let other = headers(&[("accept", "a"), ("accept", "b")]);
        assert_eq!(repeated_mcp_header(&other), None);
    }

    #[tokio::test]
    async fn a_refusal_is_a_json_rpc_error_with_its_status() {
        let response = json_rpc_error(
            StatusCode::BAD_REQUEST,
            None,
            ErrorData::parse_error("Parse error: x", None),
        );
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
        let body = axum::body::to_bytes(response.into_body(), 1 << 10)
            .await
            .unwrap();
        assert_eq!(
            &body[..],
            br#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: x"}}"#
        );
    }
}
