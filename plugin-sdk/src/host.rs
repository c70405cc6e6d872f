//! What Wharf offers a plugin during a call: logging, progress, cancellation,
//! configuration, and saying that the plugin's lists changed.
//!
//! Every function is safe to call at any time. Compiled for anything but WebAssembly
//! (when a plugin's logic is unit-tested natively) they stand alone: [`log`] writes to
//! standard error, [`progress`] and [`lists_changed`] do nothing, [`is_cancelled`] is
//! false and [`config`] has no values.

/// Severity of a log message, as in MCP (RFC 5424 levels, `Debug` to `Emergency`).
pub use crate::bindings::wharf::plugin::types::LogLevel as Level;

use std::fmt;

#[cfg(target_arch = "wasm32")]
use crate::bindings::wharf::plugin::host as wit;

impl Level {
    /// The level's name in MCP: `debug`, `info`, `notice`, `warning`, `error`,
    /// `critical`, `alert` or `emergency`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Notice => "notice",
            Level::Warning => "warning",
            Level::Error => "error",
            Level::Critical => "critical",
            Level::Alert => "alert",
            Level::Emergency => "emergency",
        }
    }
}

/// Writes the MCP name, as [`Level::as_str`].
impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Writes `message` to Wharf's log at `level`, tagged with the plugin's name.
pub fn log(level: Level, message: &str) {
    #[cfg(target_arch = "wasm32")]
    wit::log(level, message);
    #[cfg(not(target_arch = "wasm32"))]
    eprintln!("[{level}] {message}");
}

/// Reports progress of the current call. `progress` should increase with each report;
/// `total` is the value it will reach at the end, when known.
pub fn progress(progress: f64, total: Option<f64>, message: Option<&str>) {
    #[cfg(target_arch = "wasm32")]
    wit::progress(progress, total, message);
    #[cfg(not(target_arch = "wasm32"))]
    let _ = (progress, total, message);
}

/// True once the client has cancelled the current call or its deadline has passed.
/// A long-running tool should check it now and then and stop early.
pub fn is_cancelled() -> bool {
    #[cfg(target_arch = "wasm32")]
    return wit::is_cancelled();
    #[cfg(not(target_arch = "wasm32"))]
    false
}

/// Who made the current request, as the OAuth access token that let it in
/// names them (never the token).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Caller {
    /// The token's `sub`: the user, or the client of a client-credentials grant.
    pub subject: Option<String>,
    /// The scopes the token grants, sorted.
    pub scopes: Vec<String>,
}

/// The caller of the current request: `None` unless Wharf serves over HTTP as
/// an OAuth resource server and the plugin's manifest sets
/// `[auth] caller = true`.
pub fn caller() -> Option<Caller> {
    #[cfg(target_arch = "wasm32")]
    return wit::caller().map(|c| Caller {
        subject: c.subject,
        scopes: c.scopes,
    });
    #[cfg(not(target_arch = "wasm32"))]
    None
}

/// The configuration value `key` granted to this plugin by its manifest, if any.
pub fn config(key: &str) -> Option<String> {
    #[cfg(target_arch = "wasm32")]
    return wit::config(key);
    #[cfg(not(target_arch = "wasm32"))]
    {
        let _ = key;
        None
    }
}

/// The lists a plugin offers, for [`lists_changed`]; combine them with `|`
/// (`Lists::TOOLS | Lists::PROMPTS`).
pub use crate::bindings::wharf::plugin::lists::ListKinds as Lists;

/// Tells Wharf that the plugin's `which` lists changed: its tools, prompts or
/// resources come from something that moved (a file it was granted, a
/// remote catalogue). Wharf asks the plugin for those lists again after this
/// call, on a fresh instance (so the [`Toolbox`](crate::Toolbox) must be built
/// from that source, not fixed), swaps them in, and tells listening clients
/// if a list really differs. Calls are merged and a plugin is listed again
/// at most twice a second, so calling it too often costs nothing. Needs no
/// grant in the manifest.
pub fn lists_changed(which: Lists) {
    #[cfg(target_arch = "wasm32")]
    crate::bindings::wharf::plugin::lists::changed(which);
    #[cfg(not(target_arch = "wasm32"))]
    let _ = which;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natively_the_host_stands_alone() {
        log(Level::Info, "hello");
        progress(1.0, Some(2.0), Some("half"));
        assert!(!is_cancelled());
        assert_eq!(config("anything"), None);
        lists_changed(Lists::TOOLS | Lists::PROMPTS);
    }

    #[test]
    fn levels_have_mcp_names() {
        assert_eq!(Level::Warning.to_string(), "warning");
        assert_eq!(Level::Emergency.as_str(), "emergency");
    }
}
