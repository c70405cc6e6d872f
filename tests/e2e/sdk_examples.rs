//! The TypeScript and Python SDKs end to end: `plugins/ts-notes` and
//! `plugins/py-notes` (built by `cargo xtask examples`) are the same notebook, one
//! per SDK, so every test runs against both. Every primitive goes through the real
//! binary: tools with structured output, is-error results and failures, progress,
//! logs and configuration; a prompt with completion; a resource and a template
//! with completion; and questions to the client, in three rounds with a 2026-07-28
//! client and as real server-to-client requests in a legacy session.

use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::*;

/// The examples written with the TypeScript and the Python SDK.
const SDK_EXAMPLES: [&str; 2] = ["ts-notes", "py-notes"];

fn tool(example: &str, name: &str) -> String {
    format!("{example}_{name}")
}

/// Serves `example` alone, with a manifest holding `config` if given.
fn serve(example: &str, config: Option<&str>) -> Wharf {
    match config {
        Some(config) => Wharf::start_with_manifests(&[example], &[(example, config)], &[]),
        None => Wharf::start(&[example], &[]),
    }
}

#[test]
fn tools_prompts_and_resources_are_listed_with_schemas_from_the_sdk() {
    for example in SDK_EXAMPLES {
        let mut wharf = serve(example, None);
        let response = wharf.modern(1, "tools/list", json!({}));
        let tools = result_of(&response)["tools"].as_array().unwrap().clone();
        let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        // Listed by name.
        let expected: Vec<String> = ["draft", "get", "reindex", "roots", "search"]
            .iter()
            .map(|name| tool(example, name))
            .collect();
        assert_eq!(names, expected, "{example}");

        let search = &tools[4];
        assert_eq!(search["title"], "Search notes", "{example}");
        assert_eq!(
            search["description"], "Finds the notes that mention the words of a query, best first.",
            "{example}"
        );
        assert_eq!(
            search["inputSchema"],
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string",
                              "description": "Words to look for in titles, bodies and tags."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5,
                              "description": "At most this many hits."}
                },
                "required": ["query"]
            }),
            "{example}"
        );
        let hit = &search["outputSchema"]["properties"]["hits"]["items"];
        assert_eq!(
            hit["required"],
            json!(["id", "title", "score"]),
            "{example}"
        );
        assert_eq!(
            hit["properties"]["score"],
            json!({"type": "integer", "description": "How many of the query's words it mentions."}),
            "{example}"
        );
        assert_eq!(search["annotations"]["readOnlyHint"], true, "{example}");
        assert_eq!(tools[2]["annotations"]["idempotentHint"], true, "{example}");
        assert!(tools[3]["outputSchema"].is_null(), "{example}");
        assert_eq!(
            tools[1]["inputSchema"]["properties"]["id"]["description"],
            "The note's id, such as `groceries`.",
            "{example}"
        );

        let response = wharf.modern(2, "prompts/list", json!({}));
        assert_eq!(
            result_of(&response)["prompts"],
            json!([{
                "name": tool(example, "review"),
                "title": "Review a note",
                "description": "Asks the model to review one note.",
                "arguments": [
                    {"name": "id", "description": "The note to review.", "required": true},
                    {"name": "focus", "description": "What to pay attention to (optional).",
                     "required": false}
                ]
            }]),
            "{example}"
        );
        let response = wharf.modern(3, "resources/list", json!({}));
        let resources = &result_of(&response)["resources"];
        assert_eq!(
            resources.as_array().unwrap().len(),
            1,
            "{example}: {resources}"
        );
        assert_eq!(resources[0]["uri"], format!("{example}+notes://index"));
        assert_eq!(resources[0]["title"], "All notes");
        assert_eq!(
            resources[0]["description"],
            "The list of notes, with links."
        );
        assert_eq!(resources[0]["mimeType"], "text/markdown");
        let response = wharf.modern(4, "resources/templates/list", json!({}));
        let templates = &result_of(&response)["resourceTemplates"];
        assert_eq!(
            templates.as_array().unwrap().len(),
            1,
            "{example}: {templates}"
        );
        assert_eq!(
            templates[0]["uriTemplate"],
            format!("{example}+notes://note/{{id}}")
        );
        assert_eq!(templates[0]["description"], "One note, as Markdown.");
    }
}

#[test]
fn tools_return_structured_output_links_and_errors() {
    for example in SDK_EXAMPLES {
        let mut wharf = serve(example, None);
        let search = tool(example, "search");
        let result = call(
            &mut wharf,
            1,
            &search,
            json!({"query": "Book home", "limit": 2}),
        );
        let hits = json!({"hits": [
            {"id": "reading", "title": "Reading list", "score": 2},
            {"id": "groceries", "title": "Groceries", "score": 1}
        ]});
        assert_eq!(result["structuredContent"], hits, "{example}: {result}");
        assert_eq!(
            serde_json::from_str::<Value>(first_text(&result)).unwrap(),
            hits,
            "{example}: the text is the structured content as JSON"
        );
        assert_eq!(result["isError"], false, "{example}");

        // A result with isError: the model may correct its query.
        let result = call(&mut wharf, 2, &search, json!({"query": "   "}));
        assert_eq!(result["isError"], true, "{example}: {result}");
        assert_eq!(
            first_text(&result),
            "The query is empty: give at least one word."
        );

        // Wharf refuses what the input schema rules out before the plugin runs.
        let result = call(&mut wharf, 3, &search, json!({"query": "x", "limit": 0}));
        assert_eq!(result["isError"], true, "{example}: {result}");
        assert_eq!(
            first_text(&result),
            format!(
                "Invalid arguments for tool `{search}`: at /limit: 0 is less than the minimum of 1"
            )
        );

        let get = tool(example, "get");
        let result = call(&mut wharf, 4, &get, json!({"id": "groceries"}));
        assert_eq!(
            result["content"],
            json!([
                {"type": "text",
                 "text": "# Groceries\n\nMilk, eggs, bread and coffee.\n\nTags: home\n"},
                {"type": "resource_link", "uri": format!("{example}+notes://note/groceries"),
                 "name": "groceries", "title": "Groceries", "mimeType": "text/markdown"}
            ]),
            "{example}"
        );
        let result = call(&mut wharf, 5, &get, json!({"id": "nope"}));
        assert_eq!(result["isError"], true, "{example}");
        assert_eq!(first_text(&result), "No note with id \"nope\".");

        let response = wharf.modern(
            6,
            "tools/call",
            json!({"name": tool(example, "nope"), "arguments": {}}),
        );
        assert_eq!(
            error_of(&response)["message"],
            format!("Unknown tool: {example}_nope")
        );
    }
}

#[test]
fn progress_logs_and_configuration_reach_the_client() {
    for example in SDK_EXAMPLES {
        let mut wharf = serve(example, Some("[config]\nnotebook = \"Work\"\n"));
        let reindex = tool(example, "reindex");
        let mut params = modern(json!({"name": reindex, "arguments": {}}));
        params["_meta"]["progressToken"] = json!("tok");
        params["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
        wharf.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}));
        let response = wharf.response(&json!(1));
        assert_eq!(
            first_text(result_of(&response)),
            "Indexed 3 notes in Work.",
            "{example}: {response}"
        );
        let messages = wharf.drain(Duration::from_millis(100));
        let logs: Vec<&str> = messages
            .iter()
            .filter(|m| m["method"] == "notifications/message")
            .map(|m| {
                assert_eq!(m["params"]["logger"], example, "{m}");
                assert_eq!(m["params"]["level"], "info", "{m}");
                m["params"]["data"].as_str().unwrap()
            })
            .collect();
        assert_eq!(
            logs,
            [
                "indexed groceries",
                "indexed wharf-ideas",
                "indexed reading"
            ],
            "{example}"
        );
        let progress: Vec<&Value> = messages
            .iter()
            .filter(|m| m["method"] == "notifications/progress")
            .map(|m| &m["params"])
            .collect();
        // The first report and the last (which reaches the total) always go out.
        let first = progress.first().expect("progress");
        assert_eq!(first["progressToken"], "tok", "{example}");
        assert_eq!(first["progress"], 1.0, "{example}");
        assert_eq!(first["total"], 3.0, "{example}");
        assert_eq!(first["message"], "indexed groceries", "{example}");
        assert_eq!(progress.last().unwrap()["progress"], 3.0, "{example}");

        // The configuration can turn the tool off: a failure the client sees.
        let mut wharf = serve(example, Some("[config]\nindex = \"off\"\n"));
        let result = call(&mut wharf, 2, &reindex, json!({}));
        assert_eq!(result["isError"], true, "{example}: {result}");
        assert_eq!(
            first_text(&result),
            format!("Tool `{reindex}` failed: indexing is turned off (configuration `index`)")
        );
    }
}

fn complete(wharf: &mut Wharf, id: i64, reference: Value, argument: &str, value: &str) -> Value {
    let response = wharf.modern(
        id,
        "completion/complete",
        json!({"ref": reference, "argument": {"name": argument, "value": value}}),
    );
    result_of(&response)["completion"]["values"].clone()
}

#[test]
fn prompts_resources_and_completions() {
    for example in SDK_EXAMPLES {
        let mut wharf = serve(example, None);
        let review = tool(example, "review");
        let response = wharf.modern(
            1,
            "prompts/get",
            json!({"name": review, "arguments": {"id": "groceries", "focus": "tone"}}),
        );
        let note_uri = format!("{example}+notes://note/groceries");
        assert_eq!(
            result_of(&response)["description"],
            "Review of Groceries",
            "{example}: {response}"
        );
        assert_eq!(
            result_of(&response)["messages"],
            json!([
                {"role": "user", "content": {"type": "resource", "resource": {
                    "uri": note_uri, "mimeType": "text/markdown",
                    "text": "# Groceries\n\nMilk, eggs, bread and coffee.\n\nTags: home\n"}}},
                {"role": "user", "content": {"type": "text",
                    "text": "Review the note above, focusing on tone."}}
            ]),
            "{example}"
        );
        let response = wharf.modern(
            2,
            "prompts/get",
            json!({"name": review, "arguments": {"id": "nope"}}),
        );
        let error = error_of(&response);
        assert_eq!(error["code"], -32602, "{example}: {response}");
        assert_eq!(
            error["message"],
            format!("Invalid arguments for prompt `{review}`: no note with id \"nope\"")
        );
        assert_eq!(
            complete(
                &mut wharf,
                3,
                json!({"type": "ref/prompt", "name": review}),
                "id",
                "w"
            ),
            json!(["wharf-ideas"]),
            "{example}"
        );

        let index = format!("{example}+notes://index");
        let response = wharf.modern(4, "resources/read", json!({"uri": index}));
        assert_eq!(
            result_of(&response)["contents"],
            json!([{"uri": index, "mimeType": "text/markdown", "text":
                "# Notes\n\n- [Groceries](notes://note/groceries)\n\
                 - [Wharf ideas](notes://note/wharf-ideas)\n\
                 - [Reading list](notes://note/reading)\n"}]),
            "{example}"
        );
        let reading = format!("{example}+notes://note/reading");
        let response = wharf.modern(5, "resources/read", json!({"uri": reading}));
        assert_eq!(
            result_of(&response)["contents"],
            json!([{"uri": reading, "mimeType": "text/markdown", "text":
                "# Reading list\n\nThe Rust book, then a book on WebAssembly.\n\nTags: home, books\n"}]),
            "{example}"
        );
        let missing = format!("{example}+notes://note/nope");
        let response = wharf.modern(6, "resources/read", json!({"uri": missing}));
        assert_eq!(
            error_of(&response)["message"],
            format!("Resource not found: {missing}"),
            "{example}"
        );
        assert_eq!(
            complete(
                &mut wharf,
                7,
                json!({"type": "ref/resource", "uri": format!("{example}+notes://note/{{id}}")}),
                "id",
                "r"
            ),
            json!(["reading"]),
            "{example}"
        );
    }
}

/// A 2026-07-28 `tools/call` of `name` with `extra` params and these client
/// capabilities.
fn call_round(wharf: &mut Wharf, id: i64, name: &str, arguments: Value, extra: Value) -> Value {
    let mut params = json!({"name": name, "arguments": arguments, "_meta": meta()});
    params["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"elicitation": {}, "sampling": {}, "roots": {}});
    for (key, value) in extra.as_object().unwrap() {
        params[key] = value.clone();
    }
    wharf.request(json!(id), "tools/call", params)
}

#[test]
fn asking_the_client_takes_rounds_with_a_modern_client() {
    for example in SDK_EXAMPLES {
        let mut wharf = serve(example, None);
        let draft = tool(example, "draft");
        let topic = json!({"topic": "tea"});

        // Round 1: the form.
        let first = call_round(&mut wharf, 1, &draft, topic.clone(), json!({}));
        let result = result_of(&first);
        assert_eq!(result["resultType"], "input_required", "{example}: {first}");
        let form = &result["inputRequests"]["details"];
        assert_eq!(form["method"], "elicitation/create", "{example}: {first}");
        assert_eq!(
            form["params"]["message"],
            "A note about tea: its title and tag?"
        );
        assert_eq!(
            form["params"]["requestedSchema"]["properties"]["tag"]["enum"],
            json!(["home", "work", "books"]),
            "{example}"
        );
        assert_eq!(
            form["params"]["requestedSchema"]["required"],
            json!(["title", "tag"])
        );
        let state = result["requestState"].clone();

        // Round 2: the form is answered; now the model is asked.
        let details = json!({"action": "accept", "content": {"title": "Tea", "tag": "home"}});
        let second = call_round(
            &mut wharf,
            2,
            &draft,
            topic.clone(),
            json!({"inputResponses": {"details": details}, "requestState": state}),
        );
        let result = result_of(&second);
        assert_eq!(
            result["resultType"], "input_required",
            "{example}: {second}"
        );
        let sampling = &result["inputRequests"]["body"];
        assert_eq!(sampling["method"], "sampling/createMessage", "{example}");
        assert_eq!(
            sampling["params"]["messages"][0]["content"]["text"],
            "Write a two-sentence note titled \"Tea\" about tea."
        );
        assert_eq!(sampling["params"]["maxTokens"], 200);

        // Round 3: done.
        let body = json!({"role": "assistant", "model": "m",
                          "content": {"type": "text", "text": "Green tea is calm."}});
        let third = call_round(
            &mut wharf,
            3,
            &draft,
            topic.clone(),
            json!({"inputResponses": {"body": body},
                   "requestState": result["requestState"]}),
        );
        let result = result_of(&third);
        assert_eq!(result["resultType"], "complete", "{example}: {third}");
        assert_eq!(first_text(result), "# Tea [home]\n\nGreen tea is calm.");

        // A declined form ends the call in one more round.
        let declined = call_round(
            &mut wharf,
            4,
            &draft,
            topic.clone(),
            json!({"inputResponses": {"details": {"action": "decline"}}, "requestState": state}),
        );
        assert_eq!(
            first_text(result_of(&declined)),
            "Draft declined.",
            "{example}"
        );

        // Roots: answered, then refused for a client without the capability.
        let roots = tool(example, "roots");
        let first = call_round(&mut wharf, 5, &roots, json!({}), json!({}));
        let result = result_of(&first);
        assert_eq!(
            result["inputRequests"]["roots"]["method"], "roots/list",
            "{example}: {first}"
        );
        let answered = call_round(
            &mut wharf,
            6,
            &roots,
            json!({}),
            json!({"inputResponses": {"roots": {"roots": [
                {"uri": "file:///home/ada/notes", "name": "notes"},
                {"uri": "file:///tmp"}]}},
                   "requestState": result["requestState"]}),
        );
        assert_eq!(
            first_text(result_of(&answered)),
            "notes: file:///home/ada/notes\nfile:///tmp",
            "{example}"
        );
        let refused = wharf.modern(7, "tools/call", json!({"name": roots, "arguments": {}}));
        assert_eq!(
            error_of(&refused),
            &json!({"code": -32021,
                    "message": "Server requires the roots capability for this request",
                    "data": {"requiredCapabilities": {"roots": {}}}}),
            "{example}"
        );
    }
}

#[test]
fn a_legacy_session_answers_real_requests_mid_call() {
    for example in SDK_EXAMPLES {
        let mut wharf = serve(example, None);
        wharf.request(
            json!("init"),
            "initialize",
            json!({"protocolVersion": "2025-11-25",
                   "capabilities": {"elicitation": {}, "sampling": {}},
                   "clientInfo": {"name": "wharf-e2e", "version": "0"}}),
        );
        wharf.notify("notifications/initialized", json!({}));
        wharf.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": tool(example, "draft"), "arguments": {"topic": "tea"}}}));
        let form = wharf.next_matching(|m| m["method"] == "elicitation/create");
        assert_eq!(
            form["params"]["message"], "A note about tea: its title and tag?",
            "{example}"
        );
        wharf.send(json!({"jsonrpc": "2.0", "id": form["id"], "result":
            {"action": "accept", "content": {"title": "Chai", "tag": "work"}}}));
        let sampling = wharf.next_matching(|m| m["method"] == "sampling/createMessage");
        assert_eq!(
            sampling["params"]["messages"][0]["content"]["text"],
            "Write a two-sentence note titled \"Chai\" about tea.",
            "{example}"
        );
        wharf.send(json!({"jsonrpc": "2.0", "id": sampling["id"], "result":
            {"role": "assistant", "model": "m", "content": {"type": "text", "text": "Spiced."}}}));
        let response = wharf.response(&json!(1));
        assert_eq!(
            first_text(result_of(&response)),
            "# Chai [work]\n\nSpiced.",
            "{example}"
        );
    }
}
