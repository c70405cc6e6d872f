//! The smallest useful Wharf plugin: one tool, `echo`, that returns its text.
//!
//! It shows the least a plugin needs: an argument struct deriving `Deserialize` and
//! `JsonSchema` (its doc comments become the input schema's descriptions), a toolbox
//! function and [`wharf_sdk::export_plugin!`].

use schemars::JsonSchema;
use serde::Deserialize;
use wharf_sdk::{Tool, ToolError, ToolOutput, Toolbox};

/// Arguments of `echo`.
#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to return.
    text: String,
    /// How many times to repeat the text, from 1 to 10 (default 1), one per line.
    #[serde(default = "one")]
    #[schemars(range(min = 1, max = 10))]
    repeat: u32,
}

fn one() -> u32 {
    1
}

/// `text` repeated `repeat` times, one per line.
fn echo(args: EchoArgs) -> Result<ToolOutput, ToolError> {
    if !(1..=10).contains(&args.repeat) {
        return Err(ToolError::invalid_arguments(format!(
            "`repeat` must be between 1 and 10, not {}",
            args.repeat
        )));
    }
    let lines = vec![args.text.as_str(); args.repeat as usize];
    Ok(ToolOutput::text(lines.join("\n")))
}

fn toolbox() -> Toolbox {
    Toolbox::new().with(
        Tool::new("echo", echo)
            .title("Echo")
            .description("Returns its text unchanged, optionally repeated on several lines.")
            .read_only()
            .idempotent()
            .open_world(false),
    )
}

wharf_sdk::export_plugin!(toolbox);

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn echoes() {
        let output = toolbox().call("echo", r#"{"text":"hi"}"#).unwrap();
        assert_eq!(output.text_summary(), "hi");
        let output = toolbox()
            .call("echo", r#"{"text":"hi","repeat":3}"#)
            .unwrap();
        assert_eq!(output.text_summary(), "hi\nhi\nhi");
    }

    #[test]
    fn checks_repeat() {
        assert_eq!(
            toolbox().call("echo", r#"{"text":"hi","repeat":11}"#),
            Err(ToolError::invalid_arguments(
                "`repeat` must be between 1 and 10, not 11"
            ))
        );
    }

    #[test]
    fn schema_bounds_repeat() {
        let schema = toolbox().get("echo").unwrap().input_schema();
        assert_eq!(schema["required"], json!(["text"]));
        assert_eq!(schema["properties"]["repeat"]["minimum"], 1);
        assert_eq!(schema["properties"]["repeat"]["maximum"], 10);
        assert_eq!(schema["properties"]["repeat"]["default"], 1);
    }
}
