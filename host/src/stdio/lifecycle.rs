//! How a stdio connection's lifecycle starts, and why it never changes after.
//!
//! rmcp serves a connection in one of two lifecycles, chosen by the first
//! request that starts its main loop: an `initialize` (legacy, 2025-11-25 and
//! earlier) or a request with complete `_meta` (stateless, 2026-07-28). The
//! spec scopes that choice to the process (basic/versioning, "A dual-era
//! server selects its behavior from how the client opens"), and rmcp keeps it
//! per connection. But rmcp answers a later `initialize` too, and its
//! `set_peer_info` then replaces the negotiated version with the one that
//! `initialize` asked for: the era flips under the client (after an
//! `initialize` naming 2026-07-28, `ping` was refused as a 2026-07-28
//! method). So the screen refuses every `initialize` once a lifecycle has
//! started, with the errors made here.

use rmcp::model::{ClientRequest, ErrorCode, ErrorData, GetMeta, ProtocolVersion};

use crate::protocol::{FIRST_STATELESS_VERSION, claims_stateless_era};

/// The lifecycle a connection started with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Lifecycle {
    /// Started by `initialize`.
    Legacy,
    /// Started by a request with complete `_meta`; no `initialize`.
    Stateless,
}

/// The lifecycle `request` starts if none has started yet, mirroring rmcp's
/// pre-lifecycle rule: an `initialize`, or the first request other than
/// `ping`/`server/discover` with complete `_meta` and a supported version.
/// Until one starts, a notification would end rmcp's server.
pub(super) fn started_by(
    request: &ClientRequest,
    supported: &[ProtocolVersion],
) -> Option<Lifecycle> {
    match request {
        ClientRequest::InitializeRequest(_) => Some(Lifecycle::Legacy),
        ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_) => None,
        other => {
            let meta = other.get_meta();
            let complete = meta
                .missing_required_keys(&FIRST_STATELESS_VERSION)
                .is_empty()
                && meta
                    .protocol_version()
                    .is_some_and(|version| supported.contains(&version));
            complete.then_some(Lifecycle::Stateless)
        }
    }
}

/// The answer to an `initialize` on a connection whose lifecycle has started.
///
/// - After a legacy handshake: `-32600`, as the TypeScript SDK answers a
///   second `initialize` on a session ("Server already initialized").
/// - After stateless requests: `-32022` with `data.supported` (the stateless
///   revisions) and `data.requested` (the version `initialize` asked for). The
///   spec leaves the code to the server but says an error to `initialize`
///   SHOULD name the supported versions, and a dual-era client that gets this
///   recognised modern error retries with one of them instead of falling back
///   to `initialize` (basic/transports/stdio, "Backward Compatibility"); the
///   TypeScript SDK's stdio entry answers the same.
pub(super) fn refuse_initialize(
    lifecycle: Lifecycle,
    requested: &ProtocolVersion,
    supported: &[ProtocolVersion],
) -> ErrorData {
    match lifecycle {
        Lifecycle::Legacy => ErrorData::invalid_request(
            "Invalid Request: this connection is already initialized; \
             initialize may be sent only once per connection",
            None,
        ),
        Lifecycle::Stateless => {
            let stateless: Vec<&ProtocolVersion> = supported
                .iter()
                .filter(|version| claims_stateless_era(version.as_str()))
                .collect();
            ErrorData::new(
                ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
                format!(
                    "Unsupported protocol version: this connection serves protocol {} \
                     (requests carry their version in _meta), which has no initialize",
                    FIRST_STATELESS_VERSION.as_str()
                ),
                Some(serde_json::json!({
                    "supported": stateless,
                    "requested": requested,
                })),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::SUPPORTED_VERSIONS;
    use rmcp::model::ClientJsonRpcMessage;

    fn request(line: &str) -> ClientRequest {
        match serde_json::from_str::<ClientJsonRpcMessage>(line).unwrap() {
            ClientJsonRpcMessage::Request(request) => request.request,
            other => panic!("not a request: {other:?}"),
        }
    }

    const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

    #[test]
    fn initialize_starts_the_legacy_lifecycle() {
        let initialize = request(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
        );
        assert_eq!(
            started_by(&initialize, SUPPORTED_VERSIONS),
            Some(Lifecycle::Legacy)
        );
    }

    #[test]
    fn a_request_with_complete_meta_starts_the_stateless_lifecycle() {
        let list = request(&format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{META}}}}}"#
        ));
        assert_eq!(
            started_by(&list, SUPPORTED_VERSIONS),
            Some(Lifecycle::Stateless)
        );
        assert_eq!(
            started_by(&list, &[ProtocolVersion::V_2025_11_25]),
            None,
            "an unsupported version starts nothing"
        );
        let incomplete = request(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        );
        assert_eq!(started_by(&incomplete, SUPPORTED_VERSIONS), None);
        for probe in ["ping", "server/discover"] {
            let probe = request(&format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"{probe}","params":{{{META}}}}}"#
            ));
            assert_eq!(started_by(&probe, SUPPORTED_VERSIONS), None);
        }
    }

    #[test]
    fn a_second_initialize_is_an_invalid_request() {
        let error = refuse_initialize(
            Lifecycle::Legacy,
            &ProtocolVersion::V_2025_06_18,
            SUPPORTED_VERSIONS,
        );
        assert_eq!(error.code, ErrorCode::INVALID_REQUEST);
        assert_eq!(
            error.message,
            "Invalid Request: this connection is already initialized; \
             initialize may be sent only once per connection"
        );
        assert_eq!(error.data, None);
    }

    #[test]
    fn initialize_after_stateless_requests_names_the_stateless_versions() {
        let error = refuse_initialize(
            Lifecycle::Stateless,
            &ProtocolVersion::V_2025_11_25,
            SUPPORTED_VERSIONS,
        );
        assert_eq!(error.code, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(
            error.message,
            "Unsupported protocol version: this connection serves protocol 2026-07-28 \
             (requests carry their version in _meta), which has no initialize"
        );
        assert_eq!(
            error.data,
            Some(serde_json::json!({"supported": ["2026-07-28"], "requested": "2025-11-25"}))
        );
    }
}
