//! Bad input gets the exact JSON-RPC error, and the server keeps serving.

use serde_json::{Value, json};

use crate::harness::*;

fn error_without_id(wharf: &mut Wharf) -> Value {
    wharf.next_matching(|m| m.get("error").is_some() && m.get("id").is_none())
}

#[test]
fn malformed_json_is_a_parse_error() {
    let mut wharf = Wharf::start(&["echo"], &[]);
    wharf.send_raw(b"{\"jsonrpc\": \"2.0\", \"method\": ");
    let error = error_without_id(&mut wharf);
    assert_eq!(error["error"]["code"], -32700);
    assert!(error.get("id").is_none());
    // An id that can be read is answered (more in stdio_ids.rs).
    wharf.send_raw(b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ");
    let error = wharf.response(&json!(1));
    assert_eq!(error["error"]["code"], -32700);
    wharf.send_raw(b"\xff\xfe not utf-8");
    assert_eq!(error_without_id(&mut wharf)["error"]["code"], -32700);
    still_serving(&mut wharf, 2);
}

#[test]
fn non_requests_are_invalid_requests() {
    let mut wharf = Wharf::start(&["echo"], &[]);
    wharf.send_raw(b"[1, 2]");
    assert_eq!(error_without_id(&mut wharf)["error"]["code"], -32600);
    wharf.send(json!({"jsonrpc": "2.0", "id": 5}));
    let response = wharf.response(&json!(5));
    assert_eq!(error_of(&response)["code"], -32600);
    assert_eq!(
        error_of(&response)["message"],
        "Invalid Request: `method` is missing"
    );
    wharf.send(json!({"jsonrpc": "1.0", "id": 6, "method": "tools/list"}));
    assert_eq!(error_of(&wharf.response(&json!(6)))["code"], -32600);
    still_serving(&mut wharf, 7);
}

#[test]
fn a_stray_response_is_ignored() {
    let mut wharf = Wharf::start(&["echo"], &[]);
    wharf.send(json!({"jsonrpc": "2.0", "id": 6, "result": {}}));
    wharf.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}}),
    );
    still_serving(&mut wharf, 1);
    wharf.send(json!({"jsonrpc": "2.0", "id": 6, "result": {}}));
    still_serving(&mut wharf, 2);
}

#[test]
fn missing_meta_is_invalid_params() {
    let mut wharf = Wharf::start(&["echo"], &[]);
    let response = wharf.request(json!(1), "tools/list", json!({}));
    assert_eq!(error_of(&response)["code"], -32602);
    let response = wharf.request(
        json!(2),
        "tools/list",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}}),
    );
    let error = error_of(&response);
    assert_eq!(error["code"], -32602);
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("clientCapabilities"),
        "{error}"
    );
    wharf.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}));
    assert_eq!(error_of(&wharf.response(&json!(3)))["code"], -32602);
    still_serving(&mut wharf, 4);
}

#[test]
fn unsupported_version_lists_the_supported_ones() {
    let mut wharf = Wharf::start(&["echo"], &[]);
    let response = wharf.request(
        json!(1),
        "tools/list",
        json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "1900-01-01",
            "io.modelcontextprotocol/clientCapabilities": {}
        }}),
    );
    let error = error_of(&response);
    assert_eq!(error["code"], -32022);
    assert_eq!(error["data"]["requested"], "1900-01-01");
    let supported = error["data"]["supported"].as_array().unwrap();
    assert!(supported.contains(&json!(MODERN)), "{error}");
    still_serving(&mut wharf, 2);
}

#[test]
fn unknown_tool_is_invalid_params() {
    let mut wharf = Wharf::start(&["echo"], &[]);
    let response = wharf.modern(
        1,
        "tools/call",
        json!({"name": "echo_nope", "arguments": {}}),
    );
    let error = error_of(&response);
    assert_eq!(error["code"], -32602);
    assert_eq!(error["message"], "Unknown tool: echo_nope");
    still_serving(&mut wharf, 2);
}

#[test]
fn unknown_method_is_method_not_found() {
    let mut wharf = Wharf::start(&["echo"], &[]);
    let response = wharf.modern(1, "tools/frobnicate", json!({}));
    assert_eq!(error_of(&response)["code"], -32601);
    still_serving(&mut wharf, 2);
}

#[test]
fn wrong_argument_types_are_tool_errors() {
    let mut wharf = Wharf::start(&["echo"], &[]);
    let response = wharf.modern(
        1,
        "tools/call",
        json!({"name": "echo_echo", "arguments": {"text": 5}}),
    );
    let result = result_of(&response);
    assert_eq!(result["isError"], true);
    let text = first_text(result);
    assert!(
        text.starts_with("Invalid arguments for tool `echo_echo`: at /text: 5 is not of type"),
        "{text}"
    );
    let response = wharf.modern(
        2,
        "tools/call",
        json!({"name": "echo_echo", "arguments": {}}),
    );
    let result = result_of(&response);
    assert_eq!(result["isError"], true);
    assert!(
        first_text(result).contains("\"text\" is a required property"),
        "{result}"
    );
    still_serving(&mut wharf, 3);
}

#[test]
fn non_object_arguments_are_invalid_params() {
    let mut wharf = Wharf::start(&["echo"], &[]);
    let response = wharf.modern(
        1,
        "tools/call",
        json!({"name": "echo_echo", "arguments": "text"}),
    );
    let error = error_of(&response);
    assert_eq!(error["code"], -32602);
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .starts_with("Invalid params for tools/call"),
        "{error}"
    );
    still_serving(&mut wharf, 2);
}
