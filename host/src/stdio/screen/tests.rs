//! Unit tests of the screen: the verdict on each kind of line, and which
//! responses reach rmcp.

use super::*;
use rmcp::model::ProtocolVersion;

fn reply(line: &str) -> (Option<RequestId>, i32, String) {
    match classify(line.as_bytes()) {
        Screened::Reply(id, error) => (id, error.code.0, error.message.into_owned()),
        _ => panic!("expected a reply for {line}"),
    }
}

#[test]
fn malformed_json_is_a_parse_error() {
    let (id, code, message) = reply("{not json");
    assert_eq!((id, code), (None, -32700));
    assert!(message.starts_with("Parse error: "), "{message}");
    assert_eq!(reply("\u{1}").1, -32700);
    assert!(matches!(classify(b"\xff\xfe{}"), Screened::Reply(None, e) if e.code.0 == -32700));
}

#[test]
fn a_parse_error_carries_the_id_when_it_can_be_read() {
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"x","arguments":{{"a":{}{}}}}}}}"#,
        "[".repeat(126),
        "]".repeat(126)
    );
    let (id, code, message) = reply(&deep);
    assert_eq!((id, code), (Some(RequestId::Number(5)), -32700));
    assert_eq!(
        message,
        // 84 bytes before the arrays; serde_json stops at the 128th level.
        format!(
            "Parse error: recursion limit exceeded at line 1 column {}",
            84 + 125
        )
    );
    let (id, code, message) = reply(
        r#"{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"x","arguments":{"n":1e400}}}"#,
    );
    assert_eq!((id, code), (Some(RequestId::String("big".into())), -32700));
    assert_eq!(
        message,
        "Parse error: number out of range at line 1 column 93"
    );
    let (id, code, _) = reply(r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"#);
    assert_eq!((id, code), (Some(RequestId::Number(3)), -32700));
    let (id, code, _) = reply(r#"{"jsonrpc":"2.0","method":"tools/list","params":{"n":1e400}}"#);
    assert_eq!((id, code), (None, -32700), "no id: none to read");
    let (id, code, _) = reply(r#"{"jsonrpc":"2.0","id":6,"result":{"n":1e400}}"#);
    assert_eq!(
        (id, code),
        (None, -32700),
        "a response's id is not a request's"
    );
}

#[test]
fn shapes_that_are_not_requests_are_invalid() {
    assert_eq!(reply("[]").1, -32600);
    assert_eq!(reply("42").1, -32600);
    assert_eq!(
        reply(r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#),
        (
            Some(RequestId::Number(1)),
            -32600,
            "Invalid Request: `jsonrpc` must be \"2.0\"".into()
        )
    );
    assert_eq!(reply(r#"{"jsonrpc":"2.0","id":1}"#).1, -32600);
    assert_eq!(
        reply(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#).1,
        -32600
    );
    assert_eq!(
        reply(r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#).1,
        -32600
    );
    assert_eq!(reply(r#"{"jsonrpc":"2.0","id":2,"method":7}"#).1, -32600);
}

#[test]
fn bad_params_of_a_known_method_are_invalid_params() {
    let (id, code, message) =
        reply(r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":5}}"#);
    assert_eq!((id, code), (Some(RequestId::String("a".into())), -32602));
    assert_eq!(
        message,
        "Invalid params for tools/call: invalid type: integer `5`, expected a string"
    );
    let (_, code, message) =
        reply(r#"{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"arguments":"x"}}"#);
    assert_eq!(code, -32602);
    assert!(
        message.starts_with("Invalid params for tools/call: "),
        "{message}"
    );
    let (_, code, message) =
        reply(r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":[1]}"#);
    assert_eq!(
        (code, message.as_str()),
        (-32602, "Invalid params: `params` must be an object")
    );
}

#[test]
fn responses_are_screened_and_requests_pass() {
    assert!(matches!(
        classify(br#"{"jsonrpc":"2.0","id":6,"result":{}}"#),
        Screened::Response(RequestId::Number(6), _)
    ));
    assert!(matches!(
        classify(br#"{"jsonrpc":"2.0","result":{}}"#),
        Screened::Drop(why) if why == "a malformed response (id none)"
    ));
    assert!(matches!(classify(b"   "), Screened::Blank));
    assert!(matches!(
        classify(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#),
        Screened::Message(m) if matches!(*m, ClientJsonRpcMessage::Request(_))
    ));
    assert!(matches!(
        classify(br#"{"jsonrpc":"2.0","id":1,"method":"no/such"}"#),
        Screened::Message(m) if matches!(*m, ClientJsonRpcMessage::Request(_))
    ));
}

#[tokio::test]
async fn only_responses_to_wharfs_own_requests_reach_rmcp() {
    let mut transport = LineTransport::new(
        &b""[..],
        tokio::io::sink(),
        1024,
        &[ProtocolVersion::V_2025_11_25],
    );
    let response = br#"{"jsonrpc":"2.0","id":6,"result":{"action":"decline"}}"#;
    assert!(transport.screen(response).is_none(), "not awaited: dropped");
    transport
        .awaited
        .lock()
        .unwrap()
        .insert(RequestId::Number(6));
    assert!(matches!(
        transport.screen(response),
        Some(ClientJsonRpcMessage::Response(_))
    ));
    assert!(transport.screen(response).is_none(), "answered once only");
}

fn new_transport() -> LineTransport<&'static [u8]> {
    LineTransport::new(
        &b""[..],
        tokio::io::sink(),
        1024,
        crate::protocol::SUPPORTED_VERSIONS,
    )
}

fn passes(transport: &mut LineTransport<&'static [u8]>, line: &str) -> bool {
    transport.screen(line.as_bytes()).is_some()
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;

#[tokio::test]
async fn an_id_in_flight_is_refused_until_it_is_answered() {
    let mut transport = new_transport();
    assert!(passes(&mut transport, INITIALIZE));
    let ping = r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#;
    assert!(passes(&mut transport, ping));
    assert!(!passes(&mut transport, ping), "5 is in flight");
    assert!(!passes(
        &mut transport,
        r#"{"jsonrpc":"2.0","id":5.0,"method":"ping"}"#
    ));
    assert!(passes(
        &mut transport,
        r#"{"jsonrpc":"2.0","id":"5","method":"ping"}"#
    ));
    use rmcp::model::{EmptyResult, ServerResult};
    let answer = ServerJsonRpcMessage::response(
        ServerResult::EmptyResult(EmptyResult {}),
        RequestId::Number(5),
    );
    rmcp::transport::Transport::send(&mut transport, answer)
        .await
        .unwrap();
    assert!(passes(&mut transport, ping), "answered: 5 is free");
    let error = ServerJsonRpcMessage::error(
        ErrorData::invalid_params("x", None),
        Some(RequestId::Number(5)),
    );
    rmcp::transport::Transport::send(&mut transport, error)
        .await
        .unwrap();
    assert!(passes(&mut transport, ping), "an error answers too");
}

#[tokio::test]
async fn a_cancelled_id_is_free_again() {
    let mut transport = new_transport();
    assert!(passes(&mut transport, INITIALIZE));
    let call = r#"{"jsonrpc":"2.0","id":-0,"method":"tools/call","params":{"name":"x"}}"#;
    assert!(passes(&mut transport, call));
    assert!(!passes(&mut transport, call));
    assert!(passes(
        &mut transport,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0}}"#
    ));
    assert!(passes(&mut transport, call));
    assert_eq!(transport.in_flight.len(), 2, "init and the call");
}

#[tokio::test]
async fn initialize_is_refused_once_the_lifecycle_started() {
    let mut transport = new_transport();
    assert!(passes(&mut transport, INITIALIZE));
    assert_eq!(
        transport.lifecycle,
        Some(super::super::lifecycle::Lifecycle::Legacy)
    );
    let again = INITIALIZE.replace(r#""id":"init""#, r#""id":2"#);
    assert!(!passes(&mut transport, &again));
    assert_eq!(
        transport.lifecycle,
        Some(super::super::lifecycle::Lifecycle::Legacy)
    );

    let mut transport = new_transport();
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    assert!(passes(&mut transport, list));
    assert_eq!(
        transport.lifecycle,
        Some(super::super::lifecycle::Lifecycle::Stateless)
    );
    assert!(!passes(&mut transport, &again));
    assert_eq!(
        transport.lifecycle,
        Some(super::super::lifecycle::Lifecycle::Stateless)
    );
}

#[test]
fn removed_methods_claiming_2026_07_28_are_not_found_whatever_their_params() {
    // `ping` takes any params, so it parses and `screen` refuses it later;
    // the others would not parse as their legacy requests.
    let ping = r#"{"jsonrpc":"2.0","id":6,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
    assert!(matches!(classify(ping.as_bytes()), Screened::Message(_)));
    for method in REMOVED_IN_STATELESS.iter().filter(|m| **m != "ping") {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"{method}","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}}}}"#
        );
        assert_eq!(
            reply(&line),
            (
                Some(RequestId::Number(7)),
                -32601,
                format!("Method not found: {method} does not exist in protocol 2026-07-28")
            ),
            "{line}"
        );
    }
    // A legacy `initialize` whose params do not fit is still a params problem.
    let legacy = r#"{"jsonrpc":"2.0","id":8,"method":"initialize","params":{}}"#;
    assert_eq!(reply(legacy).1, -32602);
}
