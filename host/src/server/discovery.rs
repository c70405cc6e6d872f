//! Who the server is and what it can do: the `initialize` answer of a legacy
//! session and `server/discover` (2026-07-28), both from one description.

use std::time::Duration;

use rmcp::model::{CacheScope, DiscoverResult, Implementation, ServerCapabilities, ServerConfig};

use crate::protocol::SUPPORTED_VERSIONS;
use crate::registry::PluginSetDigest;

/// How long clients may cache `server/discover`.
const DISCOVER_TTL: Duration = Duration::from_secs(3600);

/// Wharf's identity, capabilities and instructions.
#[allow(deprecated)] // logging: deprecated (SEP-2577), still in both eras
pub(super) fn server_config() -> ServerConfig {
    let mut info = Implementation::new("wharf", env!("CARGO_PKG_VERSION"));
    info.title = Some("Wharf".into());
    info.description = Some("WebAssembly components served as MCP tools".into());
    ServerConfig::new(
        ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_resources_subscribe()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_completions()
            .enable_logging()
            .build(),
    )
    .with_server_info(info)
    .with_instructions(
        "Tools, prompts and resources come from WebAssembly plugins; each tool and \
         prompt is named <plugin>_<name>, and each resource URI is <plugin>+<uri>.",
    )
}

/// The `_meta` key of `server/discover`'s plugin set digest.
pub(super) const PLUGIN_SET_DIGEST_KEY: &str = "wharf/pluginSetDigest";

/// `server/discover`: the versions served and the server's description, and
/// the digest of the plugin set (`digest`, when the set has one) under
/// [`PLUGIN_SET_DIGEST_KEY`] in `_meta`, so that replicas can be compared.
pub(super) fn discover(digest: Option<PluginSetDigest>) -> DiscoverResult {
    // Capabilities and identity are fixed for the life of the process and hold
    // nothing user-specific, so clients may cache and share them. The digest
    // changes with a reload; it is for operators, who ask afresh.
    let mut result = DiscoverResult::from_server_info(SUPPORTED_VERSIONS.to_vec(), server_config());
    result.ttl_ms = DISCOVER_TTL.as_millis() as u64;
    result.cache_scope = CacheScope::Public;
    if let Some(digest) = digest {
        result
            .meta
            .get_or_insert_with(Default::default)
            .insert(PLUGIN_SET_DIGEST_KEY.into(), digest.to_string().into());
    }
    result
}
