//! Prompts from plugins: listed with their arguments, rendered with argument
//! values, completed, named like tools, and announced when the folder changes.

use serde_json::{Value, json};

use crate::harness::*;

fn prompt_names(wharf: &mut Wharf, id: i64) -> Vec<String> {
    let response = wharf.modern(id, "prompts/list", json!({}));
    result_of(&response)["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|prompt| prompt["name"].as_str().unwrap().to_string())
        .collect()
}

fn get(wharf: &mut Wharf, id: i64, name: &str, arguments: Value) -> Value {
    wharf.modern(
        id,
        "prompts/get",
        json!({"name": name, "arguments": arguments}),
    )
}

#[test]
fn prompts_are_listed_with_their_arguments() {
    let mut wharf = Wharf::start(&["textstats", "echo"], &[]);
    let response = wharf.modern(1, "prompts/list", json!({}));
    let result = result_of(&response);
    assert_eq!(result["ttlMs"], 10_000);
    assert_eq!(result["cacheScope"], "public");
    assert_eq!(
        result["prompts"],
        json!([{
            "name": "textstats_summarize",
            "title": "Summarize text",
            "description": "Asks the model to summarize a text at a chosen length.",
            "arguments": [
                {"name": "text", "description": "The text to summarize.", "required": true},
                {"name": "length", "description": "short, medium (the default) or long.", "required": false},
                {"name": "audience", "description": "Who the summary is for (default: general readers).", "required": false}
            ]
        }])
    );
    let discover = wharf.modern(2, "server/discover", json!({}));
    assert_eq!(
        result_of(&discover)["capabilities"]["prompts"]["listChanged"],
        true
    );
}

#[test]
fn a_prompt_renders_with_its_arguments() {
    let mut wharf = Wharf::start(&["textstats"], &[]);
    let response = get(
        &mut wharf,
        1,
        "textstats_summarize",
        json!({"text": "One two three.", "length": "short", "audience": "experts"}),
    );
    let result = result_of(&response);
    assert_eq!(result["resultType"], "complete");
    assert_eq!(
        result["description"],
        "Summarize 3 words in one sentence, for experts"
    );
    assert_eq!(
        result["messages"],
        json!([{
            "role": "user",
            "content": {
                "type": "text",
                "text": "Summarize the following text in one sentence, for experts. Keep its facts; add none.\n\nOne two three."
            }
        }])
    );
}

#[test]
fn bad_prompt_requests_name_the_problem() {
    let mut wharf = Wharf::start(&["textstats", "echo"], &[]);
    let cases = [
        (
            get(
                &mut wharf,
                1,
                "textstats_summarize",
                json!({"length": "short"}),
            ),
            "prompt `summarize` needs the argument `text`",
        ),
        (
            get(
                &mut wharf,
                2,
                "textstats_summarize",
                json!({"text": "x", "size": "s"}),
            ),
            "prompt `summarize` has no argument `size`",
        ),
        (
            get(&mut wharf, 3, "textstats_summarize", json!({"text": 5})),
            "prompt argument `text` must be a string, not 5",
        ),
        (
            get(
                &mut wharf,
                4,
                "textstats_summarize",
                json!({"text": "x", "length": "huge"}),
            ),
            "Invalid arguments for prompt `textstats_summarize`: `length` must be short, medium or long, not `huge`",
        ),
        (
            get(&mut wharf, 5, "summarize", json!({"text": "x"})),
            "Unknown prompt: summarize",
        ),
    ];
    for (response, message) in cases {
        let error = error_of(&response);
        assert_eq!(error["code"], -32602, "{response}");
        assert_eq!(error["message"], message, "{response}");
    }
    still_serving(&mut wharf, 6);
}

#[test]
fn prompt_arguments_complete() {
    let mut wharf = Wharf::start(&["textstats"], &[]);
    let complete = |wharf: &mut Wharf, id, argument: &str, value: &str| {
        wharf.modern(
            id,
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "textstats_summarize"},
                   "argument": {"name": argument, "value": value}}),
        )
    };
    let response = complete(&mut wharf, 1, "audience", "e");
    assert_eq!(
        result_of(&response)["completion"],
        json!({"values": ["executives", "experts"], "total": 2, "hasMore": false})
    );
    let response = complete(&mut wharf, 2, "text", "");
    assert_eq!(result_of(&response)["completion"]["values"], json!([]));
    let response = complete(&mut wharf, 3, "colour", "r");
    let error = error_of(&response);
    assert_eq!(error["code"], -32602);
    assert_eq!(
        error["message"],
        "prompt `textstats_summarize` has no argument `colour`"
    );
}

#[test]
fn prompts_follow_the_naming_rule() {
    let mut wharf = Wharf::start_with_manifests(
        &["conformance", "textstats"],
        &[("conformance", "[names]\nprefix = false\n")],
        &[],
    );
    assert_eq!(
        prompt_names(&mut wharf, 1),
        [
            "test_input_required_result_prompt",
            "test_prompt_with_arguments",
            "test_prompt_with_embedded_resource",
            "test_prompt_with_image",
            "test_simple_prompt",
            "textstats_summarize"
        ]
    );
    let response = get(
        &mut wharf,
        2,
        "test_prompt_with_embedded_resource",
        json!({"resourceUri": "test://x"}),
    );
    let messages = &result_of(&response)["messages"];
    assert_eq!(
        messages[0]["content"],
        json!({"type": "resource", "resource": {
            "uri": "test://x", "mimeType": "text/plain",
            "text": "Embedded resource content for testing."}})
    );
    assert_eq!(
        messages[1]["content"]["text"],
        "Please process the embedded resource above."
    );
}

#[test]
fn a_new_plugin_with_prompts_is_announced() {
    let mut wharf = Wharf::start(&["echo"], &[]);
    let ack = wharf.listen_for(
        "sub",
        json!({"toolsListChanged": true, "promptsListChanged": true}),
    );
    assert_eq!(
        ack["params"]["notifications"]["promptsListChanged"], true,
        "{ack}"
    );
    assert_eq!(prompt_names(&mut wharf, 1), Vec::<String>::new());
    let partial = wharf.dir().join("textstats.partial");
    std::fs::copy(plugin_file("textstats"), &partial).unwrap();
    std::fs::rename(&partial, wharf.dir().join("textstats.wasm")).unwrap();
    let tools = wharf.next_matching(|m| m["method"] == "notifications/tools/list_changed");
    assert_eq!(
        tools["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "sub"
    );
    wharf.next_matching(|m| m["method"] == "notifications/prompts/list_changed");
    assert_eq!(prompt_names(&mut wharf, 2), ["textstats_summarize"]);
}

#[test]
fn a_legacy_session_is_told_of_new_prompts() {
    let mut wharf = Wharf::start(&["echo"], &[]);
    let init = wharf.initialize("2025-11-25");
    assert_eq!(
        init["capabilities"]["prompts"]["listChanged"], true,
        "{init}"
    );
    let partial = wharf.dir().join("textstats.partial");
    std::fs::copy(plugin_file("textstats"), &partial).unwrap();
    std::fs::rename(&partial, wharf.dir().join("textstats.wasm")).unwrap();
    wharf.next_matching(|m| m["method"] == "notifications/prompts/list_changed");
    let list = wharf.request(json!(1), "prompts/list", json!({}));
    assert_eq!(
        result_of(&list)["prompts"][0]["name"],
        "textstats_summarize"
    );
}
