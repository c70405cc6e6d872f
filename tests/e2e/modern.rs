//! The 2026-07-28 (stateless) path: discover, list, call, with `_meta` on each request.

use serde_json::{Value, json};

use crate::harness::*;

const EXAMPLES: &[&str] = &["echo", "calc", "textstats"];

fn names(result: &Value) -> Vec<String> {
    result["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {result}"))
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn discover_describes_the_server() {
    let mut wharf = Wharf::start(EXAMPLES, &[]);
    let response = wharf.modern(1, "server/discover", json!({}));
    let result = result_of(&response);
    assert_eq!(result["resultType"], "complete");
    let versions = result["supportedVersions"].as_array().unwrap();
    assert!(versions.contains(&json!(MODERN)), "{result}");
    assert!(result["capabilities"]["tools"].is_object(), "{result}");
    assert!(result["ttlMs"].is_u64(), "{result}");
    assert!(result["cacheScope"].is_string(), "{result}");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "wharf"
    );
    assert!(result.get("protocolVersion").is_none());
}

#[test]
fn tools_are_listed_sorted_with_cache_hints() {
    let mut wharf = Wharf::start(EXAMPLES, &[]);
    let response = wharf.modern(1, "tools/list", json!({}));
    let result = result_of(&response);
    assert_eq!(
        names(result),
        [
            "calc_add",
            "calc_divide",
            "calc_evaluate",
            "calc_multiply",
            "calc_subtract",
            "echo_echo",
            "textstats_analyze"
        ]
    );
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["ttlMs"], 10_000);
    assert_eq!(result["cacheScope"], "public");
    assert!(result.get("nextCursor").is_none());
    for tool in result["tools"].as_array().unwrap() {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        assert!(tool["description"].is_string(), "{tool}");
    }
    let add = &result["tools"][0];
    assert_eq!(add["outputSchema"]["type"], "object", "{add}");
}

#[test]
fn pagination_walks_every_tool_once() {
    let mut wharf = Wharf::start(EXAMPLES, &["--page-size", "3"]);
    let full = {
        let mut big = Wharf::start(EXAMPLES, &[]);
        names(result_of(&big.modern(1, "tools/list", json!({}))))
    };
    let mut seen = Vec::new();
    let mut cursor: Option<Value> = None;
    let mut pages = 0;
    loop {
        let params = match &cursor {
            None => json!({}),
            Some(cursor) => json!({ "cursor": cursor }),
        };
        let response = wharf.modern(10 + pages, "tools/list", params);
        let result = result_of(&response).clone();
        let page = names(&result);
        assert!(page.len() <= 3);
        seen.extend(page);
        pages += 1;
        match result.get("nextCursor") {
            Some(next) => cursor = Some(next.clone()),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(seen, full);
}

#[test]
fn invalid_cursor_is_invalid_params() {
    let mut wharf = Wharf::start(&["echo"], &[]);
    let response = wharf.modern(1, "tools/list", json!({"cursor": "%%%"}));
    let error = error_of(&response);
    assert_eq!(error["code"], -32602);
    assert_eq!(error["message"], "Invalid cursor: %%%");
}

#[test]
fn echo_returns_its_text() {
    let mut wharf = Wharf::start(&["echo"], &[]);
    let response = wharf.modern(
        1,
        "tools/call",
        json!({"name": "echo_echo", "arguments": {"text": "hello, wharf"}}),
    );
    let result = result_of(&response);
    assert_eq!(result["resultType"], "complete");
    assert_eq!(first_text(result), "hello, wharf");
    assert_eq!(result["isError"], false);
}

#[test]
fn calc_returns_structured_output() {
    let mut wharf = Wharf::start(&["calc"], &[]);
    let response = wharf.modern(
        1,
        "tools/call",
        json!({"name": "calc_add", "arguments": {"a": 2, "b": 3.5}}),
    );
    let result = result_of(&response);
    assert_eq!(result["structuredContent"], json!({"result": 5.5}));
    let text: Value = serde_json::from_str(first_text(result)).unwrap();
    assert_eq!(text, json!({"result": 5.5}));

    let response = wharf.modern(
        2,
        "tools/call",
        json!({"name": "calc_evaluate", "arguments": {"expression": "2 * (3 + 4) - 2^3"}}),
    );
    let result = result_of(&response);
    assert_eq!(result["structuredContent"]["value"], 6.0);
    assert_eq!(result["isError"], false);
}

#[test]
fn calc_reports_domain_errors_as_tool_errors() {
    let mut wharf = Wharf::start(&["calc"], &[]);
    let response = wharf.modern(
        1,
        "tools/call",
        json!({"name": "calc_divide", "arguments": {"a": 1, "b": 0}}),
    );
    let result = result_of(&response);
    assert_eq!(result["isError"], true);
    assert!(first_text(result).contains("zero"), "{result}");

    let response = wharf.modern(
        2,
        "tools/call",
        json!({"name": "calc_evaluate", "arguments": {"expression": "1 +"}}),
    );
    assert_eq!(result_of(&response)["isError"], true);
}

#[test]
fn textstats_analyzes_with_several_parameters() {
    let mut wharf = Wharf::start(&["textstats"], &[]);
    let response = wharf.modern(
        1,
        "tools/call",
        json!({"name": "textstats_analyze", "arguments": {
            "text": "The cat saw the dog. The dog ran!\nThe end.",
            "top_n": 2,
            "case_sensitive": false
        }}),
    );
    let result = result_of(&response);
    assert_eq!(result["isError"], false, "{result}");
    let stats = &result["structuredContent"];
    assert_eq!(stats["words"], 10);
    assert_eq!(stats["lines"], 2);
    assert_eq!(stats["sentences"], 3);
    assert_eq!(
        stats["top_words"],
        json!([{"word": "the", "count": 4}, {"word": "dog", "count": 2}])
    );
}

#[test]
fn ping_is_not_a_modern_method() {
    let mut wharf = Wharf::start(&["echo"], &[]);
    // As the very first message, and once requests are flowing.
    let response = wharf.modern(1, "ping", json!({}));
    assert_eq!(error_of(&response)["code"], -32601);
    assert!(result_of(&wharf.modern(2, "tools/list", json!({}))).is_object());
    let response = wharf.modern(3, "ping", json!({}));
    assert_eq!(error_of(&response)["code"], -32601);
}

#[test]
fn each_request_carries_its_own_version() {
    // A legacy handshake on the same process does not change how a request with
    // modern `_meta` is served, and vice versa.
    let mut wharf = Wharf::start(&["echo"], &[]);
    let response = wharf.modern(1, "tools/list", json!({}));
    assert_eq!(result_of(&response)["resultType"], "complete");
    let response = wharf.modern(
        2,
        "tools/call",
        json!({"name": "echo_echo", "arguments": {"text": "x"}}),
    );
    assert_eq!(result_of(&response)["resultType"], "complete");
}

/// Ends `wharf`'s stdin and checks that it exits with success, saying why.
fn exits_cleanly_before_a_first_request(mut wharf: Wharf) {
    let status = wharf.close_and_wait();
    assert!(status.success(), "{status}:\n{}", wharf.stderr());
    wharf.wait_for_log("stdin closed before the first request, exiting");
    assert!(!wharf.stderr().contains("Error"), "{}", wharf.stderr());
}

#[test]
fn stdin_eof_before_any_request_exits_cleanly() {
    exits_cleanly_before_a_first_request(Wharf::start(&["echo"], &[]));
}

#[test]
fn stdin_eof_after_only_rejected_lines_exits_cleanly() {
    let mut wharf = Wharf::start(&["echo"], &[]);
    wharf.send_raw(b"{not json\n");
    let response = wharf.next_matching(|m| m.get("error").is_some() && m.get("id").is_none());
    assert_eq!(response["error"]["code"], -32700);
    exits_cleanly_before_a_first_request(wharf);
}

#[test]
fn stdin_eof_exits_cleanly() {
    let mut wharf = Wharf::start(&["echo"], &[]);
    let response = wharf.modern(1, "tools/list", json!({}));
    assert!(response.get("result").is_some());
    assert!(wharf.is_running());
    let status = wharf.close();
    assert!(status.success(), "{status}");
}
