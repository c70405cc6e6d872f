//! Who the server is and what it can do: the `initialize` answer of a legacy
//! session and `server/discover` (2026-07-28), both from one description.

use std::time::Duration;

use rmcp::model::{
    CacheScope, DiscoverResult, Implementation, JsonObject, ServerCapabilities, ServerConfig,
    TASKS_EXTENSION_ID,
};

use crate::protocol::SUPPORTED_VERSIONS;
use crate::registry::PluginSetDigest;

/// How long clients may cache `server/discover`.
const DISCOVER_TTL: Duration = Duration::from_secs(3600);

/// Wharf's identity, capabilities and instructions. The tasks extension is
/// among the capabilities (rmcp answers `tasks/*` only for a server that has
/// it); [`for_client`] takes it out for a client that did not declare it.
#[allow(deprecated)] // logging: deprecated (SEP-2577), still in both eras
pub(super) fn server_config() -> ServerConfig {
    let mut info = Implementation::new("wharf", env!("CARGO_PKG_VERSION"));
    info.title = Some("Wharf".into());
    info.description = Some("WebAssembly components served as MCP tools".into());
    let mut capabilities = ServerCapabilities::builder()
        .enable_tools()
        .enable_tool_list_changed()
        .enable_resources()
        .enable_resources_list_changed()
        .enable_resources_subscribe()
        .enable_prompts()
        .enable_prompts_list_changed()
        .enable_completions()
        .enable_logging()
        .build();
    capabilities
        .extensions
        .get_or_insert_with(Default::default)
        .insert(TASKS_EXTENSION_ID.into(), JsonObject::new());
    ServerConfig::new(capabilities)
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
pub(super) fn discover(digest: Option<PluginSetDigest>, tasks_declared: bool) -> DiscoverResult {
    // Capabilities and identity are fixed for the life of the process and hold
    // nothing user-specific, so clients may cache and share them. The digest
    // changes with a reload; it is for operators, who ask afresh.
    let mut result = DiscoverResult::from_server_info(
        SUPPORTED_VERSIONS.to_vec(),
        for_client(server_config(), tasks_declared),
    );
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

/// `config` as a client sees it: the tasks extension only for a client that
/// declared it (SEP-2663: a server never offers tasks to the others).
pub(super) fn for_client(mut config: ServerConfig, tasks_declared: bool) -> ServerConfig {
    if !tasks_declared && let Some(extensions) = config.capabilities.extensions.as_mut() {
        extensions.remove(TASKS_EXTENSION_ID);
        if extensions.is_empty() {
            config.capabilities.extensions = None;
        }
    }
    config
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tasks_extension_is_offered_only_to_clients_that_declare_it() {
        let with = serde_json::to_value(discover(None, true)).unwrap();
        assert_eq!(
            with["capabilities"]["extensions"][TASKS_EXTENSION_ID],
            serde_json::json!({})
        );
        let without = serde_json::to_value(discover(None, false)).unwrap();
        assert!(
            without["capabilities"].get("extensions").is_none(),
            "{without}"
        );
        assert!(without["capabilities"].get("tasks").is_none());
    }
}
