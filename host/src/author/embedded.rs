//! What `host/build.rs` built into the binary: `TEMPLATES` (each file of
//! `host/templates/<lang>/`), `PLUGIN_WIT` (`wit/plugin.wit`) and `RUST_SDK`
//! (the plugin SDK's sources with a standalone `Cargo.toml`).

include!(concat!(env!("OUT_DIR"), "/embedded.rs"));
