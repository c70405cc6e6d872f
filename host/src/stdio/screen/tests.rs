//! Unit tests of the screen: the verdict on each kind of line, and which
//! responses reach rmcp.

use super::*;

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
