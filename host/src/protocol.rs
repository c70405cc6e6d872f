//! Facts of the MCP protocol that Wharf relies on, defined once: the revisions
//! it serves, the methods rmcp knows, and the rules of the stateless era
//! (2026-07-28), which removed the handshake and a few methods.
//!
//! A leaf: it imports nothing from the crate, so the transports and the server
//! both take these facts from here and neither needs the other for them.

use rmcp::model::ProtocolVersion;

/// The protocol revisions Wharf serves, newest first.
pub const SUPPORTED_VERSIONS: &[ProtocolVersion] = &[
    ProtocolVersion::V_2026_07_28,
    ProtocolVersion::V_2025_11_25,
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_03_26,
    ProtocolVersion::V_2024_11_05,
];

/// The `_meta` key a 2026-07-28 request names its revision under.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// The first protocol revision without the `initialize` handshake.
pub const FIRST_STATELESS_VERSION: ProtocolVersion = ProtocolVersion::V_2026_07_28;

/// Methods rmcp knows; a request for one whose params do not fit gets `-32602`.
pub const KNOWN_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "subscriptions/listen",
    "completion/complete",
    "logging/setLevel",
];

/// Methods that 2026-07-28 removed. Legacy sessions still use them; a request
/// that claims 2026-07-28 gets -32601 (404 over HTTP) from the transports,
/// because rmcp would answer some of them.
pub const REMOVED_IN_STATELESS: &[&str] = &[
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// The message of the -32601 for a removed method.
pub fn removed_method_message(method: &str) -> String {
    format!(
        "Method not found: {method} does not exist in protocol {}",
        FIRST_STATELESS_VERSION.as_str()
    )
}

/// Whether a request whose `_meta` names `version` claims the stateless era:
/// the first stateless revision or a later one (revisions are dates, so they
/// compare as strings).
pub fn claims_stateless_era(version: &str) -> bool {
    version >= FIRST_STATELESS_VERSION.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stateless_era_starts_at_2026_07_28() {
        assert!(claims_stateless_era("2026-07-28"));
        assert!(claims_stateless_era("2027-01-01"));
        assert!(!claims_stateless_era("2025-11-25"));
        assert_eq!(SUPPORTED_VERSIONS[0], FIRST_STATELESS_VERSION);
    }

    #[test]
    fn removed_methods_are_named_in_the_message() {
        assert_eq!(
            removed_method_message("ping"),
            "Method not found: ping does not exist in protocol 2026-07-28"
        );
        for method in REMOVED_IN_STATELESS {
            assert!(KNOWN_METHODS.contains(method));
        }
    }
}
