//! End-to-end tests: the real `wharf` binary, real plugins, driven over stdio the
//! way an MCP client drives it. One test binary, a module per area.
//!
//! The plugins come from `cargo xtask plugins` (`target/plugins`,
//! `target/test-plugins`); `cargo xtask test` builds them first.

mod grants;
mod harness;
mod legacy;
mod limits;
mod modern;
mod protocol_errors;
mod sandbox;
