//! What a plugin may reach beyond its own memory: the capabilities its manifest
//! grants. The default ([`Grants::default`]) is nothing at all.

use std::path::PathBuf;

use super::http::HostAllowList;

/// Capabilities given to every instance of one plugin.
///
/// Built once at load time (paths canonicalised, environment values read), so a
/// call never consults the file system or Wharf's environment to decide what a
/// plugin may do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grants {
    /// Directories the guest sees (capability-based: nothing outside them).
    pub dirs: Vec<DirGrant>,
    /// Hosts the guest may send HTTP requests to through `wasi:http`.
    pub http: HostAllowList,
    /// Environment variables the guest sees, name and value.
    pub env: Vec<(String, String)>,
    /// Configuration values readable through the `host.config` import.
    pub config: Vec<(String, String)>,
    /// Whether the `host.caller` import tells the guest who made the request
    /// (`[auth] caller = true`).
    pub caller: bool,
}

/// One preopened directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirGrant {
    /// Canonical host path (no `..`, no symlinks).
    pub host: PathBuf,
    /// Absolute path the guest opens it by.
    pub guest: String,
    /// Whether the guest may create, change and delete files under it.
    pub writable: bool,
}
