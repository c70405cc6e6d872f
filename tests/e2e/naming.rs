//! Tool names: `<plugin>_<tool>` by default; a manifest's `[names] prefix = false`
//! keeps a plugin's own names, and a name another plugin already exposes is then
//! left out rather than shadowing it.

use serde_json::{Value, json};

use crate::harness::*;

const AS_DECLARED: &str = "[names]\nprefix = false\n";

fn names(wharf: &mut Wharf, id: i64) -> Vec<String> {
    let response = wharf.modern(id, "tools/list", json!({}));
    result_of(&response)["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_manifest_can_turn_the_prefix_off() {
    let mut wharf = Wharf::start_with_manifests(
        &["conformance", "echo"],
        &[("conformance", AS_DECLARED)],
        &[],
    );
    let listed = names(&mut wharf, 1);
    assert!(
        listed.contains(&"test_simple_text".to_string()),
        "{listed:?}"
    );
    assert!(listed.contains(&"echo_echo".to_string()), "{listed:?}");
    assert!(!listed.iter().any(|name| name.starts_with("conformance_")));
    let result = call(&mut wharf, 2, "test_simple_text", json!({}));
    assert_eq!(
        first_text(&result),
        "This is a simple text response for testing."
    );
}

#[test]
fn an_unprefixed_name_that_is_taken_is_left_out() {
    let dir = plugin_dir(&["conformance"]);
    std::fs::copy(plugin_file("conformance"), dir.path().join("copy.wasm")).unwrap();
    for plugin in ["conformance", "copy"] {
        std::fs::write(dir.path().join(format!("{plugin}.toml")), AS_DECLARED).unwrap();
    }
    let mut wharf = Wharf::start_in(dir.path(), &[]);
    let listed = names(&mut wharf, 1);
    let simple: Vec<&String> = listed.iter().filter(|n| *n == "test_simple_text").collect();
    assert_eq!(simple.len(), 1, "{listed:?}");
    // Plugins claim names in name order: `conformance` before `copy`.
    wharf.wait_for_log("plugin `conformance` already exposes a tool named `test_simple_text`");
}

#[test]
fn embedded_resources_reach_the_client() {
    let mut wharf =
        Wharf::start_with_manifests(&["conformance"], &[("conformance", AS_DECLARED)], &[]);
    let result = call(&mut wharf, 1, "test_multiple_content_types", json!({}));
    let content = result["content"].as_array().unwrap();
    let kinds: Vec<&Value> = content.iter().map(|item| &item["type"]).collect();
    assert_eq!(kinds, ["text", "image", "resource"]);
    assert_eq!(
        content[2]["resource"],
        json!({
            "uri": "test://mixed-content-resource",
            "mimeType": "application/json",
            "text": "{\"test\":\"data\",\"value\":123}"
        })
    );
    assert_eq!(content[1]["mimeType"], "image/png");
}

#[test]
fn a_hand_written_schema_is_served_and_enforced() {
    let mut wharf =
        Wharf::start_with_manifests(&["conformance"], &[("conformance", AS_DECLARED)], &[]);
    let response = wharf.modern(1, "tools/list", json!({}));
    let tool = result_of(&response)["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "json_schema_2020_12_tool")
        .unwrap()
        .clone();
    let schema = &tool["inputSchema"];
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(schema["$defs"]["address"]["$anchor"], "addressDef");
    assert_eq!(schema["else"], json!({"required": ["email"]}));
    let ok = call(
        &mut wharf,
        2,
        "json_schema_2020_12_tool",
        json!({"email": "a@b.c"}),
    );
    assert_eq!(
        first_text(&ok),
        r#"JSON Schema 2020-12 tool called with: {"email":"a@b.c"}"#
    );
    // contactMethod phone requires phone (if/then).
    let bad = call(
        &mut wharf,
        3,
        "json_schema_2020_12_tool",
        json!({"contactMethod": "phone", "email": "a@b.c"}),
    );
    assert_eq!(bad["isError"], true, "{bad}");
    assert!(
        first_text(&bad).starts_with("Invalid arguments for tool `json_schema_2020_12_tool`"),
        "{bad}"
    );
}
