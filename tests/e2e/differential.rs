//! The JSON-RPC surface, differentially: the same malformed inputs sent over
//! stdio (one line each) and over HTTP (one 2026-07-28 POST each, with the
//! headers the body implies) get the same JSON-RPC error code and the same
//! `id` (absent when it cannot be read). The table is written once, below.
//!
//! Left out on purpose, because the transports legitimately differ: HTTP
//! transport errors (`Content-Type`, `Accept`, body size, `Origin`/`Host`,
//! repeated MCP headers; see `http_envelope`), stdio framing (blank lines, a
//! byte-order mark, a line with a newline inside a string), and malformed
//! notifications (stdio answers no notification; HTTP must answer each POST).

use serde_json::{Value, json};

use crate::harness::*;
use crate::http_client::send;

/// One input, and what both transports must answer.
struct Case {
    what: &'static str,
    /// The body; `DEEP` stands for 200 nested arrays, `MANY` for a million
    /// and one numbers separated by commas.
    body: &'static [u8],
    code: i64,
    /// The `id` the error must carry, as JSON; `None`: no `id` member.
    id: Option<&'static str>,
    /// The HTTP status (stdio has none).
    status: u16,
}

/// `_meta` of a 2026-07-28 request, inside `params`.
macro_rules! meta {
    () => {
        r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#
    };
}

/// A 2026-07-28 request with this id, method and params (before `_meta`).
macro_rules! request {
    ($id:literal, $method:literal, $params:literal) => {
        concat!(
            r#"{"jsonrpc":"2.0","id":"#,
            $id,
            r#","method":""#,
            $method,
            r#"","params":{"#,
            $params,
            meta!(),
            "}}"
        )
        .as_bytes()
    };
}

const fn case(
    what: &'static str,
    body: &'static [u8],
    code: i64,
    id: Option<&'static str>,
    status: u16,
) -> Case {
    Case {
        what,
        body,
        code,
        id,
        status,
    }
}

const PARSE: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;

#[rustfmt::skip]
const CASES: &[Case] = &[
    // Not JSON, or JSON the server cannot read: -32700, with the id when it can be read.
    case("invalid JSON, cut short", br#"{"jsonrpc":"2.0","id":1,"method":"#, PARSE, Some("1"), 400),
    case("invalid JSON, garbage", b"{nope", PARSE, None, 400),
    case("invalid UTF-8 throughout", b"\xff\xfe\xfd", PARSE, None, 400),
    case("invalid UTF-8 in a string, id readable",
        b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\",\"params\":{\"cursor\":\"\xff\"}}", PARSE, Some("3"), 400),
    case("lone surrogate, id readable", request!("4", "tools/list", r#""cursor":"\ud800","#), PARSE, Some("4"), 400),
    case("lone surrogate in the id", br#"{"jsonrpc":"2.0","id":"\udc00","method":"tools/list"}"#, PARSE, None, 400),
    case("nesting over the limit, id readable",
        request!("5", "tools/call", r#""name":"echo_echo","arguments":{"text":DEEP},"#), PARSE, Some("5"), 400),
    case("nesting over the limit, no object", b"DEEP", PARSE, None, 400),
    case("1e400, id readable",
        request!(r#""big""#, "tools/call", r#""name":"echo_echo","arguments":{"text":1e400},"#), PARSE, Some(r#""big""#), 400),
    case("1e400 as the id", br#"{"jsonrpc":"2.0","id":1e400,"method":"tools/list"}"#, PARSE, None, 400),
    // Not a request object: -32600, no id.
    case("null", b"null", INVALID_REQUEST, None, 400),
    case("a batch", concat!(r#"[{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"#, meta!(), "}}]").as_bytes(),
        INVALID_REQUEST, None, 400),
    case("an array", b"[1,2]", INVALID_REQUEST, None, 400),
    case("an empty array", b"[]", INVALID_REQUEST, None, 400),
    case("a number", b"42", INVALID_REQUEST, None, 400),
    case("a string", br#""tools/list""#, INVALID_REQUEST, None, 400),
    case("an empty object", b"{}", INVALID_REQUEST, None, 400),
    // The envelope: -32600 with the id.
    case("missing jsonrpc", concat!(r#"{"id":10,"method":"tools/list","params":{"#, meta!(), "}}").as_bytes(),
        INVALID_REQUEST, Some("10"), 400),
    case("wrong jsonrpc version", concat!(r#"{"jsonrpc":"1.0","id":11,"method":"tools/list","params":{"#, meta!(), "}}").as_bytes(),
        INVALID_REQUEST, Some("11"), 400),
    case("jsonrpc a number", concat!(r#"{"jsonrpc":2.0,"id":12,"method":"tools/list","params":{"#, meta!(), "}}").as_bytes(),
        INVALID_REQUEST, Some("12"), 400),
    case("method not a string", concat!(r#"{"jsonrpc":"2.0","id":14,"method":7,"params":{"#, meta!(), "}}").as_bytes(),
        INVALID_REQUEST, Some("14"), 400),
    case("method missing", concat!(r#"{"jsonrpc":"2.0","id":15,"params":{"#, meta!(), "}}").as_bytes(),
        INVALID_REQUEST, Some("15"), 400),
    // Methods and params.
    case("unknown method", request!("13", "no/such", ""), NOT_FOUND, Some("13"), 404),
    case("a method 2026-07-28 removed", request!("23", "ping", ""), NOT_FOUND, Some("23"), 404),
    case("params not an object", br#"{"jsonrpc":"2.0","id":16,"method":"tools/list","params":[1]}"#,
        INVALID_PARAMS, Some("16"), 400),
    case("params null", br#"{"jsonrpc":"2.0","id":17,"method":"tools/list","params":null}"#,
        INVALID_PARAMS, Some("17"), 400),
    case("tools/call without name", request!("18", "tools/call", r#""arguments":{},"#), INVALID_PARAMS, Some("18"), 400),
    case("tools/call, name not a string", request!("19", "tools/call", r#""name":5,"#), INVALID_PARAMS, Some("19"), 400),
    case("tools/call, arguments not an object",
        request!("20", "tools/call", r#""name":"echo_echo","arguments":"text","#), INVALID_PARAMS, Some("20"), 400),
    case("tools/call with an unknown tool",
        request!("21", "tools/call", r#""name":"echo_nope","arguments":{},"#), INVALID_PARAMS, Some("21"), 200),
    case("resources/read without uri", request!("22", "resources/read", ""), INVALID_PARAMS, Some("22"), 400),
    case("no _meta", br#"{"jsonrpc":"2.0","id":24,"method":"tools/list","params":{}}"#, INVALID_PARAMS, Some("24"), 400),
    case("an unsupported protocol version",
        br#"{"jsonrpc":"2.0","id":25,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1900-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
        -32022, Some("25"), 400),
    // Ids of every type, on an unknown method: string and integer ids come back as sent.
    case("id: a string", request!(r#""s-1""#, "no/such", ""), NOT_FOUND, Some(r#""s-1""#), 404),
    case("id: an empty string", request!(r#""""#, "no/such", ""), NOT_FOUND, Some(r#""""#), 404),
    case("id: a string with escapes", request!(r#""a\"b\u00e9""#, "no/such", ""), NOT_FOUND, Some(r#""a\"bé""#), 404),
    case("id: zero", request!("0", "no/such", ""), NOT_FOUND, Some("0"), 404),
    case("id: negative", request!("-26", "no/such", ""), NOT_FOUND, Some("-26"), 404),
    case("id: the largest integer", request!("9223372036854775807", "no/such", ""), NOT_FOUND,
        Some("9223372036854775807"), 404),
    case("id: the smallest integer", request!("-9223372036854775808", "no/such", ""), NOT_FOUND,
        Some("-9223372036854775808"), 404),
    case("id: null", request!("null", "no/such", ""), INVALID_REQUEST, None, 400),
    case("id: a fraction", request!("1.5", "no/such", ""), INVALID_REQUEST, None, 400),
    // An integer in float form is an integer (JSON Schema's `integer`; rmcp reads it so).
    case("id: a whole float", request!("27.0", "no/such", ""), NOT_FOUND, Some("27"), 404),
    case("id: past the integer range", request!("9223372036854775808", "no/such", ""), INVALID_REQUEST, None, 400),
    case("id: a boolean", request!("true", "no/such", ""), INVALID_REQUEST, None, 400),
    case("id: an object", request!(r#"{"n":28}"#, "no/such", ""), INVALID_REQUEST, None, 400),
    case("id: an array", request!("[29]", "no/such", ""), INVALID_REQUEST, None, 400),
    // Too many values to parse (json_values::DEFAULT_MAX_JSON_VALUES), well within the byte limits.
    case("more JSON values than the limit",
        request!("30", "tools/call", r#""name":"echo_echo","arguments":{"text":[MANY]},"#), INVALID_REQUEST, Some("30"), 413),
];

/// The bytes sent for a case, its placeholders written out.
fn body(case: &Case) -> Vec<u8> {
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let many = vec!["1"; 1_000_001].join(",");
    let mut out = Vec::with_capacity(case.body.len());
    let mut rest = case.body;
    while let Some(at) = rest.windows(4).position(|w| w == b"DEEP" || w == b"MANY") {
        out.extend_from_slice(&rest[..at]);
        let with = if &rest[at..at + 4] == b"DEEP" {
            &deep
        } else {
            &many
        };
        out.extend_from_slice(with.as_bytes());
        rest = &rest[at + 4..];
    }
    out.extend_from_slice(rest);
    out
}

/// What is wrong with `response` as the answer to `case`, if anything.
fn mismatch(case: &Case, response: &Value) -> Option<String> {
    let code = response["error"]["code"].as_i64();
    let id = response.get("id");
    let expected_id = case.id.map(|id| serde_json::from_str::<Value>(id).unwrap());
    (code != Some(case.code) || id != expected_id.as_ref()).then(|| {
        format!(
            "{}: expected code {} and id {}, got {response}",
            case.what,
            case.code,
            case.id.unwrap_or("(none)")
        )
    })
}

#[test]
fn every_case_is_answered_over_stdio() {
    let mut wharf = Wharf::start(&["echo"], &[]);
    let mut wrong = Vec::new();
    for case in CASES {
        wharf.send_raw(&body(case));
        // One line at a time: the next response is this line's.
        let response = wharf.next_matching(|m| m.get("method").is_none());
        wrong.extend(mismatch(case, &response));
    }
    still_serving(&mut wharf, 1000);
    assert!(wrong.is_empty(), "over stdio:\n{}", wrong.join("\n"));
}

#[test]
fn every_case_is_answered_over_http() {
    let (_wharf, addr) = serve_http(&["echo"], &[]);
    let mut wrong = Vec::new();
    for case in CASES {
        let body = body(case);
        let implied = implied_headers(&body);
        let mut headers: Vec<(&str, &str)> = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        headers.extend(implied.iter().map(|(n, v)| (*n, v.as_str())));
        let response = send(addr, "POST", "/mcp", &headers, &body);
        let status = response.status;
        let content_type = response.content_type().to_string();
        let answer: Value = serde_json::from_str(&response.text()).unwrap_or(Value::Null);
        if status != case.status || content_type != "application/json" {
            wrong.push(format!(
                "{}: expected status {} (application/json), got {status} ({content_type}): {answer}",
                case.what, case.status
            ));
        }
        wrong.extend(mismatch(case, &answer));
    }
    let ok = send(
        addr,
        "POST",
        "/mcp",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", MODERN),
            ("Mcp-Method", "tools/list"),
        ],
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": modern(json!({}))})
            .to_string()
            .as_bytes(),
    );
    assert_eq!(ok.status, 200, "still serving");
    assert!(wrong.is_empty(), "over HTTP:\n{}", wrong.join("\n"));
}

/// The MCP headers a 2026-07-28 client would send with this body: the
/// protocol version its `_meta` claims (2026-07-28 when it claims none),
/// `Mcp-Method` and `Mcp-Name` when the body has them as strings.
fn implied_headers(body: &[u8]) -> Vec<(&'static str, String)> {
    let parsed: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let version = parsed["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
        .as_str()
        .unwrap_or(MODERN);
    let mut headers = vec![("MCP-Protocol-Version", version.to_string())];
    if let Some(method) = parsed["method"].as_str() {
        headers.push(("Mcp-Method", method.to_string()));
        let name = match method {
            "tools/call" | "prompts/get" => parsed["params"]["name"].as_str(),
            "resources/read" => parsed["params"]["uri"].as_str(),
            _ => None,
        };
        if let Some(name) = name {
            headers.push(("Mcp-Name", name.to_string()));
        }
    }
    headers
}
