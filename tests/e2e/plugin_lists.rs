//! A plugin says its lists changed (`wharf:plugin/lists.changed`): Wharf
//! lists it again and tells clients, as for a file change. The conformance
//! fixture's trigger tools flip a tool and a prompt in and out of its lists
//! (their state is a file in a folder its manifest grants).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::*;

/// The fixture with its manifest and its (empty) state folder.
fn fixture() -> Wharf {
    let dir = plugin_dir(&["conformance"]);
    std::fs::create_dir(dir.path().join("state")).unwrap();
    std::fs::write(
        dir.path().join("conformance.toml"),
        "[[dir]]\nhost = \"state\"\nguest = \"/state\"\nmode = \"read-write\"\n",
    )
    .unwrap();
    let mut wharf = Wharf::start_in(dir.path(), &[]);
    wharf.keep_dir(dir);
    wharf
}

fn names(list: &Value, key: &str) -> Vec<String> {
    list[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

fn is_change(method: &'static str) -> impl Fn(&Value) -> bool {
    move |m: &Value| m["method"] == method
}

#[test]
fn a_listen_stream_hears_of_the_change_and_lists_show_it() {
    let mut wharf = fixture();
    wharf.listen_for(
        "L1",
        json!({"toolsListChanged": true, "promptsListChanged": true}),
    );
    let before = wharf.modern(1, "tools/list", json!({}));
    assert!(!names(result_of(&before), "tools").contains(&"conformance_test_dynamic_tool".into()));

    let result = call(
        &mut wharf,
        2,
        "conformance_test_trigger_tool_change",
        json!({}),
    );
    assert_eq!(first_text(&result), "Mutation triggered");
    let note = wharf.next_matching(is_change("notifications/tools/list_changed"));
    assert_eq!(
        note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "L1"
    );
    let after = wharf.modern(3, "tools/list", json!({}));
    assert!(names(result_of(&after), "tools").contains(&"conformance_test_dynamic_tool".into()));
    let dynamic = call(&mut wharf, 4, "conformance_test_dynamic_tool", json!({}));
    assert_eq!(
        first_text(&dynamic),
        "This tool appeared after a list change."
    );
    wharf.wait_for_log("plugin listed again");

    // Prompts, and only prompts: the tool list stays as it is.
    let result = call(
        &mut wharf,
        5,
        "conformance_test_trigger_prompt_change",
        json!({}),
    );
    assert_eq!(first_text(&result), "Mutation triggered");
    wharf.next_matching(is_change("notifications/prompts/list_changed"));
    let prompts = wharf.modern(6, "prompts/list", json!({}));
    assert!(
        names(result_of(&prompts), "prompts").contains(&"conformance_test_dynamic_prompt".into())
    );
    let unchanged = wharf
        .drain(Duration::from_millis(700))
        .into_iter()
        .filter(|m| m["method"] == "notifications/tools/list_changed")
        .count();
    assert_eq!(unchanged, 0, "the tools did not change");

    // Back again: the tool is gone.
    call(
        &mut wharf,
        7,
        "conformance_test_trigger_tool_change",
        json!({}),
    );
    wharf.next_matching(is_change("notifications/tools/list_changed"));
    let last = wharf.modern(8, "tools/list", json!({}));
    assert!(!names(result_of(&last), "tools").contains(&"conformance_test_dynamic_tool".into()));
}

#[test]
fn a_relisting_is_audited_and_counted_as_a_reload() {
    let dir = plugin_dir(&["conformance"]);
    std::fs::create_dir(dir.path().join("state")).unwrap();
    std::fs::write(
        dir.path().join("conformance.toml"),
        "[[dir]]\nhost = \"state\"\nguest = \"/state\"\nmode = \"read-write\"\n",
    )
    .unwrap();
    let audit = tempfile::NamedTempFile::new().unwrap();
    let path = audit.path().to_str().unwrap();
    let mut wharf = Wharf::start_in(dir.path(), &["--audit-log", path, "--http", "127.0.0.1:0"]);
    wharf.keep_dir(dir);
    let addr = wharf.http_addr();
    let reloads = || {
        let metrics = crate::http_client::send(addr, "GET", "/metrics", &[], b"").text();
        metrics
            .lines()
            .find_map(|l| l.strip_prefix("wharf_reloads_total "))
            .unwrap()
            .parse::<u64>()
            .unwrap()
    };
    assert_eq!(reloads(), 0);
    let tool = "conformance_test_trigger_tool_change";
    let called = crate::http_client::post(
        addr,
        &[
            ("MCP-Protocol-Version", MODERN),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", tool),
        ],
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": modern(json!({"name": tool, "arguments": {}}))}),
    );
    assert_eq!(first_text(result_of(&called.json())), "Mutation triggered");
    wharf.wait_for_log("plugin lists swapped in");
    assert_eq!(reloads(), 1);
    let deadline = Instant::now() + PATIENCE;
    let line = loop {
        let text = std::fs::read_to_string(audit.path()).unwrap();
        if let Some(line) = text.lines().find(|l| l.contains("\"relisted\"")) {
            break serde_json::from_str::<Value>(line).unwrap();
        }
        assert!(Instant::now() < deadline, "no relisted line in:\n{text}");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(line["event"], "plugin", "{line}");
    assert_eq!(line["change"], "relisted", "{line}");
    assert_eq!(line["plugin"], "conformance", "{line}");
    assert_eq!(line["digest"].as_str().unwrap().len(), 64, "{line}");
    assert!(
        line["file"].as_str().unwrap().ends_with("conformance.wasm"),
        "{line}"
    );
    assert!(
        wharf.stderr().contains("tools_changed=true"),
        "{}",
        wharf.stderr()
    );
}

#[test]
fn a_legacy_session_gets_list_changed() {
    let mut wharf = fixture();
    wharf.initialize("2025-11-25");
    let response = wharf.request(
        json!(1),
        "tools/call",
        json!({"name": "conformance_test_trigger_tool_change", "arguments": {}}),
    );
    assert_eq!(first_text(result_of(&response)), "Mutation triggered");
    wharf.next_matching(is_change("notifications/tools/list_changed"));
    let listed = wharf.request(json!(2), "tools/list", json!({}));
    assert!(names(result_of(&listed), "tools").contains(&"conformance_test_dynamic_tool".into()));
}

#[test]
fn a_plugin_calling_in_a_loop_is_listed_at_a_bounded_pace() {
    let mut wharf = fixture();
    let started = Instant::now();
    for id in 0..30 {
        call(
            &mut wharf,
            id,
            "conformance_test_trigger_tool_change",
            json!({}),
        );
    }
    // The last change lands within one gap; let it.
    std::thread::sleep(Duration::from_millis(1200));
    let elapsed = started.elapsed();
    let relistings = wharf.stderr().matches("plugin listed again").count();
    // One per 500 ms gap at most, plus the first at once.
    let bound = (elapsed.as_millis() / 500) as usize + 1;
    assert!(
        (1..=bound).contains(&relistings),
        "{relistings} re-listings in {elapsed:?} (at most {bound})"
    );
    // The server still serves, and the list is the one the file says: 30
    // flips leave it as it started.
    let listed = wharf.modern(100, "tools/list", json!({}));
    assert!(!names(result_of(&listed), "tools").contains(&"conformance_test_dynamic_tool".into()));
}

#[test]
fn a_component_that_does_not_import_lists_loads_unchanged() {
    // Built by the SDK, echo never calls `lists.changed`: its component does
    // not import the interface, as no component built before it did.
    let bytes = std::fs::read(plugin_file("echo")).unwrap();
    let needle = b"wharf:plugin/lists";
    assert!(
        !bytes.windows(needle.len()).any(|w| w == needle),
        "echo imports wharf:plugin/lists"
    );
    let mut wharf = Wharf::start(&["echo"], &[]);
    still_serving(&mut wharf, 1);
}
