//! The WebAssembly side of Wharf: compiling components, sandboxing them, and
//! running one tool call per fresh instance.
//!
//! Nothing here knows about MCP or JSON-RPC; the server maps these types to the
//! protocol. The rooms, from the top:
//!
//! 1. [`Runtime`] (`load.rs`): the engines and shared limits, and loading a
//!    component into a [`Plugin`]: `compile.rs` (through `cache.rs`, the
//!    compile cache, and `shared.rs`, one component for identical files),
//!    `code.rs` (linking, finding the exports), `tiers.rs`
//!    (quick code replaced by optimised code in the background).
//! 2. [`Plugin`] (`plugin.rs`): what a plugin offers, and the one path every
//!    request takes into the guest (`plugin/invoke.rs`), with `tools.rs`,
//!    `prompts.rs` and `resources.rs` saying what differs.
//! 3. Instances (`instances.rs`): a fresh one per call, or a spare made
//!    ahead of it; each in a store built by `store.rs`, which installs
//!    the limits (`limits.rs` lists every limit and where it is enforced).
//!    Finished stores are dropped after the answer (`retire.rs`); spares are
//!    made and stores dropped on a thread of their own (`upkeep.rs`).
//! 4. The guest's world (`state.rs`): WASI, `wasi:http` (`http.rs`, the
//!    allow-list), the `host` interface, captured output, questions to the
//!    client (`input.rs`), and the `lists` interface (`list_changes.rs`: a
//!    plugin saying its lists changed, for whoever re-lists it).
//! 5. The engines (`engine.rs`: configuration, instance pool, the linker),
//!    the epoch clock (`epoch.rs`), where guest code runs (`placement.rs`),
//!    and the guards that bound it in time (`guard.rs`).
//!
//! Imports run one way, from the top down; `failure.rs`, `limits.rs` and the
//! plain data types (`types.rs`, `prompt.rs`, `resource.rs`) are leaves.

mod admission;
mod bindings;
mod cache;
mod capture;
mod code;
mod compile;
mod engine;
mod epoch;
mod failure;
mod function_cache;
mod grants;
mod guard;
mod http;
mod input;
mod instances;
mod limits;
mod list_changes;
mod load;
mod placement;
pub mod plain;
mod plugin;
mod pool_usage;
mod prompt;
mod resource;
mod retire;
mod shared;
mod state;
mod store;
mod tiers;
mod types;
mod upkeep;

#[cfg(test)]
mod test_support;

pub use cache::{CompiledCache, ComponentBytes, ContentHash};
pub use code::Tier;
pub use failure::{CallFailure, LoadError, RuntimeError, SkippedFunction};
pub use grants::{DirGrant, Grants};
pub use http::{HostAllowList, HostPattern, PatternError};
pub use input::{InputBroker, InputOutcome, InputRequest};
pub use limits::{CallLimits, Ceilings, RuntimeOptions};
pub use list_changes::ListChangeReceiver;
pub use load::Runtime;
pub use placement::Placement;
pub use plugin::{Plugin, PluginKind};
pub use pool_usage::PoolUsage;
pub use prompt::{PromptArgumentSpec, PromptSpec, RenderedPrompt, Role};
pub use resource::{
    MIN_POLL, ResourceContent, ResourceSpec, ResourceSpecError, TemplateSpec, scheme,
};
pub use state::{CallContext, CallEvent, CallTrace, CallerIdentity};
pub use types::{CallOutput, ContentItem, ResourceBody, SpecError, ToolHints, ToolSpec};
pub use upkeep::is_working as upkeep_is_working;

/// The log levels a plugin can use, as defined by the WIT contract.
pub use bindings::wharf::plugin::types::LogLevel;
