//! Unit tests of the body screen: the exact status, code, id and message of
//! each refusal, and what passes.

use super::*;
use crate::protocol::KNOWN_METHODS;

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

fn refusal(body: &[u8]) -> (u16, Option<RequestId>, i32, String) {
    match judge(body) {
        Verdict::Refuse(Refusal { status, id, error }) => (
            status.as_u16(),
            id,
            error.code.0,
            error.message.into_owned(),
        ),
        Verdict::Pass => panic!("passed: {}", String::from_utf8_lossy(body)),
    }
}

fn num(id: i64) -> Option<RequestId> {
    Some(RequestId::Number(id))
}

#[test]
fn well_formed_requests_pass() {
    for body in [
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"x","arguments":{{"a":[1,2.5,null]}},{META}}}}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":"s","method":"tools/list","params":{{{META}}}}}"#),
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#.to_string(),
        format!(r#"{{"jsonrpc":"2.0","id":3,"method":"no/such","params":{{{META}}}}}"#),
        r#"{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#.to_string(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_string(),
        r#"{"jsonrpc":"2.0","method":"tools/call"}"#.to_string(),
        r#"{"jsonrpc":"2.0","id":6,"result":{}}"#.to_string(),
        r#"{"jsonrpc":"2.0","id":7,"error":{"code":-1,"message":"no"}}"#.to_string(),
    ] {
        assert_eq!(judge(body.as_bytes()), Verdict::Pass, "{body}");
    }
}

#[test]
fn unreadable_json_is_a_parse_error_with_the_id_when_it_can_be_read() {
    let (status, id, code, message) = refusal(b"{nope");
    assert_eq!((status, id, code), (400, None, -32700));
    assert_eq!(
        message,
        "Parse error: key must be a string at line 1 column 2"
    );
    assert_eq!(refusal(b"").1, None);
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{{"name":"x","arguments":{{"a":{}{}}}}}}}"#,
        "[".repeat(130),
        "]".repeat(130)
    );
    let (status, id, code, message) = refusal(deep.as_bytes());
    assert_eq!((status, id, code), (400, num(9), -32700));
    assert!(
        message.starts_with("Parse error: recursion limit exceeded"),
        "{message}"
    );
    for (body, expected) in [
        (
            &br#"{"jsonrpc":"2.0","id":"big","method":"x","params":{"n":1e400}}"#[..],
            Some(RequestId::String("big".into())),
        ),
        (
            br#"{"jsonrpc":"2.0","id":10,"method":"x","params":{"s":"\ud800"}}"#,
            num(10),
        ),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"x\",\"params\":{\"s\":\"\xff\"}}",
            num(11),
        ),
        (b"\xff\xfe{}", None),
        (br#"{"jsonrpc":"2.0","id":1.5,"params":{"n":1e400}}"#, None),
        // Cut short: what was read counts, as on stdio (`jsonrpc_id::recover`).
        (br#"{"jsonrpc":"2.0","id":12,"method":"x""#, num(12)),
        // Not seen to be a request: a response's id is never answered.
        (br#"{"jsonrpc":"2.0","id":13,"result":{"n":1e400}}"#, None),
    ] {
        let (status, id, code, _) = refusal(body);
        assert_eq!(
            (status, id, code),
            (400, expected, -32700),
            "{}",
            String::from_utf8_lossy(body)
        );
    }
}

#[test]
fn shapes_that_are_not_requests_are_invalid_requests() {
    for (body, message) in [
        ("null", "Invalid Request: a message must be a JSON object"),
        ("42", "Invalid Request: a message must be a JSON object"),
        (
            r#""text""#,
            "Invalid Request: a message must be a JSON object",
        ),
        (
            "[]",
            "Invalid Request: batches are not supported; send one message per request",
        ),
        (
            r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#,
            "Invalid Request: batches are not supported; send one message per request",
        ),
        (
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#,
            "Invalid Request: `id` must be a string or an integer",
        ),
        (
            r#"{"jsonrpc":"2.0","id":true,"method":"tools/list"}"#,
            "Invalid Request: `id` must be a string or an integer",
        ),
        (
            r#"{"jsonrpc":"2.0","id":{},"method":"tools/list"}"#,
            "Invalid Request: `id` must be a string or an integer",
        ),
        (
            r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"tools/list"}"#,
            "Invalid Request: `id` must be a string or an integer",
        ),
        (
            r#"{"jsonrpc":"2.0","result":{}}"#,
            "Invalid Request: a response needs the `id` of the request it answers",
        ),
    ] {
        assert_eq!(
            refusal(body.as_bytes()),
            (400, None, -32600, message.into()),
            "{body}"
        );
    }
    for (body, message) in [
        (
            r#"{"id":1,"method":"tools/list"}"#,
            "Invalid Request: `jsonrpc` must be \"2.0\"",
        ),
        (
            r#"{"jsonrpc":"1.0","id":1,"method":"tools/list"}"#,
            "Invalid Request: `jsonrpc` must be \"2.0\"",
        ),
        (
            r#"{"jsonrpc":2,"id":1,"method":"tools/list"}"#,
            "Invalid Request: `jsonrpc` must be \"2.0\"",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
            "Invalid Request: `method` must be a string",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1}"#,
            "Invalid Request: `method` is missing",
        ),
    ] {
        assert_eq!(
            refusal(body.as_bytes()),
            (400, num(1), -32600, message.into()),
            "{body}"
        );
    }
}

#[test]
fn params_a_method_cannot_take_are_invalid_params() {
    let no_name =
        format!(r#"{{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{{{META}}}}}"#);
    assert_eq!(
        refusal(no_name.as_bytes()),
        (
            400,
            Some(RequestId::String("a".into())),
            -32602,
            "Invalid params for tools/call: missing field `name`".into()
        )
    );
    let (_, _, code, message) =
        refusal(br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":5}}"#);
    assert_eq!(
        (code, message.as_str()),
        (
            -32602,
            "Invalid params for tools/call: invalid type: integer `5`, expected a string"
        )
    );
    let (_, _, code, _) = refusal(
        br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x","arguments":"t"}}"#,
    );
    assert_eq!(code, -32602);
    for params in ["[1]", "null", "3", r#""p""#] {
        let body = format!(r#"{{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{params}}}"#);
        assert_eq!(
            refusal(body.as_bytes()),
            (
                400,
                num(4),
                -32602,
                "Invalid params: `params` must be an object".into()
            ),
            "{body}"
        );
    }
    let notification = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":[]}"#;
    assert_eq!(refusal(notification.as_bytes()).1, None);
}

#[test]
fn removed_methods_claiming_2026_07_28_are_not_found() {
    let init = format!(
        r#"{{"jsonrpc":"2.0","id":"i","method":"initialize","params":{{"protocolVersion":"2026-07-28","capabilities":{{}},"clientInfo":{{"name":"c","version":"1"}},{META}}}}}"#
    );
    assert_eq!(
        refusal(init.as_bytes()),
        (
            404,
            Some(RequestId::String("i".into())),
            -32601,
            "Method not found: initialize does not exist in protocol 2026-07-28".into()
        )
    );
    let set_level = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{{"level":"debug",{META}}}}}"#
    );
    assert_eq!(refusal(set_level.as_bytes()).0, 404);
    let legacy_ping = r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#;
    assert_eq!(judge(legacy_ping.as_bytes()), Verdict::Pass);
    // Gone whatever the params hold: params that do not fit the legacy method
    // (the conformance suite sends only `_meta`) are not a params problem.
    for method in REMOVED_IN_STATELESS {
        let bare = format!(r#"{{"jsonrpc":"2.0","id":7,"method":"{method}","params":{{{META}}}}}"#);
        assert_eq!(
            refusal(bare.as_bytes()),
            (
                404,
                num(7),
                -32601,
                format!("Method not found: {method} does not exist in protocol 2026-07-28")
            ),
            "{bare}"
        );
    }
}

#[test]
fn every_known_method_has_a_typed_check() {
    for method in KNOWN_METHODS {
        assert!(typed_check(method).is_some(), "{method}");
    }
    assert!(typed_check("no/such").is_none());
}
