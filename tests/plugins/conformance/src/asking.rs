//! The suite's fixtures that ask the client: multi round-trip requests
//! (2026-07-28, `input-required-result-*`, `server-stateless`) and legacy
//! elicitation and sampling (`tools-call-*`, `elicitation-sep1034-*`,
//! `elicitation-sep1330-*`). Each question is asked as if answered at once; the
//! SDK turns a pending answer into an early return.

use serde_json::{Value, json};
use wharf_sdk::input::{self, Elicited, InputError};
use wharf_sdk::{
    Prompt, PromptOutput, ResourceOutput, ResourceTemplate, Tool, ToolError, ToolOutput, Toolbox,
};

/// What `test_input_required_result_request_state` keeps between rounds.
const STATE: &str = "conformance-round-1";

/// An object schema with one required property of `kind`.
fn one_field(name: &str, kind: &str) -> Value {
    json!({
        "type": "object",
        "properties": {name: {"type": kind}},
        "required": [name]
    })
}

/// The accepted content's `field` as text, or what the user did instead.
fn answer_text(answer: Elicited<Value>, field: &str) -> String {
    match answer {
        Elicited::Accepted(content) => content
            .get(field)
            .map(|v| {
                v.as_str()
                    .map(String::from)
                    .unwrap_or_else(|| v.to_string())
            })
            .unwrap_or_default(),
        Elicited::Declined => "(declined)".into(),
        Elicited::Cancelled => "(cancelled)".into(),
    }
}

/// `User response: <action: accept, content: {...}>`, as the legacy fixtures print it.
fn describe(answer: &Elicited<Value>) -> String {
    match answer {
        Elicited::Accepted(content) => format!("action=accept, content={content}"),
        Elicited::Declined => "action=decline".into(),
        Elicited::Cancelled => "action=cancel".into(),
    }
}

fn name_question() -> Result<Elicited<Value>, InputError> {
    input::elicit_with_schema(
        "user_name",
        "What is your name?",
        one_field("name", "string"),
    )
}

fn elicitation() -> Result<ToolOutput, ToolError> {
    let name = answer_text(name_question()?, "name");
    Ok(ToolOutput::text(format!("Hello, {name}!")))
}

fn sampling() -> Result<ToolOutput, ToolError> {
    let sampled = input::sample_text("capital_question", "What is the capital of France?", 100)?;
    Ok(ToolOutput::text(format!(
        "The model said: {}",
        sampled.text.unwrap_or_default()
    )))
}

fn list_roots() -> Result<ToolOutput, ToolError> {
    let roots = input::list_roots("client_roots")?;
    let uris: Vec<&str> = roots.iter().map(|r| r.uri.as_str()).collect();
    Ok(ToolOutput::text(format!(
        "Client roots: {}",
        uris.join(", ")
    )))
}

fn request_state() -> Result<ToolOutput, ToolError> {
    let state = input::state();
    if state.is_none() {
        input::set_state(STATE);
    }
    let confirm =
        input::elicit_with_schema("confirm", "Please confirm", one_field("ok", "boolean"))?;
    if state.as_deref() != Some(STATE) {
        return Err(ToolError::failed("the request state did not come back"));
    }
    Ok(ToolOutput::text(format!(
        "state-ok: confirmed {}",
        answer_text(confirm, "ok")
    )))
}

fn multiple_inputs() -> Result<ToolOutput, ToolError> {
    // Asked together, so all three go out in one round.
    let name = name_question();
    let greeting = input::sample_text("greeting", "Generate a greeting", 50);
    let roots = input::list_roots("client_roots");
    let (name, greeting, roots) = (name?, greeting?, roots?);
    Ok(ToolOutput::text(format!(
        "{} {} ({} roots)",
        greeting.text.unwrap_or_default(),
        answer_text(name, "name"),
        roots.len()
    )))
}

fn multi_round() -> Result<ToolOutput, ToolError> {
    let name = input::elicit_with_schema(
        "step1",
        "Step 1: What is your name?",
        one_field("name", "string"),
    )?;
    let color = input::elicit_with_schema(
        "step2",
        "Step 2: What is your favorite color?",
        one_field("color", "string"),
    )?;
    Ok(ToolOutput::text(format!(
        "{} likes {}",
        answer_text(name, "name"),
        answer_text(color, "color")
    )))
}

fn tampered_state() -> Result<ToolOutput, ToolError> {
    let confirm =
        input::elicit_with_schema("confirm", "Please confirm", one_field("ok", "boolean"))?;
    Ok(ToolOutput::text(format!(
        "confirmed {}",
        answer_text(confirm, "ok")
    )))
}

/// Asks for a name by elicitation, or by sampling when the client cannot elicit.
fn capabilities() -> Result<ToolOutput, ToolError> {
    match name_question() {
        Err(InputError::Unsupported(_)) => {
            let sampled = input::sample_text("name_by_sampling", "Suggest a name", 20)?;
            Ok(ToolOutput::text(format!(
                "Sampled name: {}",
                sampled.text.unwrap_or_default()
            )))
        }
        answer => Ok(ToolOutput::text(format!(
            "Hello, {}!",
            answer_text(answer?, "name")
        ))),
    }
}

fn missing_capability() -> Result<ToolOutput, ToolError> {
    let sampled = input::sample_text("needs_sampling", "Say something", 20)?;
    Ok(ToolOutput::text(sampled.text.unwrap_or_default()))
}

/// Legacy `test_elicitation`: the message comes from the arguments.
fn legacy_elicitation(args: Value) -> Result<ToolOutput, ToolError> {
    let message = args["message"]
        .as_str()
        .unwrap_or("Please provide your information");
    let schema = json!({
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"}
        },
        "required": ["username", "email"]
    });
    let answer = input::elicit_with_schema("user_info", message, schema)?;
    Ok(ToolOutput::text(format!(
        "User response: <{}>",
        describe(&answer)
    )))
}

fn legacy_sampling(args: Value) -> Result<ToolOutput, ToolError> {
    let prompt = args["prompt"].as_str().unwrap_or_default();
    let sampled = input::sample_text("llm", prompt, 100)?;
    Ok(ToolOutput::text(format!(
        "LLM response: {}",
        sampled.text.unwrap_or_default()
    )))
}

fn sep1034_defaults() -> Result<ToolOutput, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {"type": "string", "description": "User status",
                       "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "description": "Verification status", "default": true}
        },
        "required": []
    });
    let answer = input::elicit_with_schema("defaults", "Please review your details", schema)?;
    Ok(ToolOutput::text(format!(
        "Elicitation completed: {}",
        describe(&answer)
    )))
}

fn sep1330_enums() -> Result<ToolOutput, ToolError> {
    let titled = |prefix: &str, titles: [&str; 3]| -> Vec<Value> {
        titles
            .iter()
            .enumerate()
            .map(|(i, title)| json!({"const": format!("{prefix}{}", i + 1), "title": title}))
            .collect()
    };
    let schema = json!({
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string",
                "oneOf": titled("value", ["First Option", "Second Option", "Third Option"])},
            "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array",
                "items": {"anyOf": titled("value", ["First Choice", "Second Choice", "Third Choice"])}}
        },
        "required": []
    });
    let answer = input::elicit_with_schema("enums", "Please choose", schema)?;
    Ok(ToolOutput::text(format!(
        "Elicitation completed: {}",
        describe(&answer)
    )))
}

/// A string argument, described.
fn string_argument(name: &str, description: &str) -> Value {
    json!({
        "type": "object",
        "properties": {name: {"type": "string", "description": description}},
        "required": [name]
    })
}

fn message_argument() -> Value {
    string_argument("message", "The message to show the user")
}

fn prompt_argument() -> Value {
    string_argument("prompt", "The prompt to send to the LLM")
}

/// A fixture tool without arguments.
type Fixture = fn() -> Result<ToolOutput, ToolError>;

/// Adds the asking tools and prompt to `toolbox`.
pub fn add(toolbox: Toolbox) -> Toolbox {
    let plain: [(&str, Fixture, &str); 11] = [
        (
            "test_input_required_result_elicitation",
            elicitation,
            "Asks the user's name (MRTR)",
        ),
        (
            "test_input_required_result_sampling",
            sampling,
            "Asks the client's model (MRTR)",
        ),
        (
            "test_input_required_result_list_roots",
            list_roots,
            "Asks for the client's roots (MRTR)",
        ),
        (
            "test_input_required_result_request_state",
            request_state,
            "Keeps request state across rounds",
        ),
        (
            "test_input_required_result_multiple_inputs",
            multiple_inputs,
            "Asks three questions in one round",
        ),
        (
            "test_input_required_result_multi_round",
            multi_round,
            "Asks two questions in two rounds",
        ),
        (
            "test_input_required_result_tampered_state",
            tampered_state,
            "Rejects a tampered request state",
        ),
        (
            "test_input_required_result_capabilities",
            capabilities,
            "Asks only what the client declared",
        ),
        (
            "test_missing_capability",
            missing_capability,
            "Needs the sampling capability",
        ),
        (
            "test_streaming_elicitation",
            elicitation,
            "Elicits through input_required, never a request",
        ),
        (
            "test_elicitation_sep1034_defaults",
            sep1034_defaults,
            "Elicits with default values (SEP-1034)",
        ),
    ];
    let mut toolbox = plain
        .into_iter()
        .fold(toolbox, |toolbox, (name, run, description)| {
            toolbox.with(Tool::new(name, move |()| run()).description(description))
        });
    toolbox = toolbox
        .with(
            Tool::new("test_elicitation_sep1330_enums", |()| sep1330_enums())
                .description("Elicits with every enum form (SEP-1330)"),
        )
        .with(
            Tool::with_input_schema("test_elicitation", message_argument, legacy_elicitation)
                .description("Requests user input (elicitation) from the client"),
        )
        .with(
            Tool::with_input_schema("test_sampling", prompt_argument, legacy_sampling)
                .description("Requests LLM sampling from the client"),
        );
    let toolbox = toolbox.template(
        // Not one of the suite's fixtures: Wharf's own test of resources/read
        // asking the client.
        ResourceTemplate::new("test://asking/{topic}", "asking", |vars| {
            let topic = vars.require("topic")?;
            let answer = input::elicit_with_schema(
                "detail",
                &format!("Which detail of {topic}?"),
                one_field("detail", "string"),
            )?;
            Ok(ResourceOutput::text(format!(
                "{topic}: {}",
                answer_text(answer, "detail")
            )))
        }),
    );
    toolbox.prompt(
        Prompt::new("test_input_required_result_prompt", |_| {
            let answer = input::elicit_with_schema(
                "user_context",
                "What context should the prompt use?",
                one_field("context", "string"),
            )?;
            Ok(PromptOutput::new().user(format!(
                "Use this context: {}",
                answer_text(answer, "context")
            )))
        })
        .description("A prompt that asks the user for context first (MRTR)"),
    )
}
