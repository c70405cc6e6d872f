//! Wharf: an MCP server that hosts WebAssembly components as tools.
//!
//! Data flows one way (see ARCHITECTURE.md): a transport hands requests to the
//! [`server`], which reads the [`registry`]'s current tools and runs them through
//! the [`runtime`]. The [`loader`] turns the plugin folder into plugins.

pub mod audit;
pub mod author;
pub mod caller;
pub mod client_input;
pub mod cores;
pub mod docs;
pub mod excerpt;
#[doc(hidden)]
pub mod fuzzing;
pub mod http;
pub mod json_values;
pub mod jsonrpc_id;
pub mod loader;
pub mod manifest;
pub mod metrics;
pub mod naming;
pub mod oauth;
pub mod oci;
pub mod oneshot;
pub mod outbound;
pub mod protocol;
pub mod registry;
pub mod resource_watch;
pub mod runtime;
pub mod server;
pub mod stdio;
pub mod task_subscriptions;
pub mod tasks;
pub mod telemetry;
pub mod trace_context;
pub mod watcher;
