//! Resources, prompts, completion and logging: the parts of MCP that clients
//! use beside tools, with plugins that offer no resources or prompts, so the
//! lists are empty and every lookup names what was not found.

use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::*;

fn assert_invalid_params(response: &Value, message: &str, data: Value) {
    let error = error_of(response);
    assert_eq!(error["code"], -32602, "{response}");
    assert_eq!(error["message"], message, "{response}");
    assert_eq!(error["data"], data, "{response}");
}

#[test]
fn empty_resource_and_prompt_lists_carry_cache_hints() {
    let mut wharf = Wharf::start(&["echo"], &[]);
    for (id, method, key) in [
        (1, "resources/list", "resources"),
        (2, "resources/templates/list", "resourceTemplates"),
        (3, "prompts/list", "prompts"),
    ] {
        let response = wharf.modern(id, method, json!({}));
        let result = result_of(&response);
        assert_eq!(result[key], json!([]), "{method}: {result}");
        assert_eq!(result["resultType"], "complete", "{method}");
        assert_eq!(result["ttlMs"], 10_000, "{method}");
        assert_eq!(result["cacheScope"], "public", "{method}");
        assert!(result.get("nextCursor").is_none(), "{method}");
    }
    let discover = wharf.modern(4, "server/discover", json!({}));
    let capabilities = &result_of(&discover)["capabilities"];
    for capability in ["tools", "resources", "prompts", "completions", "logging"] {
        assert!(capabilities[capability].is_object(), "{capabilities}");
    }
}

#[test]
fn lookups_of_missing_things_are_invalid_params() {
    let mut wharf = Wharf::start(&["echo"], &[]);
    let read = wharf.modern(1, "resources/read", json!({"uri": "test://nowhere"}));
    assert_invalid_params(
        &read,
        "Resource not found: test://nowhere",
        json!({"uri": "test://nowhere"}),
    );
    let prompt = wharf.modern(2, "prompts/get", json!({"name": "summarise"}));
    assert_invalid_params(
        &prompt,
        "Unknown prompt: summarise",
        json!({"name": "summarise"}),
    );
    let complete_prompt = wharf.modern(
        3,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "summarise"},
               "argument": {"name": "style", "value": "sh"}}),
    );
    assert_invalid_params(
        &complete_prompt,
        "Unknown prompt: summarise",
        json!({"name": "summarise"}),
    );
    let complete_template = wharf.modern(
        4,
        "completion/complete",
        json!({"ref": {"type": "ref/resource", "uri": "file:///{path}"},
               "argument": {"name": "path", "value": "a"}}),
    );
    assert_invalid_params(
        &complete_template,
        "Unknown resource template: file:///{path}",
        json!({"uri": "file:///{path}"}),
    );
    // Cursors name the last item of a page, so any decodable one is valid.
    let cursor = wharf.modern(5, "resources/list", json!({"cursor": "not a cursor!"}));
    assert_invalid_params(
        &cursor,
        "Invalid cursor: not a cursor!",
        json!({"cursor": "not a cursor!"}),
    );
    still_serving(&mut wharf, 6);
}

/// The `notifications/message` levels that arrived, in order, before the
/// response to `id`.
fn logs_before_response(wharf: &mut Wharf, id: i64) -> Vec<(String, String)> {
    let response = wharf.response(&json!(id));
    assert_eq!(first_text(result_of(&response)), "logged");
    wharf
        .drain(Duration::ZERO)
        .into_iter()
        .filter(|m| m["method"] == "notifications/message")
        .map(|m| {
            assert_eq!(m["params"]["logger"], "misbehave", "{m}");
            (
                m["params"]["level"].as_str().unwrap().to_string(),
                m["params"]["data"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

const AT_WARNING_AND_ABOVE: [&str; 5] = ["warning", "error", "critical", "alert", "emergency"];

#[test]
fn plugin_logs_reach_a_modern_client_at_its_requested_level() {
    let mut wharf = Wharf::start(&["misbehave"], &[]);
    let mut params = modern(json!({"name": "misbehave_log", "arguments": {}}));
    params["_meta"]["io.modelcontextprotocol/logLevel"] = json!("warning");
    wharf.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}));
    let logs = logs_before_response(&mut wharf, 1);
    let levels: Vec<&str> = logs.iter().map(|(level, _)| level.as_str()).collect();
    assert_eq!(levels, AT_WARNING_AND_ABOVE);
    assert_eq!(logs[0].1, "misbehave logs at warning");

    // Without a logLevel, a 2026-07-28 request gets no log messages at all.
    send_call(&mut wharf, 2, "misbehave_log", json!({}));
    assert_eq!(logs_before_response(&mut wharf, 2), []);
}

#[test]
fn legacy_set_level_filters_plugin_logs_for_the_session() {
    let mut wharf = Wharf::start(&["misbehave"], &[]);
    wharf.initialize("2025-11-25");
    let call = |wharf: &mut Wharf, id: i64| {
        wharf.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "misbehave_log", "arguments": {}}}));
        logs_before_response(wharf, id)
    };
    assert_eq!(call(&mut wharf, 1), [], "no logs before logging/setLevel");
    let set = wharf.request(json!(2), "logging/setLevel", json!({"level": "error"}));
    assert_eq!(result_of(&set), &json!({}));
    let levels: Vec<String> = call(&mut wharf, 3).into_iter().map(|(l, _)| l).collect();
    assert_eq!(levels, ["error", "critical", "alert", "emergency"]);
    let bad = wharf.request(json!(4), "logging/setLevel", json!({"level": "loud"}));
    assert_eq!(error_of(&bad)["code"], -32602, "{bad}");
}

#[test]
fn modern_requests_cannot_use_set_level() {
    let mut wharf = Wharf::start(&["echo"], &[]);
    let response = wharf.modern(1, "logging/setLevel", json!({"level": "debug"}));
    let error = error_of(&response);
    assert_eq!(error["code"], -32601, "{response}");
    assert_eq!(
        error["message"],
        "Method not found: logging/setLevel does not exist in protocol 2026-07-28"
    );
}

#[test]
fn plugin_logs_travel_on_the_request_sse_stream() {
    let (_wharf, addr) = serve_http(&["misbehave"], &[]);
    let mut params = modern(json!({"name": "misbehave_log", "arguments": {}}));
    params["_meta"]["io.modelcontextprotocol/logLevel"] = json!("alert");
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params});
    let headers = [
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "misbehave_log"),
    ];
    let response = crate::http_client::post(addr, &headers, &body);
    assert_eq!(response.status, 200);
    let events = response.events();
    let methods: Vec<&str> = events
        .iter()
        .map(|e| e["method"].as_str().unwrap_or("(response)"))
        .collect();
    assert_eq!(
        methods,
        [
            "notifications/message",
            "notifications/message",
            "(response)"
        ]
    );
    assert_eq!(events[0]["params"]["level"], "alert");
    assert_eq!(events[1]["params"]["level"], "emergency");
    assert_eq!(first_text(result_of(&events[2])), "logged");
}
