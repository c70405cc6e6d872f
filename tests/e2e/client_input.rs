//! Plugins asking the client (the conformance fixture's elicitation, sampling and
//! roots tools): 2026-07-28 multi round-trip requests and legacy server-to-client
//! requests, over stdio and HTTP, with every refusal's exact error.

use std::net::SocketAddr;

use serde_json::{Value, json};

use crate::harness::*;
use crate::http_client::{Response, post};

const ELICIT: &str = "conformance_test_input_required_result_elicitation";
const MULTI_ROUND: &str = "conformance_test_input_required_result_multi_round";
const NEEDS_SAMPLING: &str = "conformance_test_missing_capability";
const LEGACY_ELICIT: &str = "conformance_test_elicitation";
const LEGACY_SAMPLING: &str = "conformance_test_sampling";

/// The question `ELICIT` asks, exactly as the client gets it.
fn name_request() -> Value {
    json!({"method": "elicitation/create", "params": {
        "mode": "form",
        "message": "What is your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}},
                            "required": ["name"]}
    }})
}

/// `_meta` declaring `capabilities`.
fn meta_with(capabilities: Value) -> Value {
    let mut meta = meta();
    meta["io.modelcontextprotocol/clientCapabilities"] = capabilities;
    meta
}

/// A 2026-07-28 request's params for `name` with `extra` fields (inputResponses,
/// requestState) and these client capabilities.
fn round(method: &str, name: &str, extra: Value, capabilities: Value) -> Value {
    let mut params = json!({"name": name, "_meta": meta_with(capabilities)});
    if method == "tools/call" {
        params["arguments"] = json!({});
    }
    for (key, value) in extra.as_object().expect("extra is an object") {
        params[key] = value.clone();
    }
    params
}

fn all_capabilities() -> Value {
    json!({"elicitation": {}, "sampling": {}, "roots": {}})
}

/// One 2026-07-28 `tools/call` round over stdio.
fn call_round(wharf: &mut Wharf, id: i64, name: &str, extra: Value) -> Value {
    wharf.request(
        json!(id),
        "tools/call",
        round("tools/call", name, extra, all_capabilities()),
    )
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

#[test]
fn an_elicitation_round_trip_over_stdio() {
    let mut wharf = Wharf::start(&["conformance"], &[]);
    let first = call_round(&mut wharf, 1, ELICIT, json!({}));
    let result = result_of(&first);
    assert_eq!(result["resultType"], "input_required");
    assert_eq!(
        result["inputRequests"],
        json!({"user_name": name_request()})
    );
    let state = result["requestState"].as_str().expect("a request state");

    // Accepted, declined, cancelled: each completes the call.
    for (id, answer, text) in [
        (2, accept(json!({"name": "Ada"})), "Hello, Ada!"),
        (3, json!({"action": "decline"}), "Hello, (declined)!"),
        (4, json!({"action": "cancel"}), "Hello, (cancelled)!"),
    ] {
        let retry = call_round(
            &mut wharf,
            id,
            ELICIT,
            json!({"inputResponses": {"user_name": answer}, "requestState": state}),
        );
        let result = result_of(&retry);
        assert_eq!(result["resultType"], "complete", "{retry}");
        assert_eq!(first_text(result), text);
    }
}

#[test]
fn a_missing_answer_asks_again_and_extra_answers_are_ignored() {
    let mut wharf = Wharf::start(&["conformance"], &[]);
    let retry = call_round(
        &mut wharf,
        1,
        ELICIT,
        json!({"inputResponses": {"wrong_key": accept(json!({"data": 1}))}}),
    );
    let result = result_of(&retry);
    assert_eq!(result["resultType"], "input_required");
    assert_eq!(
        result["inputRequests"],
        json!({"user_name": name_request()})
    );

    let extra = call_round(
        &mut wharf,
        2,
        ELICIT,
        json!({"inputResponses": {"user_name": accept(json!({"name": "Bo"})),
                                  "unknown": accept(json!({}))}}),
    );
    assert_eq!(first_text(result_of(&extra)), "Hello, Bo!");
}

#[test]
fn answers_are_carried_across_rounds() {
    let mut wharf = Wharf::start(&["conformance"], &[]);
    let first = call_round(&mut wharf, 1, MULTI_ROUND, json!({}));
    let first = result_of(&first).clone();
    assert_eq!(
        first["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["step1"]
    );
    let second = call_round(
        &mut wharf,
        2,
        MULTI_ROUND,
        json!({"inputResponses": {"step1": accept(json!({"name": "Ada"}))},
               "requestState": first["requestState"]}),
    );
    let second = result_of(&second).clone();
    assert_eq!(second["resultType"], "input_required");
    assert_eq!(
        second["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["step2"]
    );
    assert_ne!(second["requestState"], first["requestState"]);
    // Only step2 is answered now: step1 comes from the state.
    let third = call_round(
        &mut wharf,
        3,
        MULTI_ROUND,
        json!({"inputResponses": {"step2": accept(json!({"color": "blue"}))},
               "requestState": second["requestState"]}),
    );
    assert_eq!(first_text(result_of(&third)), "Ada likes blue");
}

#[test]
fn tampered_or_foreign_states_and_malformed_answers_are_invalid_params() {
    let mut wharf = Wharf::start(&["conformance"], &[]);
    let first = call_round(&mut wharf, 1, MULTI_ROUND, json!({}));
    let state = result_of(&first)["requestState"]
        .as_str()
        .unwrap()
        .to_string();
    let rejected =
        "Invalid params: requestState failed verification (altered, or from another request)";

    let tampered = call_round(
        &mut wharf,
        2,
        MULTI_ROUND,
        json!({"requestState": format!("{state}-TAMPERED")}),
    );
    assert_eq!(
        error_of(&tampered),
        &json!({"code": -32602, "message": rejected, "data": {"requestState": "rejected"}})
    );
    // A state is bound to its tool (and arguments): another tool refuses it.
    let foreign = call_round(&mut wharf, 3, ELICIT, json!({"requestState": state}));
    assert_eq!(error_of(&foreign)["message"], rejected);

    let malformed = call_round(
        &mut wharf,
        4,
        ELICIT,
        json!({"inputResponses": {"user_name": 12345}}),
    );
    assert_eq!(
        error_of(&malformed),
        &json!({"code": -32602,
                "message": "Invalid params: inputResponses[\"user_name\"] must be an object, not 12345",
                "data": {"inputResponse": "user_name"}})
    );
    let misfit = call_round(
        &mut wharf,
        5,
        ELICIT,
        json!({"inputResponses": {"user_name": {"content": {"name": "x"}}}}),
    );
    let error = error_of(&misfit);
    assert_eq!(error["code"], -32602);
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .starts_with("Invalid params: inputResponses[\"user_name\"]: not an ElicitResult: "),
        "{error}"
    );
}

#[test]
fn an_undeclared_capability_is_32021_and_a_plugin_may_fall_back() {
    let mut wharf = Wharf::start(&["conformance"], &[]);
    let refused = wharf.request(
        json!(1),
        "tools/call",
        round("tools/call", NEEDS_SAMPLING, json!({}), json!({})),
    );
    assert_eq!(
        error_of(&refused),
        &json!({"code": -32021,
                "message": "Server requires the sampling capability for this request",
                "data": {"requiredCapabilities": {"sampling": {}}}})
    );
    // Without elicitation the fixture falls back to sampling.
    let fallback = wharf.request(
        json!(2),
        "tools/call",
        round(
            "tools/call",
            "conformance_test_input_required_result_capabilities",
            json!({}),
            json!({"sampling": {}}),
        ),
    );
    let result = result_of(&fallback);
    assert_eq!(
        result["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["name_by_sampling"]
    );
    assert_eq!(
        result["inputRequests"]["name_by_sampling"]["method"],
        "sampling/createMessage"
    );
}

#[test]
fn a_prompt_asks_before_it_renders() {
    let mut wharf = Wharf::start(&["conformance"], &[]);
    let name = "conformance_test_input_required_result_prompt";
    let first = wharf.request(
        json!(1),
        "prompts/get",
        round("prompts/get", name, json!({}), all_capabilities()),
    );
    let result = result_of(&first);
    assert_eq!(result["resultType"], "input_required");
    assert_eq!(
        result["inputRequests"]["user_context"]["params"]["message"],
        "What context should the prompt use?"
    );
    let retry = wharf.request(
        json!(2),
        "prompts/get",
        round(
            "prompts/get",
            name,
            json!({"inputResponses": {"user_context": accept(json!({"context": "tests"}))},
                   "requestState": result["requestState"]}),
            all_capabilities(),
        ),
    );
    let result = result_of(&retry);
    assert_eq!(result["resultType"], "complete");
    assert_eq!(
        result["messages"][0]["content"]["text"],
        "Use this context: tests"
    );
}

/// Legacy `initialize` over stdio declaring `capabilities`.
fn initialize_with(wharf: &mut Wharf, capabilities: Value) {
    wharf.request(
        json!("init"),
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": capabilities,
               "clientInfo": {"name": "wharf-e2e", "version": "0"}}),
    );
    wharf.notify("notifications/initialized", json!({}));
}

#[test]
fn a_legacy_session_gets_a_real_elicitation_request() {
    let mut wharf = Wharf::start(&["conformance"], &[]);
    initialize_with(&mut wharf, json!({"elicitation": {}}));
    for (id, answer, text) in [
        (
            1,
            accept(json!({"username": "ada", "email": "ada@example.com"})),
            r#"User response: <action=accept, content={"email":"ada@example.com","username":"ada"}>"#,
        ),
        (
            2,
            json!({"action": "decline"}),
            "User response: <action=decline>",
        ),
    ] {
        wharf.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": LEGACY_ELICIT, "arguments": {"message": "Who are you?"}}}));
        let request = wharf.next_matching(|m| m["method"] == "elicitation/create");
        assert_eq!(request["params"]["message"], "Who are you?");
        assert_eq!(
            request["params"]["requestedSchema"]["required"],
            json!(["username", "email"])
        );
        wharf.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": answer}));
        let response = wharf.response(&json!(id));
        assert_eq!(first_text(result_of(&response)), text);
    }
    // A stray response (an id Wharf never sent) is dropped; serving goes on.
    wharf.send(json!({"jsonrpc": "2.0", "id": 999, "result": {}}));
    let undeclared = wharf.request(
        json!(3),
        "tools/call",
        json!({"name": LEGACY_SAMPLING, "arguments": {"prompt": "Hi"}}),
    );
    assert_eq!(
        error_of(&undeclared),
        &json!({"code": -32021,
                "message": "Server requires the sampling capability for this request",
                "data": {"requiredCapabilities": {"sampling": {}}}})
    );
}

#[test]
fn a_legacy_client_error_fails_the_call() {
    let mut wharf = Wharf::start(&["conformance"], &[]);
    initialize_with(&mut wharf, json!({"sampling": {}}));
    wharf.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": LEGACY_SAMPLING, "arguments": {"prompt": "Hi"}}}));
    let request = wharf.next_matching(|m| m["method"] == "sampling/createMessage");
    assert_eq!(
        request["params"]["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "Hi"}}])
    );
    wharf.send(json!({"jsonrpc": "2.0", "id": request["id"],
        "error": {"code": -1, "message": "User rejected sampling request"}}));
    let response = wharf.response(&json!(1));
    let result = result_of(&response);
    assert_eq!(result["isError"], true);
    let text = first_text(result);
    assert!(
        text.starts_with("Tool `conformance_test_sampling` failed: the client did not answer: "),
        "{text}"
    );
    assert!(text.contains("User rejected sampling request"), "{text}");
}

/// A 2026-07-28 POST with matching standard headers.
fn modern_post(addr: SocketAddr, id: i64, params: Value) -> Response {
    let name = params["name"].as_str().unwrap().to_string();
    let headers = [
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", name.as_str()),
    ];
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    post(addr, &headers, &body)
}

#[test]
fn input_required_and_32021_over_http() {
    let (_wharf, addr) = serve_http(&["conformance"], &[]);
    let first = modern_post(
        addr,
        1,
        round("tools/call", ELICIT, json!({}), all_capabilities()),
    );
    assert_eq!(first.status, 200);
    let first = first.json();
    let result = result_of(&first);
    assert_eq!(
        result["inputRequests"],
        json!({"user_name": name_request()})
    );

    let retry = modern_post(
        addr,
        2,
        round(
            "tools/call",
            ELICIT,
            json!({"inputResponses": {"user_name": accept(json!({"name": "Ada"}))},
                   "requestState": result["requestState"]}),
            all_capabilities(),
        ),
    );
    assert_eq!(retry.status, 200);
    assert_eq!(first_text(result_of(&retry.json())), "Hello, Ada!");

    let refused = modern_post(
        addr,
        3,
        round("tools/call", NEEDS_SAMPLING, json!({}), json!({})),
    );
    assert_eq!(refused.status, 400);
    assert_eq!(
        error_of(&refused.json()),
        &json!({"code": -32021,
                "message": "Server requires the sampling capability for this request",
                "data": {"requiredCapabilities": {"sampling": {}}}})
    );
}

#[test]
fn a_legacy_http_session_answers_on_the_call_stream() {
    let (_wharf, addr) = serve_http(&["conformance"], &[]);
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "legacy", "version": "1"}}});
    let response = post(addr, &[], &init);
    let session = response
        .header("mcp-session-id")
        .expect("session")
        .to_string();
    drop(response);
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(addr, &headers, &initialized).status, 202);

    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": LEGACY_ELICIT, "arguments": {"message": "Over HTTP?"}}});
    let mut stream = post(addr, &headers, &call);
    assert_eq!(stream.status, 200);
    let request = stream.next_event().expect("the elicitation request");
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "Over HTTP?");
    let answer = json!({"jsonrpc": "2.0", "id": request["id"],
        "result": {"action": "accept", "content": {"username": "u", "email": "e"}}});
    assert_eq!(post(addr, &headers, &answer).status, 202);
    let response = stream.next_event().expect("the call's response");
    assert_eq!(
        first_text(result_of(&response)),
        r#"User response: <action=accept, content={"email":"e","username":"u"}>"#
    );
}

#[test]
fn waiting_for_the_client_does_not_count_against_the_timeout() {
    let mut wharf = Wharf::start(&["conformance"], &["--timeout-ms", "300"]);
    initialize_with(&mut wharf, json!({"elicitation": {}}));
    wharf.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": LEGACY_ELICIT, "arguments": {"message": "Take your time"}}}));
    let request = wharf.next_matching(|m| m["method"] == "elicitation/create");
    std::thread::sleep(std::time::Duration::from_millis(900));
    wharf.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "cancel"}}));
    let response = wharf.response(&json!(1));
    assert_eq!(
        first_text(result_of(&response)),
        "User response: <action=cancel>"
    );

    // Cancelling the call while the client thinks stops it: no response at all.
    wharf.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": LEGACY_ELICIT, "arguments": {"message": "Never mind"}}}));
    wharf.next_matching(|m| m["method"] == "elicitation/create");
    wharf.notify("notifications/cancelled", json!({"requestId": 2}));
    let after = wharf.drain(std::time::Duration::from_millis(500));
    assert!(!after.iter().any(|m| m["id"] == 2), "{after:?}");
    let ok = wharf.request(
        json!(3),
        "tools/call",
        json!({"name": "conformance_test_simple_text", "arguments": {}}),
    );
    assert_eq!(result_of(&ok)["isError"], false);
}

#[test]
fn a_resource_read_asks_before_it_answers() {
    let mut wharf = Wharf::start(&["conformance"], &[]);
    let uri = "conformance+test://asking/tides";
    let params = |extra: Value| {
        let mut params = json!({"uri": uri, "_meta": meta_with(all_capabilities())});
        for (key, value) in extra.as_object().unwrap() {
            params[key] = value.clone();
        }
        params
    };
    let first = wharf.request(json!(1), "resources/read", params(json!({})));
    let result = result_of(&first);
    assert_eq!(result["resultType"], "input_required");
    assert_eq!(
        result["inputRequests"]["detail"]["params"]["message"],
        "Which detail of tides?"
    );
    assert!(result.get("ttlMs").is_none(), "no cache hints: {result}");
    let retry = wharf.request(
        json!(2),
        "resources/read",
        params(
            json!({"inputResponses": {"detail": accept(json!({"detail": "height"}))},
                      "requestState": result["requestState"]}),
        ),
    );
    let result = result_of(&retry);
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["contents"][0]["text"], "tides: height");
    assert_eq!(result["contents"][0]["uri"], uri);

    // The state is bound to the URI it was issued for.
    let other = wharf.request(
        json!(3),
        "resources/read",
        json!({"uri": "conformance+test://asking/waves", "_meta": meta_with(all_capabilities()),
               "requestState": result_of(&first)["requestState"]}),
    );
    assert_eq!(error_of(&other)["code"], -32602);
}
