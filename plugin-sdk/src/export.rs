//! Exporting a [`Toolbox`] as the component's `tools` and `prompts` interfaces.
//!
//! [`export_plugin!`](crate::export_plugin) implements the WIT `Guest` trait for a
//! hidden type by calling [`list_tools`] and [`call_tool`] below, then hands that type
//! to the `export!` macro that wit-bindgen generated, which emits the canonical-ABI
//! exports.

use crate::bindings::exports::wharf::plugin::prompts as wit_prompts;
use crate::bindings::exports::wharf::plugin::resources as wit_resources;
use crate::bindings::wharf::plugin::types as wit;
use crate::error::ToolError;
use crate::toolbox::Toolbox;

/// Most suggestions one completion returns, as MCP allows.
const MAX_SUGGESTIONS: usize = 100;

/// The WIT `tool` records describing every tool of `toolbox`.
pub fn list_tools(toolbox: &Toolbox) -> Vec<wit::Tool> {
    toolbox.tools().iter().map(|tool| tool.to_wit()).collect()
}

/// Runs the tool `name` of `toolbox` and turns the outcome into WIT types.
pub fn call_tool(
    toolbox: &Toolbox,
    name: &str,
    arguments: &str,
) -> Result<wit::CallResult, wit::ToolError> {
    match toolbox.call(name, arguments) {
        Ok(output) | Err(ToolError::Output(output)) => Ok(output.into_call_result()),
        Err(ToolError::UnknownTool(name)) => Err(wit::ToolError::UnknownTool(name)),
        Err(ToolError::InvalidArguments(message)) => Err(wit::ToolError::InvalidArguments(message)),
        Err(ToolError::Failed(message)) => Err(wit::ToolError::Failed(message)),
        // Wharf answers with the pending questions, whatever the call returns.
        Err(ToolError::Pending) => Ok(wit::CallResult {
            content: Vec::new(),
            structured_content: None,
            is_error: false,
        }),
    }
}

/// The WIT `prompt` records describing every prompt of `toolbox`.
pub fn list_prompts(toolbox: &Toolbox) -> Vec<wit_prompts::Prompt> {
    toolbox
        .prompts()
        .iter()
        .map(|prompt| prompt.to_wit())
        .collect()
}

/// Renders the prompt `name` of `toolbox`.
pub fn get_prompt(
    toolbox: &Toolbox,
    name: &str,
    arguments: &[(String, String)],
) -> Result<wit_prompts::PromptResult, wit_prompts::PromptError> {
    toolbox
        .render(name, arguments)
        .map(|output| output.into_wit())
        .map_err(|error| error.into_wit())
}

/// Suggestions for an argument of the prompt `name`, at most 100.
pub fn complete_argument(
    toolbox: &Toolbox,
    name: &str,
    argument: &str,
    value: &str,
    context: &[(String, String)],
) -> Vec<String> {
    let mut suggestions = toolbox
        .get_prompt(name)
        .map(|prompt| prompt.suggestions(argument, value, context))
        .unwrap_or_default();
    suggestions.truncate(MAX_SUGGESTIONS);
    suggestions
}

/// The WIT `resource` records describing every resource of `toolbox`.
pub fn list_resources(toolbox: &Toolbox) -> Vec<wit_resources::Resource> {
    toolbox.resources().iter().map(|r| r.to_wit()).collect()
}

/// The WIT `resource-template` records describing every template of `toolbox`.
pub fn list_resource_templates(toolbox: &Toolbox) -> Vec<wit_resources::ResourceTemplate> {
    toolbox.templates().iter().map(|t| t.to_wit()).collect()
}

/// Reads the resource at `uri` of `toolbox`.
pub fn read_resource(
    toolbox: &Toolbox,
    uri: &str,
) -> Result<Vec<wit_resources::ResourceContents>, wit_resources::ResourceError> {
    toolbox
        .read(uri)
        .map(|(output, mime_type)| output.into_wit(uri, mime_type))
        .map_err(|error| error.into_wit())
}

/// Suggestions for a variable of the template `template`, at most 100.
pub fn complete_template(
    toolbox: &Toolbox,
    template: &str,
    variable: &str,
    value: &str,
    context: &[(String, String)],
) -> Vec<String> {
    let mut suggestions = toolbox
        .templates()
        .iter()
        .find(|t| t.template() == template)
        .map(|t| t.suggestions(variable, value, context))
        .unwrap_or_default();
    suggestions.truncate(MAX_SUGGESTIONS);
    suggestions
}

/// Exports a plugin's tools, prompts and resources: the one line that turns a crate into a Wharf plugin.
///
/// Give it a function (or any expression callable with no arguments) returning the
/// plugin's [`Toolbox`](crate::Toolbox). Use it once, in the crate root of a `cdylib`
/// built for `wasm32-wasip2`.
///
/// ```
/// use wharf_sdk::{Tool, ToolOutput, Toolbox};
///
/// fn toolbox() -> Toolbox {
///     Toolbox::new().with(Tool::new("ping", |()| Ok(ToolOutput::text("pong"))))
/// }
///
/// wharf_sdk::export_plugin!(toolbox);
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! export_plugin {
    ($toolbox:expr) => {
        const _: () = {
            struct WharfPlugin;

            impl $crate::bindings::exports::wharf::plugin::tools::Guest for WharfPlugin {
                fn list_tools() -> ::std::vec::Vec<$crate::bindings::wharf::plugin::types::Tool> {
                    let toolbox: $crate::Toolbox = ($toolbox)();
                    $crate::__private::list_tools(&toolbox)
                }

                fn call_tool(
                    name: ::std::string::String,
                    arguments: ::std::string::String,
                ) -> ::core::result::Result<
                    $crate::bindings::wharf::plugin::types::CallResult,
                    $crate::bindings::wharf::plugin::types::ToolError,
                > {
                    let toolbox: $crate::Toolbox = ($toolbox)();
                    $crate::__private::call_tool(&toolbox, &name, &arguments)
                }
            }

            impl $crate::bindings::exports::wharf::plugin::prompts::Guest for WharfPlugin {
                fn list_prompts()
                -> ::std::vec::Vec<$crate::bindings::exports::wharf::plugin::prompts::Prompt>
                {
                    let toolbox: $crate::Toolbox = ($toolbox)();
                    $crate::__private::list_prompts(&toolbox)
                }

                fn get_prompt(
                    name: ::std::string::String,
                    arguments: ::std::vec::Vec<(::std::string::String, ::std::string::String)>,
                ) -> ::core::result::Result<
                    $crate::bindings::exports::wharf::plugin::prompts::PromptResult,
                    $crate::bindings::exports::wharf::plugin::prompts::PromptError,
                > {
                    let toolbox: $crate::Toolbox = ($toolbox)();
                    $crate::__private::get_prompt(&toolbox, &name, &arguments)
                }

                fn complete_argument(
                    name: ::std::string::String,
                    argument: ::std::string::String,
                    value: ::std::string::String,
                    context: ::std::vec::Vec<(::std::string::String, ::std::string::String)>,
                ) -> ::std::vec::Vec<::std::string::String> {
                    let toolbox: $crate::Toolbox = ($toolbox)();
                    $crate::__private::complete_argument(
                        &toolbox, &name, &argument, &value, &context,
                    )
                }
            }

            impl $crate::bindings::exports::wharf::plugin::resources::Guest for WharfPlugin {
                fn list_resources()
                -> ::std::vec::Vec<$crate::bindings::exports::wharf::plugin::resources::Resource>
                {
                    let toolbox: $crate::Toolbox = ($toolbox)();
                    $crate::__private::list_resources(&toolbox)
                }

                fn list_resource_templates() -> ::std::vec::Vec<
                    $crate::bindings::exports::wharf::plugin::resources::ResourceTemplate,
                > {
                    let toolbox: $crate::Toolbox = ($toolbox)();
                    $crate::__private::list_resource_templates(&toolbox)
                }

                fn read_resource(
                    uri: ::std::string::String,
                ) -> ::core::result::Result<
                    ::std::vec::Vec<
                        $crate::bindings::exports::wharf::plugin::resources::ResourceContents,
                    >,
                    $crate::bindings::exports::wharf::plugin::resources::ResourceError,
                > {
                    let toolbox: $crate::Toolbox = ($toolbox)();
                    $crate::__private::read_resource(&toolbox, &uri)
                }

                fn complete_template(
                    uri_template: ::std::string::String,
                    variable: ::std::string::String,
                    value: ::std::string::String,
                    context: ::std::vec::Vec<(::std::string::String, ::std::string::String)>,
                ) -> ::std::vec::Vec<::std::string::String> {
                    let toolbox: $crate::Toolbox = ($toolbox)();
                    $crate::__private::complete_template(
                        &toolbox,
                        &uri_template,
                        &variable,
                        &value,
                        &context,
                    )
                }
            }

    $crate::bindings::export!(WharfPlugin with_types_in $crate::bindings);
        };
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Tool, ToolOutput};

    fn toolbox() -> Toolbox {
        Toolbox::new()
            .with(Tool::new("ok", |()| Ok(ToolOutput::text("fine"))))
            .with(Tool::new("bad", |()| Err(ToolError::failed("broken"))))
            .with(Tool::new("soft", |()| {
                Err(ToolOutput::error("try again").into())
            }))
    }

    #[test]
    fn lists_every_tool() {
        let names: Vec<String> = list_tools(&toolbox()).into_iter().map(|t| t.name).collect();
        assert_eq!(names, ["ok", "bad", "soft"]);
    }

    #[test]
    fn maps_outcomes_to_wit() {
        let toolbox = toolbox();
        assert_eq!(
            call_tool(&toolbox, "ok", "{}"),
            Ok(wit::CallResult {
                content: vec![wit::Content::Text("fine".into())],
                structured_content: None,
                is_error: false,
            })
        );
        assert_eq!(
            call_tool(&toolbox, "soft", "{}"),
            Ok(wit::CallResult {
                content: vec![wit::Content::Text("try again".into())],
                structured_content: None,
                is_error: true,
            })
        );
        assert_eq!(
            call_tool(&toolbox, "bad", "{}"),
            Err(wit::ToolError::Failed("broken".into()))
        );
        assert_eq!(
            call_tool(&toolbox, "ok", "{\"x\":1}"),
            Err(wit::ToolError::InvalidArguments(
                "this tool takes no arguments, but got `x`".into()
            ))
        );
        assert_eq!(
            call_tool(&toolbox, "nope", "{}"),
            Err(wit::ToolError::UnknownTool("nope".into()))
        );
    }
}
