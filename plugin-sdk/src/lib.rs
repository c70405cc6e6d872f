//! Write Wharf tool plugins in ordinary Rust.
//!
//! A Wharf plugin is a WebAssembly component exporting the `wharf:plugin/tools`
//! interface, and here also `wharf:plugin/prompts` (world `plugin` in
//! `wit/plugin.wit`). With this crate a plugin is a
//! `cdylib` with a function that returns a [`Toolbox`] and one [`export_plugin!`] line;
//! `cargo build --target wasm32-wasip2 --release` then produces the component.
//!
//! ```
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//! use wharf_sdk::{Tool, ToolError, ToolOutput, Toolbox, host};
//!
//! /// Arguments of `echo`.
//! #[derive(Deserialize, JsonSchema)]
//! struct EchoArgs {
//!     /// The text to return.
//!     text: String,
//! }
//!
//! /// Arguments of `divide`.
//! #[derive(Deserialize, JsonSchema)]
//! struct Operands {
//!     /// The dividend.
//!     a: f64,
//!     /// The divisor.
//!     b: f64,
//! }
//!
//! /// The result of an arithmetic operation.
//! #[derive(Serialize, JsonSchema)]
//! struct Value {
//!     /// The result.
//!     result: f64,
//! }
//!
//! fn toolbox() -> Toolbox {
//!     Toolbox::new()
//!         // Unstructured output: the closure returns a ToolOutput.
//!         .with(
//!             Tool::new("echo", |args: EchoArgs| Ok(ToolOutput::text(args.text)))
//!                 .title("Echo")
//!                 .description("Returns its text unchanged.")
//!                 .read_only(),
//!         )
//!         // Structured output: the closure returns a Serialize + JsonSchema value; the
//!         // SDK derives the output schema and returns structured content plus text.
//!         .with(
//!             Tool::structured("divide", |args: Operands| {
//!                 if args.b == 0.0 {
//!                     // An is-error result the model can read and correct.
//!                     return Err(ToolOutput::error("cannot divide by zero").into());
//!                 }
//!                 host::log(host::Level::Debug, "dividing");
//!                 Ok(Value { result: args.a / args.b })
//!             })
//!             .description("Divides a by b."),
//!         )
//!         // No arguments: take `()`. A hard failure: ToolError::failed.
//!         .with(Tool::new("secret", |()| {
//!             host::config("secret")
//!                 .map(ToolOutput::text)
//!                 .ok_or_else(|| ToolError::failed("no `secret` configured"))
//!         }))
//! }
//!
//! wharf_sdk::export_plugin!(toolbox);
//!
//! # fn main() {
//! // The same toolbox runs natively, which is how a plugin's tests call its tools.
//! let output = toolbox().call("divide", r#"{"a": 1, "b": 4}"#).unwrap();
//! assert_eq!(output.structured_content(), Some(&serde_json::json!({"result": 0.25})));
//! assert!(toolbox().call("divide", r#"{"a": 1, "b": 0}"#).is_err());
//! assert_eq!(
//!     toolbox().call("echo", r#"{"txt": "hi"}"#),
//!     Err(ToolError::InvalidArguments("missing field `text` at line 1 column 13".into()))
//! );
//! # }
//! ```
//!
//! How the pieces fit:
//!
//! - [`Tool`] pairs a name with a closure over typed arguments. The argument type
//!   derives `Deserialize` and `JsonSchema`; its JSON Schema (2020-12, doc comments as
//!   descriptions) is the tool's input schema, and arguments that do not deserialize
//!   become [`ToolError::InvalidArguments`] naming the field.
//! - [`ToolOutput`] is what a tool returns: text, images, audio, resource links,
//!   structured content and the is-error flag.
//! - [`ToolError`] is why a call did not produce an ordinary result.
//! - [`Prompt`] is a message template with [`PromptArgument`]s, rendered into a
//!   [`PromptOutput`], with optional argument completion; add prompts to the toolbox
//!   with [`Toolbox::prompt`].
//! - [`Resource`] is data at a URI and [`ResourceTemplate`] a family of URIs
//!   (`notes://{day}`), each read into a [`ResourceOutput`]; add them with
//!   [`Toolbox::resource`] and [`Toolbox::template`].
//! - [`host`] calls back into Wharf: log, progress, cancellation, configuration.
//! - [`input`] asks the client mid-call: elicitation, sampling, roots, and state
//!   kept across the rounds of a 2026-07-28 request.
//! - [`bindings`] holds the raw wit-bindgen bindings, should you need them.
//!
//! Each call runs in a fresh instance, so a plugin keeps no state between calls and
//! the toolbox function runs once per call: keep it cheap (schemas are only generated
//! when Wharf lists the tools, once per load). A panic traps the instance; Wharf
//! reports it as a failed call.

#![warn(missing_docs)]

mod error;
mod export;
pub mod host;
pub mod input;
mod output;
mod prompt;
mod resource;
mod schema;
mod tool;
mod toolbox;

pub use error::ToolError;
pub use output::{
    BinaryContent, Content, EmbeddedResource, ResourceBody, ResourceLink, ToolOutput,
};
pub use prompt::{Prompt, PromptArgument, PromptArguments, PromptError, PromptOutput, Role};
pub use resource::{
    Resource, ResourceError, ResourceOutput, ResourcePiece, ResourceTemplate, TemplateVariables,
};
pub use tool::{TASK_HINT_KEY, TaskSupport, Tool};
pub use toolbox::Toolbox;

/// The bindings wit-bindgen generates for the world `wharf:plugin/plugin`.
///
/// [`export_plugin!`] and [`host`] cover what a plugin needs; these are here for the
/// macro and for anyone who wants the raw interface.
#[allow(missing_docs)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "../wit",
        world: "plugin",
        pub_export_macro: true,
        default_bindings_module: "wharf_sdk::bindings",
        additional_derives: [PartialEq],
    });
}

/// What [`export_plugin!`] expands to needs; not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use crate::export::{
        call_tool, complete_argument, complete_template, get_prompt, list_prompts,
        list_resource_templates, list_resources, list_tools, read_resource,
    };
}
