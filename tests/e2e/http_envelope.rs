//! The HTTP envelope under hostile input: bodies rmcp cannot read, requests
//! whose `id` is readable in a body that is not, lax or repeated headers, and
//! oversized header values in the log. Each refusal with its exact status,
//! content type, JSON-RPC code and `id`; the server keeps serving.

use std::net::SocketAddr;

use serde_json::{Value, json};

use crate::harness::*;
use crate::http_client::{Response, send};

const JSON_HEADERS: [(&str, &str); 2] = [
    ("Content-Type", "application/json"),
    ("Accept", "application/json, text/event-stream"),
];

/// POSTs raw bytes as a 2026-07-28 client would, with extra headers.
fn post_bytes(addr: SocketAddr, extra: &[(&str, &str)], body: &[u8]) -> Response {
    let mut headers = JSON_HEADERS.to_vec();
    headers.push(("MCP-Protocol-Version", MODERN));
    headers.extend_from_slice(extra);
    send(addr, "POST", "/mcp", &headers, body)
}

/// A `tools/list` a 2026-07-28 client would send.
fn list_tools(addr: SocketAddr, extra: &[(&str, &str)]) -> Response {
    let body =
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": modern(json!({}))});
    post_bytes(
        addr,
        &[&[("Mcp-Method", "tools/list")], extra].concat(),
        body.to_string().as_bytes(),
    )
}

/// Asserts the exact refusal: status, JSON content type, code, and `id`
/// (`None`: no `id` member). Returns the body.
fn assert_error(response: Response, status: u16, code: i64, id: Option<Value>) -> Value {
    assert_eq!(response.status, status, "{:?}", response.headers);
    assert_eq!(response.content_type(), "application/json");
    let body = response.json();
    assert_eq!(body["jsonrpc"], "2.0", "{body}");
    assert_eq!(body["error"]["code"], code, "{body}");
    assert_eq!(body.get("id"), id.as_ref(), "{body}");
    body
}

fn nested(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

/// Defect 12: each of these got 415 and a text/plain body from rmcp.
#[test]
fn bodies_rmcp_cannot_read_get_json_rpc_errors() {
    let (_wharf, addr) = serve_http(&["echo"], &[]);
    let invalid_utf8 = post_bytes(
        addr,
        &[],
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"c\":\"\xc3\x28\"}}",
    );
    let body = assert_error(invalid_utf8, 400, -32700, Some(json!(1)));
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Parse error: invalid unicode code point"),
        "{body}"
    );
    let surrogate = post_bytes(
        addr,
        &[],
        br#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"c":"\ud83d"}}"#,
    );
    assert_error(surrogate, 400, -32700, Some(json!(2)));
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{{"c":{}}}}}"#,
        nested(129)
    );
    let body = assert_error(
        post_bytes(addr, &[], deep.as_bytes()),
        400,
        -32700,
        Some(json!(3)),
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Parse error: recursion limit exceeded"),
        "{body}"
    );
    let huge = post_bytes(
        addr,
        &[],
        br#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"c":1e400}}"#,
    );
    let body = assert_error(huge, 400, -32700, Some(json!(4)));
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Parse error: number out of range"),
        "{body}"
    );
    let body = assert_error(post_bytes(addr, &[], b"null"), 400, -32600, None);
    assert_eq!(
        body["error"]["message"],
        "Invalid Request: a message must be a JSON object"
    );
    let batch = br#"[{"jsonrpc":"2.0","id":5,"method":"tools/list"},{"jsonrpc":"2.0","id":6,"method":"tools/list"}]"#;
    let body = assert_error(post_bytes(addr, &[], batch), 400, -32600, None);
    assert_eq!(
        body["error"]["message"],
        "Invalid Request: batches are not supported; send one message per request"
    );
    let no_name = json!({"jsonrpc": "2.0", "id": "n", "method": "tools/call",
        "params": modern(json!({"arguments": {}}))});
    let response = post_bytes(
        addr,
        &[("Mcp-Method", "tools/call")],
        no_name.to_string().as_bytes(),
    );
    let body = assert_error(response, 400, -32602, Some(json!("n")));
    assert_eq!(
        body["error"]["message"],
        "Invalid params for tools/call: missing field `name`"
    );
    assert_eq!(list_tools(addr, &[]).status, 200, "still serving");
}

/// Defect 8, over HTTP: the id of a body too deep to read, or holding a
/// number out of range, is read and echoed; `id` is left out only when it
/// cannot be read.
#[test]
fn the_id_is_echoed_when_it_can_be_read() {
    let (_wharf, addr) = serve_http(&["echo"], &[]);
    // serde_json reads 127 levels: the body and params are two of them.
    let mut params = modern(json!({}));
    params["c"] = json!("NESTED");
    let request = json!({"jsonrpc": "2.0", "id": "deep", "method": "tools/list", "params": params})
        .to_string();
    let at_limit = request.replace(r#""NESTED""#, &nested(125));
    let response = post_bytes(addr, &[("Mcp-Method", "tools/list")], at_limit.as_bytes());
    let status = response.status;
    assert_eq!(
        status,
        200,
        "125 nested arrays are read: {}",
        response.text()
    );
    let over = request.replace(r#""NESTED""#, &nested(126));
    assert_error(
        post_bytes(addr, &[], over.as_bytes()),
        400,
        -32700,
        Some(json!("deep")),
    );
    let id_after = format!(
        r#"{{"params":{{"c":{}}},"jsonrpc":"2.0","method":"tools/list","id":-9}}"#,
        nested(5000)
    );
    assert_error(
        post_bytes(addr, &[], id_after.as_bytes()),
        400,
        -32700,
        Some(json!(-9)),
    );
    let float_id = br#"{"jsonrpc":"2.0","id":1.5,"method":"tools/list","params":{"c":1e400}}"#;
    assert_error(post_bytes(addr, &[], float_id), 400, -32700, None);
    // A body cut short keeps the id that was read, as a stdio line does.
    let cut = br#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"#;
    assert_error(post_bytes(addr, &[], cut), 400, -32700, Some(json!(7)));
    // A response is never answered, whatever its id.
    let response = br#"{"jsonrpc":"2.0","id":8,"result":{"n":1e400}}"#;
    assert_error(post_bytes(addr, &[], response), 400, -32700, None);
}

/// Defect 13: `Host` and the request target parsed strictly, and repeated
/// `Host`, `Origin` or disagreeing MCP headers refused.
#[test]
fn lax_and_repeated_headers_are_refused() {
    let (_wharf, addr) = serve_http(&["echo"], &[]);
    let host = addr.to_string();
    let forbidden = |response: Response, message: &str| {
        let body = assert_error(response, 403, -32600, None);
        assert_eq!(body["error"]["message"], message);
    };
    let bad_request = |response: Response, message: &str| {
        let body = assert_error(response, 400, -32600, None);
        assert_eq!(body["error"]["message"], message);
    };
    forbidden(
        list_tools(addr, &[("Host", "[::1]evil")]),
        "Forbidden: Host header is not allowed",
    );
    forbidden(
        list_tools(addr, &[("Host", "localhost:8080evil")]),
        "Forbidden: Host header is not allowed",
    );
    bad_request(
        list_tools(addr, &[("Host", &host), ("Host", "evil.example")]),
        "Bad Request: more than one Host header",
    );
    bad_request(
        list_tools(addr, &[("Host", "evil.example"), ("Host", &host)]),
        "Bad Request: more than one Host header",
    );
    let body =
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": modern(json!({}))})
            .to_string();
    let mut headers = JSON_HEADERS.to_vec();
    headers.extend([
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "tools/list"),
    ]);
    let absolute = send(
        addr,
        "POST",
        "http://evil.example/mcp",
        &headers,
        body.as_bytes(),
    );
    forbidden(absolute, "Forbidden: Host header is not allowed");
    let own = format!("http://{host}/mcp");
    assert_eq!(
        send(addr, "POST", &own, &headers, body.as_bytes()).status,
        200
    );
    for origins in [
        [
            ("Origin", "http://localhost:3000"),
            ("Origin", "https://evil.example"),
        ],
        [
            ("Origin", "https://evil.example"),
            ("Origin", "http://localhost:3000"),
        ],
    ] {
        bad_request(
            list_tools(addr, &origins),
            "Bad Request: more than one Origin header",
        );
    }
    let versions = list_tools(addr, &[("MCP-Protocol-Version", "2025-11-25")]);
    let body = assert_error(versions, 400, -32020, None);
    assert_eq!(
        body["error"]["message"],
        "Header mismatch: the mcp-protocol-version header is repeated"
    );
    let methods = list_tools(addr, &[("Mcp-Method", "tools/call")]);
    assert_error(methods, 400, -32020, None);
    // Repeats of one value too, as rmcp itself refuses a repeated `Mcp-Method`.
    let repeated = list_tools(addr, &[("MCP-Protocol-Version", MODERN)]);
    let body = assert_error(repeated, 400, -32020, None);
    assert_eq!(
        body["error"]["message"],
        "Header mismatch: the mcp-protocol-version header is repeated"
    );
    assert_eq!(
        list_tools(addr, &[("Origin", "http://localhost:3000")]).status,
        200
    );
}

/// Defect 14: a refused 60 KB `Origin` or `Host` is logged as a bounded excerpt.
#[test]
fn refused_header_values_are_logged_as_short_excerpts() {
    let (wharf, addr) = serve_http(&["echo"], &[]);
    let origin = format!("https://{}.example", "o".repeat(60 * 1024));
    let refused = list_tools(addr, &[("Origin", &origin)]);
    assert_error(refused, 403, -32600, None);
    let host = format!("{}.example", "h".repeat(60 * 1024));
    assert_error(list_tools(addr, &[("Host", &host)]), 403, -32600, None);
    wharf.wait_for_log("rejected a request from a disallowed Origin");
    wharf.wait_for_log("rejected a request for a disallowed Host");
    let log = wharf.stderr();
    let line = |needle: &str| {
        log.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no {needle:?} in\n{log}"))
            .to_string()
    };
    let origin_line = line("disallowed Origin");
    assert!(
        origin_line.len() < 600,
        "{} bytes: {origin_line}",
        origin_line.len()
    );
    assert!(
        origin_line.contains(&format!(
            "https://{}… ({} bytes)",
            "o".repeat(248),
            origin.len()
        )),
        "{origin_line}"
    );
    let host_line = line("disallowed Host");
    assert!(host_line.len() < 600, "{} bytes", host_line.len());
    assert!(
        host_line.contains(&format!("({} bytes)", host.len())),
        "{host_line}"
    );
}
