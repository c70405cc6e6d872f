//! The `{{name}}` Wharf plugin: its tools, built with the Wharf SDK.
//!
//! Each tool is a function from an argument struct (its doc comments become the
//! input schema's descriptions) to a result. Add one with `.with(...)` in
//! `toolbox`, then `wharf build`.

use schemars::JsonSchema;
use serde::Deserialize;
use wharf_sdk::{Tool, ToolError, ToolOutput, Toolbox};

/// Arguments of `greet`.
#[derive(Deserialize, JsonSchema)]
struct GreetArgs {
    /// Who to greet.
    name: String,
}

/// The greeting for `name`.
fn greeting(name: &str) -> String {
    format!("Hello, {name}!")
}

/// Greets someone by name.
fn greet(args: GreetArgs) -> Result<ToolOutput, ToolError> {
    if args.name.trim().is_empty() {
        return Err(ToolError::invalid_arguments("`name` must not be empty"));
    }
    Ok(ToolOutput::text(greeting(&args.name)))
}

fn toolbox() -> Toolbox {
    Toolbox::new().with(
        Tool::new("greet", greet)
            .title("Greet")
            .description("Greets someone by name.")
            .read_only(),
    )
}

wharf_sdk::export_plugin!(toolbox);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greets_by_name() {
        assert_eq!(greeting("Ada"), "Hello, Ada!");
    }

    #[test]
    fn an_empty_name_is_refused() {
        let error = greet(GreetArgs { name: " ".into() }).err().unwrap();
        assert!(matches!(error, ToolError::InvalidArguments(_)));
    }
}
