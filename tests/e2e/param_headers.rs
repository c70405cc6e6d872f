//! `x-mcp-header` (SEP-2243): a 2026-07-28 `tools/call` over HTTP must carry
//! each mapped argument in its `Mcp-Param-*` header, with the body's value;
//! every disagreement is 400 with -32020. Stdio has no headers.

use std::net::SocketAddr;

use serde_json::{Value, json};

use crate::harness::*;
use crate::http_client::{Response, post};

/// The conformance fixture's header tool: `region` (string, required) in
/// `Mcp-Param-Region`, `priority` (integer) in `Mcp-Param-Priority`.
const TOOL: &str = "conformance_test_header_params";

fn call(addr: SocketAddr, arguments: Value, headers: &[(&str, &str)]) -> Response {
    let mut all = vec![
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", TOOL),
    ];
    all.extend_from_slice(headers);
    post(
        addr,
        &all,
        &json!({"jsonrpc": "2.0", "id": 41, "method": "tools/call",
            "params": modern(json!({"name": TOOL, "arguments": arguments}))}),
    )
}

/// The one JSON-RPC message of an answer, sent as JSON or as SSE.
fn message(mut response: Response) -> Value {
    if response.content_type().starts_with("text/event-stream") {
        return response.next_event().expect("an SSE answer");
    }
    response.json()
}

fn refused(response: Response, message_text: &str) {
    assert_eq!(response.status, 400);
    let body = message(response);
    assert_eq!(
        body,
        json!({"jsonrpc": "2.0", "id": 41, "error": {"code": -32020, "message": message_text}})
    );
}

fn answered(response: Response, text: &str) {
    assert_eq!(response.status, 200);
    let body = message(response);
    assert_eq!(first_text(result_of(&body)), text, "{body}");
}

#[test]
fn the_tool_lists_its_header_annotations() {
    let (_wharf, addr) = serve_http(&["conformance"], &[]);
    let listed = post(
        addr,
        &[
            ("MCP-Protocol-Version", MODERN),
            ("Mcp-Method", "tools/list"),
        ],
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": modern(json!({}))}),
    );
    let listed = message(listed);
    let tool = result_of(&listed)["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == TOOL)
        .cloned()
        .expect("the header tool is listed");
    let properties = &tool["inputSchema"]["properties"];
    assert_eq!(properties["region"]["x-mcp-header"], "Region");
    assert_eq!(properties["priority"]["x-mcp-header"], "Priority");
}

#[test]
fn matching_headers_are_served_in_plain_and_base64_form() {
    let (_wharf, addr) = serve_http(&["conformance"], &[]);
    answered(
        call(
            addr,
            json!({"region": "Hello"}),
            &[("Mcp-Param-Region", "Hello")],
        ),
        "Region: Hello",
    );
    // Header names ignore case; integers compare as numbers.
    answered(
        call(
            addr,
            json!({"region": "eu", "priority": 7}),
            &[("mcp-param-region", "eu"), ("MCP-PARAM-PRIORITY", "7")],
        ),
        "Region: eu, priority: 7",
    );
    answered(
        call(
            addr,
            json!({"region": "Hello"}),
            &[("Mcp-Param-Region", "=?base64?SGVsbG8=?=")],
        ),
        "Region: Hello",
    );
    // Non-ASCII text travels wrapped: "café".
    answered(
        call(
            addr,
            json!({"region": "café"}),
            &[("Mcp-Param-Region", "=?base64?Y2Fmw6k=?=")],
        ),
        "Region: café",
    );
    // Without the whole wrapper the value is literal.
    answered(
        call(
            addr,
            json!({"region": "=?base64?SGVsbG8="}),
            &[("Mcp-Param-Region", "=?base64?SGVsbG8=")],
        ),
        "Region: =?base64?SGVsbG8=",
    );
}

#[test]
fn each_disagreement_is_refused_with_its_reason() {
    let (_wharf, addr) = serve_http(&["conformance"], &[]);
    refused(
        call(addr, json!({"region": "Hello"}), &[]),
        "Header mismatch: the Mcp-Param-Region header is missing, but the body gives `region`",
    );
    refused(
        call(
            addr,
            json!({"region": "Hello"}),
            &[("Mcp-Param-Region", "Hello"), ("Mcp-Param-Priority", "1")],
        ),
        "Header mismatch: the Mcp-Param-Priority header is given, but `priority` is absent \
         or null in the body",
    );
    refused(
        call(
            addr,
            json!({"region": "Hello"}),
            &[("Mcp-Param-Region", "Hola")],
        ),
        "Header mismatch: the Mcp-Param-Region header does not match `region` in the body",
    );
    refused(
        call(
            addr,
            json!({"region": "eu", "priority": 3}),
            &[("Mcp-Param-Region", "eu"), ("Mcp-Param-Priority", "4")],
        ),
        "Header mismatch: the Mcp-Param-Priority header does not match `priority` in the body",
    );
    for bad in ["=?base64?SGVsbG8?=", "=?base64?SGVs!!!bG8=?="] {
        refused(
            call(
                addr,
                json!({"region": "Hello"}),
                &[("Mcp-Param-Region", bad)],
            ),
            "Header mismatch: the Mcp-Param-Region header is not valid =?base64?…?= \
             (Base64 of UTF-8 text)",
        );
    }
    // UTF-8 bytes in a header are obs-text to HTTP: not a value MCP allows.
    refused(
        call(
            addr,
            json!({"region": "café"}),
            &[("Mcp-Param-Region", "café")],
        ),
        "Header mismatch: the Mcp-Param-Region header holds characters a header value \
         may not carry (use the =?base64?…?= form)",
    );
}

#[test]
fn legacy_requests_and_stdio_carry_no_param_headers() {
    // A legacy HTTP session: no Mcp-Param-* headers, and no refusal.
    let (_wharf, addr) = serve_http(&["conformance"], &[]);
    let init = post(
        addr,
        &[],
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "wharf-e2e", "version": "0"}}}),
    );
    let session = init.header("mcp-session-id").expect("a session").to_owned();
    let _ = init.text();
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let _ = post(
        addr,
        &headers,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .text();
    let answer = post(
        addr,
        &headers,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": TOOL, "arguments": {"region": "Hello"}}}),
    );
    assert_eq!(answer.status, 200);
    let event = message(answer);
    assert_eq!(first_text(result_of(&event)), "Region: Hello");

    let mut stdio = Wharf::start(&["conformance"], &[]);
    let result = crate::harness::call(&mut stdio, 3, TOOL, json!({"region": "Hello"}));
    assert_eq!(first_text(&result), "Region: Hello");
}
