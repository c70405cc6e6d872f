//! Plugin logs for the client: the level a legacy session sets with
//! `logging/setLevel`, or the one a 2026-07-28 request names in its `_meta`.
//! (The logs themselves travel in [`super::events`].)
#![allow(deprecated)] // Logging is deprecated (SEP-2577) but still part of both eras.

use rmcp::RoleServer;
use rmcp::model::LoggingLevel;
use rmcp::service::RequestContext;

use super::WharfServer;

/// `logging/setLevel` of a legacy session: its later requests' plugin logs at
/// `level` or above reach the client.
pub(super) fn set_level(server: &WharfServer, level: LoggingLevel) {
    *server.session.log_level.lock().expect("log level lock") = Some(level);
}

/// The least severe plugin log level this request wants to see: the
/// request's own `logLevel` (2026-07-28), else the session's (legacy).
pub(super) fn wanted_log_level(
    server: &WharfServer,
    context: &RequestContext<RoleServer>,
) -> Option<LoggingLevel> {
    context
        .meta
        .log_level()
        .or_else(|| *server.session.log_level.lock().expect("log level lock"))
}
