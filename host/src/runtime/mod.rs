//! The WebAssembly side of Wharf: compiling components, sandboxing them, and
//! running one tool call per fresh instance.
//!
//! Nothing here knows about MCP or JSON-RPC; the server maps these types to the
//! protocol.

mod admission;
mod bindings;
mod cache;
mod capture;
mod code;
mod engine;
mod epoch;
mod failure;
mod function_cache;
mod grants;
mod http;
mod input;
mod instances;
mod limits;
mod placement;
pub mod plain;
mod plugin;
mod prompt;
mod resource;
mod retire;
mod state;
mod tiers;
mod types;

#[cfg(test)]
mod test_support;

pub use cache::{CompiledCache, ContentHash};
pub use engine::Runtime;
pub use failure::CallFailure;
pub use grants::{DirGrant, Grants};
pub use http::{HostAllowList, HostPattern, PatternError};
pub use input::{InputBroker, InputOutcome, InputRequest};
pub use limits::{CallLimits, Ceilings, RuntimeOptions};
pub use placement::Placement;
pub use plain::SkippedFunction;
pub use plugin::{LoadError, Plugin, PluginKind};
pub use prompt::{PromptArgumentSpec, PromptSpec, RenderedPrompt, Role};
pub use resource::{
    MIN_POLL, ResourceContent, ResourceSpec, ResourceSpecError, TemplateSpec, scheme,
};
pub use state::{CallContext, CallEvent};
pub use tiers::Tier;
pub use types::{CallOutput, ContentItem, ResourceBody, SpecError, ToolHints, ToolSpec};

/// The log levels a plugin can use, as defined by the WIT contract.
pub use bindings::wharf::plugin::types::LogLevel;

/// Failure to set up the runtime itself.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("could not create the WebAssembly engine: {0}")]
    Engine(String),
}
