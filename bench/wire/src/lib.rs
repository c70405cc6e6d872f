//! The client side of Wharf's load tools, shared by the benchmark driver
//! (`bench/driver`) and the soak (`tests/soak`): a keep-alive HTTP/1.1
//! connection that speaks both MCP eras and reads SSE streams ([`http`]), and
//! what `/proc` says about a server process ([`process`]).

pub mod http;
pub mod process;

/// The stateless protocol revision.
pub const MODERN: &str = "2026-07-28";
/// The legacy revision the clients open sessions with.
pub const LEGACY: &str = "2025-11-25";
