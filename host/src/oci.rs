//! Plugins from OCI registries: a reference names a component in a registry,
//! Wharf pulls it into a content-addressed store in the cache, checks its
//! cosign signature against the trusted keys, and hands the bytes to the
//! loader like a file's.
//!
//! Strategy: [`reference`] is the grammar, checked before any request.

pub mod reference;
