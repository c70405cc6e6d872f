//! The WebAssembly side of Wharf: compiling components, sandboxing them, and
//! running one tool call per fresh instance.
//!
//! Nothing here knows about MCP or JSON-RPC; the server maps these types to the
//! protocol.

mod bindings;
mod cache;
mod engine;
mod limits;
mod plugin;
mod state;
mod types;

pub use cache::{CompiledCache, ContentHash};
pub use engine::Runtime;
pub use limits::CallLimits;
pub use plugin::{CallFailure, LoadError, Plugin};
pub use state::{CallContext, CallEvent};
pub use types::{CallOutput, ContentItem, SpecError, ToolHints, ToolSpec};

/// The log levels a plugin can use, as defined by the WIT contract.
pub use bindings::wharf::plugin::types::LogLevel;

/// Failure to set up the runtime itself.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("could not create the WebAssembly engine: {0}")]
    Engine(String),
}
