//! Resources from plugins: listed under their plugin's URI prefix, read by URI
//! or through a template, completed, linked from tool results and prompts, and
//! announced to subscribers when they change.

use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::*;
use crate::http_client;

const CONFORMANCE_MANIFEST: &str = "[names]\nprefix = false\n";

fn read(wharf: &mut Wharf, id: i64, uri: &str) -> Value {
    wharf.modern(id, "resources/read", json!({ "uri": uri }))
}

#[test]
fn resources_and_templates_are_listed_under_their_plugin() {
    let mut wharf = Wharf::start(&["guide", "echo"], &[]);
    let response = wharf.modern(1, "resources/list", json!({}));
    let result = result_of(&response);
    assert_eq!(result["ttlMs"], 10_000);
    assert_eq!(result["cacheScope"], "public");
    let resources = result["resources"].as_array().unwrap();
    assert_eq!(resources.len(), 1, "{result}");
    let readme = &resources[0];
    assert_eq!(readme["uri"], "guide+guide://readme");
    assert_eq!(readme["name"], "readme");
    assert_eq!(readme["title"], "The Wharf guide");
    assert_eq!(readme["mimeType"], "text/markdown");
    assert!(readme["size"].as_u64().unwrap() > 1000, "{readme}");

    let response = wharf.modern(2, "resources/templates/list", json!({}));
    let result = result_of(&response);
    assert_eq!(result["cacheScope"], "public");
    assert_eq!(
        result["resourceTemplates"],
        json!([{
            "uriTemplate": "guide+guide://readme/{section}",
            "name": "section",
            "title": "A section of the Wharf guide",
            "description": "One `##` section of the README, by its slug (`quick-start`, ...).",
            "mimeType": "text/markdown"
        }])
    );
    let discover = wharf.modern(3, "server/discover", json!({}));
    assert_eq!(
        result_of(&discover)["capabilities"]["resources"],
        json!({"subscribe": true, "listChanged": true})
    );
}

#[test]
fn resources_read_by_uri_and_by_template() {
    let mut wharf = Wharf::start(&["guide"], &[]);
    let response = read(&mut wharf, 1, "guide+guide://readme");
    let result = result_of(&response);
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["cacheScope"], "public");
    let contents = &result["contents"][0];
    assert_eq!(contents["uri"], "guide+guide://readme");
    assert_eq!(contents["mimeType"], "text/markdown");
    assert!(contents["text"].as_str().unwrap().starts_with("# Wharf\n"));

    let response = read(&mut wharf, 2, "guide+guide://readme/quick-start");
    let contents = &result_of(&response)["contents"];
    assert_eq!(contents.as_array().unwrap().len(), 1);
    assert_eq!(contents[0]["uri"], "guide+guide://readme/quick-start");
    assert_eq!(contents[0]["mimeType"], "text/markdown");
    assert!(
        contents[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("## Quick start\n"),
        "{contents}"
    );
}

#[test]
fn binary_resources_and_declared_uris() {
    let mut wharf = Wharf::start_with_manifests(
        &["conformance"],
        &[("conformance", CONFORMANCE_MANIFEST)],
        &[],
    );
    let response = read(&mut wharf, 1, "test://static-binary");
    let contents = &result_of(&response)["contents"][0];
    assert_eq!(contents["uri"], "test://static-binary");
    assert_eq!(contents["mimeType"], "image/png");
    assert!(
        contents["blob"]
            .as_str()
            .unwrap()
            .starts_with("iVBORw0KGgo")
    );
    let response = read(&mut wharf, 2, "test://template/42/data");
    let contents = &result_of(&response)["contents"][0];
    assert_eq!(contents["mimeType"], "application/json");
    let data: Value = serde_json::from_str(contents["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        data,
        json!({"id": "42", "templateTest": true, "data": "Data for ID: 42"})
    );
}

#[test]
fn bad_reads_name_the_uri() {
    let mut wharf = Wharf::start(&["guide", "echo"], &[]);
    for (id, uri, message) in [
        // The plugin's own form is not what clients see.
        (1, "guide://readme", "Resource not found: guide://readme"),
        // Matches the template, but the plugin has no such section.
        (
            2,
            "guide+guide://readme/nope",
            "Resource not found: guide+guide://readme/nope",
        ),
        (3, "", "Resource not found: "),
    ] {
        let response = read(&mut wharf, id, uri);
        let error = error_of(&response);
        assert_eq!(error["code"], -32602, "{response}");
        assert_eq!(error["message"], message, "{response}");
        assert_eq!(error["data"], json!({ "uri": uri }), "{response}");
    }
    still_serving(&mut wharf, 4);
    // Legacy clients get the older code for the same thing.
    let mut legacy = Wharf::start(&["guide"], &[]);
    legacy.initialize("2025-11-25");
    let response = legacy.request(json!(1), "resources/read", json!({"uri": "nope://x"}));
    let error = error_of(&response);
    assert_eq!(error["code"], -32002, "{response}");
    assert_eq!(error["message"], "Resource not found: nope://x");
}

#[test]
fn template_variables_complete() {
    let mut wharf = Wharf::start(&["guide"], &[]);
    let complete = |wharf: &mut Wharf, id, uri: &str, argument: &str, value: &str| {
        wharf.modern(
            id,
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": uri},
                   "argument": {"name": argument, "value": value}}),
        )
    };
    let template = "guide+guide://readme/{section}";
    let response = complete(&mut wharf, 1, template, "section", "qu");
    assert_eq!(
        result_of(&response)["completion"],
        json!({"values": ["quick-start"], "total": 1, "hasMore": false})
    );
    let response = complete(&mut wharf, 2, template, "chapter", "");
    let error = error_of(&response);
    assert_eq!(error["code"], -32602);
    assert_eq!(
        error["message"],
        "resource template `guide+guide://readme/{section}` has no variable `chapter`"
    );
    let response = complete(&mut wharf, 3, "guide://readme/{section}", "section", "");
    let error = error_of(&response);
    assert_eq!(error["code"], -32602);
    assert_eq!(
        error["message"],
        "Unknown resource template: guide://readme/{section}"
    );
}

#[test]
fn links_in_results_and_prompts_can_be_read_back() {
    let mut wharf = Wharf::start(&["guide"], &[]);
    let result = call(
        &mut wharf,
        1,
        "guide_search",
        json!({"query": "hot reload"}),
    );
    assert_eq!(result["isError"], false, "{result}");
    let links: Vec<&Value> = result["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["type"] == "resource_link")
        .collect();
    assert!(!links.is_empty(), "{result}");
    for (id, link) in (2..).zip(&links) {
        let uri = link["uri"].as_str().unwrap();
        assert!(uri.starts_with("guide+guide://readme/"), "{link}");
        let response = read(&mut wharf, id, uri);
        assert_eq!(result_of(&response)["contents"][0]["uri"], uri);
    }
    assert_eq!(
        result["structuredContent"]["hits"][0]["uri"],
        // Structured content is the plugin's own: only content items are rewritten.
        links[0]["uri"]
            .as_str()
            .unwrap()
            .trim_start_matches("guide+")
    );

    let response = wharf.modern(
        20,
        "prompts/get",
        json!({"name": "guide_explain", "arguments": {"section": "quick-start"}}),
    );
    let embedded = &result_of(&response)["messages"][0]["content"];
    assert_eq!(embedded["type"], "resource");
    assert_eq!(
        embedded["resource"]["uri"],
        "guide+guide://readme/quick-start"
    );
}

#[test]
fn a_listen_stream_hears_of_changed_resources() {
    let mut wharf = Wharf::start(&["misbehave", "guide"], &[]);
    let ack = wharf.listen_for(
        "watch",
        json!({"resourceSubscriptions": ["misbehave+test://clock", "nope://x"],
               "resourcesListChanged": true}),
    );
    // Only what Wharf can resolve is accepted.
    assert_eq!(
        ack["params"]["notifications"],
        json!({"resourceSubscriptions": ["misbehave+test://clock"], "resourcesListChanged": true}),
        "{ack}"
    );
    // The clock changes on every read, and its plugin asked for polling.
    let updated = wharf.next_matching(|m| m["method"] == "notifications/resources/updated");
    assert_eq!(updated["params"]["uri"], "misbehave+test://clock");
    assert_eq!(
        updated["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "watch"
    );
    // Removing a plugin changes the resource list.
    std::fs::remove_file(wharf.dir().join("guide.wasm")).unwrap();
    wharf.next_matching(|m| m["method"] == "notifications/resources/list_changed");
    let response = wharf.modern(1, "resources/list", json!({}));
    assert_eq!(
        result_of(&response)["resources"],
        json!([{"uri": "misbehave+test://clock", "name": "clock", "mimeType": "text/plain"}])
    );
}

#[test]
fn a_legacy_subscription_follows_reloads_until_unsubscribed() {
    let mut wharf = Wharf::start(&["guide"], &[]);
    wharf.initialize("2025-11-25");
    let response = wharf.request(
        json!(1),
        "resources/subscribe",
        json!({"uri": "guide+guide://readme"}),
    );
    assert_eq!(result_of(&response), &json!({}));
    let response = wharf.request(json!(2), "resources/subscribe", json!({"uri": "nope://x"}));
    assert_eq!(error_of(&response)["code"], -32002, "{response}");
    assert_eq!(
        error_of(&response)["message"],
        "Resource not found: nope://x"
    );

    // Another plugin renamed over the guide: the resource is gone.
    let partial = wharf.dir().join("guide.partial");
    std::fs::copy(plugin_file("echo"), &partial).unwrap();
    std::fs::rename(&partial, wharf.dir().join("guide.wasm")).unwrap();
    let updated = wharf.next_matching(|m| m["method"] == "notifications/resources/updated");
    assert_eq!(updated["params"]["uri"], "guide+guide://readme");
    wharf.next_matching(|m| m["method"] == "notifications/resources/list_changed");

    // Back again, then unsubscribed: no more updates.
    let response = wharf.request(
        json!(3),
        "resources/unsubscribe",
        json!({"uri": "guide+guide://readme"}),
    );
    assert_eq!(result_of(&response), &json!({}));
    std::fs::copy(plugin_file("guide"), &partial).unwrap();
    std::fs::rename(&partial, wharf.dir().join("guide.wasm")).unwrap();
    wharf.next_matching(|m| m["method"] == "notifications/resources/list_changed");
    let late = wharf.drain(Duration::from_millis(500));
    assert!(
        !late
            .iter()
            .any(|m| m["method"] == "notifications/resources/updated"),
        "{late:?}"
    );
}

#[test]
fn resources_over_http() {
    let (_wharf, addr) = serve_http(&["guide"], &[]);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read",
                      "params": modern(json!({"uri": "guide+guide://readme/http"}))});
    let response = http_client::post(
        addr,
        &[
            ("MCP-Protocol-Version", MODERN),
            ("Mcp-Method", "resources/read"),
            ("Mcp-Name", "guide+guide://readme/http"),
        ],
        &body,
    );
    let message = response.json();
    let contents = &message["result"]["contents"][0];
    assert_eq!(message["result"]["resultType"], "complete", "{message}");
    assert_eq!(contents["uri"], "guide+guide://readme/http");
    assert!(contents["text"].as_str().unwrap().starts_with("## HTTP\n"));
}
