//! The fixture tools of the official MCP conformance suite, for Wharf's CI.
//!
//! The suite calls fixed tool names and checks fixed payloads (those of its
//! reference server, `examples/servers/typescript/everything-server.ts` in the
//! modelcontextprotocol/conformance repository). Served with `conformance.toml`
//! (`[tools] prefix = false`) so the names reach clients unchanged. Not an example.

use std::time::Duration;

mod asking;

use serde_json::{Value, json};
use wharf_sdk::{
    Prompt, PromptArgument, PromptOutput, Resource, ResourceOutput, ResourceTemplate, Role, Tool,
    ToolError, ToolOutput, Toolbox, host,
};

/// A 1x1 PNG.
const PNG: [u8; 70] = [
    137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0,
    0, 0, 31, 21, 196, 137, 0, 0, 0, 13, 73, 68, 65, 84, 120, 218, 99, 252, 207, 192, 240, 31, 0,
    5, 5, 2, 0, 95, 200, 241, 210, 0, 0, 0, 0, 73, 69, 78, 68, 174, 66, 96, 130,
];

/// A WAV file with one silent sample.
const WAV: [u8; 44] = [
    82, 73, 70, 70, 38, 0, 0, 0, 87, 65, 86, 69, 102, 109, 116, 32, 16, 0, 0, 0, 1, 0, 1, 0, 64,
    31, 0, 0, 0, 125, 0, 0, 2, 0, 16, 0, 100, 97, 116, 97, 2, 0, 0, 0,
];

/// The suite's JSON Schema 2020-12 fixture (SEP-1613, SEP-2106), verbatim.
fn json_schema_2020_12() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    })
}

fn pause() {
    std::thread::sleep(Duration::from_millis(50));
}

fn logging() -> Result<ToolOutput, ToolError> {
    for (index, message) in [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    .into_iter()
    .enumerate()
    {
        if index > 0 {
            pause();
        }
        host::log(host::Level::Info, message);
    }
    Ok(ToolOutput::text("Tool with logging executed successfully"))
}

fn progress() -> Result<ToolOutput, ToolError> {
    for (index, step) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if index > 0 {
            pause();
        }
        host::progress(
            step,
            Some(100.0),
            Some(&format!("Completed step {step} of 100")),
        );
    }
    Ok(ToolOutput::text("Progress reported 3 times"))
}

/// Where the lists' state lives: a folder `conformance.toml` grants for
/// writing (the suite's trigger tools change the lists, and each call runs in
/// a fresh instance, so the state is a file).
const STATE: &str = "/state";

/// Whether the list `kind` (`tools` or `prompts`) is in its changed state.
fn changed(kind: &str) -> bool {
    std::path::Path::new(STATE).join(kind).exists()
}

/// `test_trigger_tool_change` / `test_trigger_prompt_change`: flips the list
/// `kind` between its two states (one more tool or prompt, or not) and tells
/// Wharf, which lists the plugin again and notifies listeners.
fn trigger(kind: &str, which: host::Lists) -> Result<ToolOutput, ToolError> {
    let marker = std::path::Path::new(STATE).join(kind);
    let flipped = if marker.exists() {
        std::fs::remove_file(&marker)
    } else {
        std::fs::write(&marker, b"changed")
    };
    if let Err(error) = flipped {
        return Ok(ToolOutput::error(format!(
            "cannot change the {kind} list: {error} (serve with conformance.toml, which grants {STATE})"
        )));
    }
    host::lists_changed(which);
    Ok(ToolOutput::text("Mutation triggered"))
}

/// Arguments of `test_header_params`: `region` also travels in the
/// `Mcp-Param-Region` header (SEP-2243), `priority` in `Mcp-Param-Priority`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct HeaderArgs {
    /// Where to run.
    #[schemars(extend("x-mcp-header" = "Region"))]
    region: String,
    /// How urgent (0, the default, says nothing). Not an `Option`: that
    /// would make its type `["integer", "null"]`, which `x-mcp-header` refuses.
    #[serde(default)]
    priority: i64,
}

fn toolbox() -> Toolbox {
    let toolbox = Toolbox::new()
        .with(
            Tool::new("test_trigger_tool_change", |()| {
                trigger("tools", host::Lists::TOOLS)
            })
            .description("Changes the tool list (adds or removes test_dynamic_tool)"),
        )
        .with(
            Tool::new("test_trigger_prompt_change", |()| {
                trigger("prompts", host::Lists::PROMPTS)
            })
            .description("Changes the prompt list (adds or removes test_dynamic_prompt)"),
        )
        .with(
            Tool::new("test_header_params", |args: HeaderArgs| {
                Ok(ToolOutput::text(match args.priority {
                    0 => format!("Region: {}", args.region),
                    priority => format!("Region: {}, priority: {priority}", args.region),
                }))
            })
            .header_param("priority", "Priority")
            .description("Echoes arguments that clients mirror in Mcp-Param-* headers (SEP-2243)"),
        );
    let toolbox = if changed("tools") {
        toolbox.with(
            Tool::new("test_dynamic_tool", |()| {
                Ok(ToolOutput::text("This tool appeared after a list change."))
            })
            .description("Listed only after test_trigger_tool_change"),
        )
    } else {
        toolbox
    };
    let toolbox = if changed("prompts") {
        toolbox.prompt(
            Prompt::new("test_dynamic_prompt", |_| {
                Ok(PromptOutput::new().user("This prompt appeared after a list change."))
            })
            .description("Listed only after test_trigger_prompt_change"),
        )
    } else {
        toolbox
    };
    toolbox
        .with(
            Tool::new("test_simple_text", |()| {
                Ok(ToolOutput::text(
                    "This is a simple text response for testing.",
                ))
            })
            .description("Tests simple text content response"),
        )
        .with(
            Tool::new("test_image_content", |()| {
                Ok(ToolOutput::image(PNG, "image/png"))
            })
            .description("Tests image content response"),
        )
        .with(
            Tool::new("test_audio_content", |()| {
                Ok(ToolOutput::audio(WAV, "audio/wav"))
            })
            .description("Tests audio content response"),
        )
        .with(
            Tool::new("test_embedded_resource", |()| {
                Ok(ToolOutput::new().with(ToolOutput::embedded_text(
                    "test://embedded-resource",
                    "text/plain",
                    "This is an embedded resource content.",
                )))
            })
            .description("Tests embedded resource content response"),
        )
        .with(
            Tool::new("test_multiple_content_types", |()| {
                Ok(ToolOutput::text("Multiple content types test:")
                    .with(ToolOutput::image_content(PNG, "image/png"))
                    .with(ToolOutput::embedded_text(
                        "test://mixed-content-resource",
                        "application/json",
                        json!({"test": "data", "value": 123}).to_string(),
                    )))
            })
            .description("Tests response with multiple content types (text, image, resource)"),
        )
        .with(
            Tool::new("test_tool_with_logging", |()| logging())
                .description("Tests tool that emits log messages during execution"),
        )
        .with(
            Tool::new("test_logging_tool", |()| {
                host::log(host::Level::Info, "Diagnostic trace logging activated");
                Ok(ToolOutput::text("Logging evaluated"))
            })
            .description("Logs one line: the client sees it only if its request set a logLevel"),
        )
        .with(
            Tool::new("test_tool_with_progress", |()| progress())
                .description("Tests tool that reports progress notifications"),
        )
        .with(
            Tool::new("test_error_handling", |()| {
                Ok(ToolOutput::error(
                    "This tool intentionally returns an error for testing",
                ))
            })
            .description("Tests error response handling"),
        )
        .with(
            Tool::with_input_schema("json_schema_2020_12_tool", json_schema_2020_12, |args| {
                Ok(ToolOutput::text(format!(
                    "JSON Schema 2020-12 tool called with: {args}"
                )))
            })
            .description(
                "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
            ),
        )
        .prompt(
            Prompt::new("test_simple_prompt", |_| {
                Ok(PromptOutput::new().user("This is a simple prompt for testing."))
            })
            .title("Simple Test Prompt")
            .description("A simple prompt without arguments"),
        )
        .prompt(
            Prompt::new("test_prompt_with_arguments", |args| {
                Ok(PromptOutput::new().user(format!(
                    "Prompt with arguments: arg1='{}', arg2='{}'",
                    args.require("arg1")?,
                    args.require("arg2")?
                )))
            })
            .title("Prompt With Arguments")
            .description("A prompt with required arguments")
            .argument(PromptArgument::required("arg1").description("First test argument"))
            .argument(PromptArgument::required("arg2").description("Second test argument")),
        )
        .prompt(
            Prompt::new("test_prompt_with_embedded_resource", |args| {
                Ok(PromptOutput::new()
                    .message(
                        Role::User,
                        ToolOutput::embedded_text(
                            args.require("resourceUri")?,
                            "text/plain",
                            "Embedded resource content for testing.",
                        ),
                    )
                    .user("Please process the embedded resource above."))
            })
            .title("Prompt With Embedded Resource")
            .description("A prompt that includes an embedded resource")
            .argument(
                PromptArgument::required("resourceUri").description("URI of the resource to embed"),
            ),
        )
        .prompt(
            Prompt::new("test_prompt_with_image", |_| {
                Ok(PromptOutput::new()
                    .message(Role::User, ToolOutput::image_content(PNG, "image/png"))
                    .user("Please analyze the image above."))
            })
            .title("Prompt With Image")
            .description("A prompt that includes image content"),
        )
        .resource(
            Resource::new("test://static-text", "static-text", || {
                Ok(ResourceOutput::text(
                    "This is the content of the static text resource.",
                ))
            })
            .title("Static Text Resource")
            .description("A static text resource for testing")
            .mime_type("text/plain"),
        )
        .resource(
            Resource::new("test://static-binary", "static-binary", || {
                Ok(ResourceOutput::blob(PNG))
            })
            .title("Static Binary Resource")
            .description("A static binary resource (image) for testing")
            .mime_type("image/png"),
        )
        .resource(
            Resource::new("test://watched-resource", "watched-resource", || {
                Ok(ResourceOutput::text("Watched resource content"))
            })
            .title("Watched Resource")
            .description("A resource for subscription tests")
            .mime_type("text/plain")
            .poll_every(Duration::from_secs(1)),
        )
        .template(
            ResourceTemplate::new("test://template/{id}/data", "template-data", |vars| {
                let id = vars.require("id")?;
                ResourceOutput::json(&json!({
                    "id": id,
                    "templateTest": true,
                    "data": format!("Data for ID: {id}"),
                }))
            })
            .title("Template Resource")
            .description("A resource template with parameter substitution")
            .mime_type("application/json"),
        )
}

wharf_sdk::export_plugin!(|| asking::add(toolbox()));
