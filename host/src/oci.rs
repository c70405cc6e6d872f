//! Plugins from OCI registries: a reference names a component in a registry,
//! Wharf pulls it into a content-addressed store in the cache, checks its
//! cosign signature against the trusted keys, and hands the bytes to the
//! loader like a file's.
//!
//! Strategy: [`reference`] is the grammar, checked before any request;
//! [`client`] speaks the distribution API; [`artifact`] is the manifest
//! layout of a Wasm component; [`store`] keeps what was pulled by digest;
//! [`signature`] checks and makes cosign signatures; [`source`] ties them
//! together for the loader, which treats a reference like one more file.

pub mod artifact;
pub mod auth;
pub mod client;
pub mod reference;
pub mod signature;
pub mod source;
pub mod store;
