//! The fixtures of the suite's tasks scenarios (`io.modelcontextprotocol/tasks`,
//! SEP-2663), as its reference server names them. Which of them answer with a
//! task is said in two ways, to exercise both: `slow_compute` and
//! `multi_input` by their SDK hint (`Tool::task`), the rest by
//! `conformance.toml`'s `[tasks]`.

use std::time::Duration;

use serde_json::{Value, json};
use wharf_sdk::input::{self, Elicited};
use wharf_sdk::{TaskSupport, Tool, ToolError, ToolOutput, Toolbox};

/// An object schema of string `properties`, all required.
fn strings(properties: &[&str]) -> Value {
    let map: serde_json::Map<String, Value> = properties
        .iter()
        .map(|name| (name.to_string(), json!({"type": "string"})))
        .collect();
    json!({"type": "object", "properties": map, "required": properties})
}

fn greet(args: Value) -> Result<ToolOutput, ToolError> {
    let name = args["name"].as_str().unwrap_or("World");
    Ok(ToolOutput::text(format!("Hello, {name}!")))
}

/// Sleeps `seconds` (the guest sleeps; a cancelled task stops it), then
/// reports.
fn slow_compute(args: Value) -> Result<ToolOutput, ToolError> {
    let seconds = args["seconds"].as_f64().unwrap_or(0.0).max(0.0);
    let label = args["label"].as_str().unwrap_or("job");
    std::thread::sleep(Duration::from_secs_f64(seconds));
    Ok(ToolOutput::text(format!("Computed {label} in {seconds} s")))
}

/// A tool execution error (`isError`) after about a second.
fn failing_job() -> Result<ToolOutput, ToolError> {
    std::thread::sleep(Duration::from_secs(1));
    Err(ToolError::Failed("the job failed on purpose".into()))
}

/// A JSON-RPC error: it needs the client's roots, which no tasks scenario
/// declares, so Wharf answers -32021 and the task fails with it.
fn protocol_error_job() -> Result<ToolOutput, ToolError> {
    let roots = input::list_roots("roots")?;
    Ok(ToolOutput::text(format!("{} roots", roots.len())))
}

fn accepted(answer: &Elicited<Value>) -> bool {
    matches!(answer, Elicited::Accepted(_))
}

/// Asks for confirmation, inside the task.
fn confirm_delete(args: Value) -> Result<ToolOutput, ToolError> {
    let file = args["filename"].as_str().unwrap_or("the file");
    let schema = json!({
        "type": "object",
        "properties": {"confirm": {"type": "boolean"}},
        "required": ["confirm"]
    });
    let answer = input::elicit_with_schema("confirm", &format!("Delete {file}?"), schema)?;
    let confirmed = match &answer {
        Elicited::Accepted(content) => content["confirm"].as_bool().unwrap_or(false),
        _ => false,
    };
    Ok(ToolOutput::text(if confirmed {
        format!("Deleted {file}")
    } else {
        format!("Kept {file}")
    }))
}

/// Two questions at once: both are outstanding in one round.
fn multi_input() -> Result<ToolOutput, ToolError> {
    let first = input::elicit_with_schema("first", "First input?", strings(&["name"]));
    let second = input::elicit_with_schema("second", "Second input?", strings(&["name"]));
    let (first, second) = (first?, second?);
    Ok(ToolOutput::text(format!(
        "Got {} of 2 answers",
        [accepted(&first), accepted(&second)]
            .into_iter()
            .filter(|&a| a)
            .count()
    )))
}

/// Asks the user's name at once (a multi round-trip before any task), then
/// works longer than `[tasks] after-ms`, so its last round becomes a task.
fn tool_with_task() -> Result<ToolOutput, ToolError> {
    let answer = input::elicit_with_schema("user_name", "What is your name?", strings(&["name"]))?;
    let name = match answer {
        Elicited::Accepted(content) => content["name"].as_str().unwrap_or("").to_string(),
        Elicited::Declined => "(declined)".into(),
        Elicited::Cancelled => "(cancelled)".into(),
    };
    std::thread::sleep(Duration::from_millis(1500));
    Ok(ToolOutput::text(format!("Hello, {name}!")))
}

/// Adds the tasks fixtures to `toolbox`.
pub fn add(toolbox: Toolbox) -> Toolbox {
    toolbox
        .with(
            Tool::with_input_schema("greet", || strings(&["name"]), greet)
                .description("Says hello at once (never a task)"),
        )
        .with(
            Tool::with_input_schema(
                "slow_compute",
                || {
                    json!({
                        "type": "object",
                        "properties": {
                            "seconds": {"type": "number", "minimum": 0},
                            "label": {"type": "string"}
                        },
                        "required": ["seconds"]
                    })
                },
                slow_compute,
            )
            .task(TaskSupport::Optional)
            .description("Works for `seconds`, as a task"),
        )
        .with(
            Tool::new("failing_job", |()| failing_job())
                .description("Ends in a tool execution error after a second (task required)"),
        )
        .with(
            Tool::new("protocol_error_job", |()| protocol_error_job())
                .description("Ends in a JSON-RPC error (a task)"),
        )
        .with(
            Tool::with_input_schema("confirm_delete", || strings(&["filename"]), confirm_delete)
                .description("Asks for confirmation inside its task"),
        )
        .with(
            Tool::new("multi_input", |()| multi_input())
                .task(TaskSupport::Optional)
                .description("Asks two questions at once inside its task"),
        )
        .with(
            Tool::new("test_tool_with_task", |()| tool_with_task())
                .description("Asks a name, then becomes a task"),
        )
}
