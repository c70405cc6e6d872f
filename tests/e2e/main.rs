//! End-to-end tests: the real `wharf` binary, real plugins, driven over stdio and
//! HTTP the way an MCP client drives it. One test binary, a module per area.
//!
//! The plugins come from `cargo xtask plugins` (`target/plugins`,
//! `target/test-plugins`); `cargo xtask test` builds them first.

mod arguments;
mod audit;
mod author;
mod busy_poll;
mod chaos;
mod client_input;
mod differential;
mod examples;
mod grants;
mod handoff;
mod harness;
mod http;
mod http_bounds;
mod http_client;
mod http_envelope;
mod http_ops;
mod legacy;
mod limits;
mod modern;
mod naming;
mod oauth;
mod oci;
mod otlp_grpc;
mod otlp_receiver;
mod otlp_tls;
mod param_headers;
mod plain;
mod plugin_lists;
mod primitives;
mod prompts;
mod protocol_errors;
mod reload;
mod replicas;
mod resources;
mod sandbox;
mod sdk_examples;
mod stdio_ids;
mod task_listen;
mod tasks;
mod telemetry;
mod telemetry_wire;
