//! The initialize-based revisions most clients speak today.

use serde_json::{Value, json};

use crate::harness::*;

fn initialize(wharf: &mut Wharf, version: &str) -> Value {
    let response = wharf.request(
        json!(0),
        "initialize",
        json!({
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "wharf-e2e", "version": "0"}
        }),
    );
    let result = result_of(&response).clone();
    wharf.notify("notifications/initialized", json!({}));
    result
}

#[test]
fn every_legacy_version_is_negotiated_as_asked() {
    for version in ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] {
        let mut wharf = Wharf::start(&["echo"], &[]);
        let result = initialize(&mut wharf, version);
        assert_eq!(result["protocolVersion"], version);
        assert_eq!(result["serverInfo"]["name"], "wharf");
        assert!(result["capabilities"]["tools"].is_object(), "{result}");

        let response = wharf.request(json!(1), "tools/list", json!({}));
        let listed = result_of(&response);
        assert_eq!(listed["tools"][0]["name"], "echo_echo", "{version}");

        let response = wharf.request(
            json!(2),
            "tools/call",
            json!({"name": "echo_echo", "arguments": {"text": version}}),
        );
        assert_eq!(first_text(result_of(&response)), version);
    }
}

#[test]
fn unknown_versions_get_the_newest_legacy_one() {
    for asked in ["2099-01-01", MODERN] {
        let mut wharf = Wharf::start(&["echo"], &[]);
        let result = initialize(&mut wharf, asked);
        assert_eq!(result["protocolVersion"], "2025-11-25", "asked {asked}");
    }
}

#[test]
fn legacy_results_carry_no_modern_fields() {
    let mut wharf = Wharf::start(&["calc"], &[]);
    initialize(&mut wharf, "2025-06-18");
    let response = wharf.request(json!(1), "tools/list", json!({}));
    let result = result_of(&response);
    assert!(result.get("resultType").is_none(), "{result}");
    let response = wharf.request(
        json!(2),
        "tools/call",
        json!({"name": "calc_multiply", "arguments": {"a": 6, "b": 7}}),
    );
    let result = result_of(&response);
    assert_eq!(result["structuredContent"], json!({"result": 42.0}));
    assert!(result.get("resultType").is_none(), "{result}");
}

#[test]
fn ping_works_in_a_legacy_session() {
    let mut wharf = Wharf::start(&["echo"], &[]);
    initialize(&mut wharf, "2025-11-25");
    let response = wharf.request(json!("p"), "ping", json!({}));
    assert_eq!(result_of(&response), &json!({}));
}

#[test]
fn legacy_errors_use_the_same_codes() {
    let mut wharf = Wharf::start(&["echo"], &[]);
    initialize(&mut wharf, "2025-11-25");
    let response = wharf.request(
        json!(1),
        "tools/call",
        json!({"name": "nope", "arguments": {}}),
    );
    assert_eq!(error_of(&response)["code"], -32602);
    let response = wharf.request(json!(2), "no/such/method", json!({}));
    assert_eq!(error_of(&response)["code"], -32601);
}
