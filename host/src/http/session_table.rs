//! The legacy sessions, counted and capped.
//!
//! rmcp's `LocalSessionManager` keeps sessions in memory with no limit: 10,000
//! `initialize`s without a `DELETE` held about 680 MB until the idle timeout.
//! [`SessionTable`] wraps it, delegating every operation, and adds a count of
//! live sessions with a ceiling (`--max-sessions`).
//!
//! Strategy: the gate ([`session`](super::session)) asks for an [`Admission`]
//! before it hands a legacy `initialize` to rmcp, and answers 503 when none is
//! left; the admission is held until the answer is back, by which time rmcp
//! has created the session. A session counts from `create_session` until
//! rmcp removes it (`DELETE`, idle expiry, a failed handshake, shutdown), all
//! of which go through [`close_session`](SessionManager::close_session) here.
//! Admissions in flight count too, so concurrent `initialize`s cannot
//! overshoot; `create_session` also refuses past the ceiling, for a request
//! that reached rmcp without an admission (its answer is then rmcp's 500).
//!
//! Behind a load balancer a session lives on one replica only. With a route
//! (`--session-route NAME`) every session id starts with `NAME.`, so a
//! balancer can send a session's requests to the replica that holds it by the
//! id alone (deploy/nginx/wharf.conf; docs/replicas.md).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::WorkerTransport;
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, SessionConfig, SessionError,
    create_local_session,
};
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionId};

/// Why the table refused.
#[derive(Debug, thiserror::Error)]
pub enum SessionTableError {
    #[error("the server already holds its limit of {0} sessions (--max-sessions)")]
    Full(usize),
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
}

/// The live legacy sessions, at most `max` of them.
#[derive(Debug)]
pub struct SessionTable {
    sessions: LocalSessionManager,
    max: usize,
    counts: Mutex<Counts>,
    /// The prefix of every session id (without its `.`), if any.
    route: Option<String>,
    /// Who opened each session, when an OAuth access token let it in: the
    /// session serves that caller only (the spec's binding of a session to
    /// its user), so a stolen or guessed id is worthless with another token.
    owners: Mutex<HashMap<SessionId, String>>,
}

/// The longest `--session-route`.
pub const MAX_SESSION_ROUTE: usize = 63;

/// Checks a session route: 1 to 63 ASCII letters, digits, `-` or `_`, so that
/// an id made from it is a visible-ASCII header value and a balancer can match
/// it with a simple pattern.
pub fn check_session_route(route: &str) -> Result<(), String> {
    let fits = (1..=MAX_SESSION_ROUTE).contains(&route.len())
        && route
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if fits {
        Ok(())
    } else {
        Err(format!(
            "a session route is 1 to {MAX_SESSION_ROUTE} ASCII letters, digits, '-' or '_'"
        ))
    }
}

#[derive(Debug, Default)]
struct Counts {
    /// Sessions created and not yet closed.
    live: usize,
    /// Admissions handed out and not yet dropped.
    admitting: usize,
    /// Whether the last admission was refused (so the refusal is logged once
    /// per run of them, not once per request).
    full: bool,
}

impl SessionTable {
    /// A table of at most `max` sessions, each closed after `idle` without
    /// traffic.
    pub fn new(max: usize, idle: Duration) -> Self {
        let mut sessions = LocalSessionManager::default();
        sessions.session_config = SessionConfig::default();
        sessions.session_config.keep_alive = Some(idle);
        Self {
            sessions,
            max,
            counts: Mutex::default(),
            route: None,
            owners: Mutex::default(),
        }
    }

    /// The table, with every new session id starting with `route` and a `.`
    /// (checked by [`check_session_route`]).
    pub fn with_route(mut self, route: Option<String>) -> Self {
        self.route = route;
        self
    }

    /// The most sessions the table holds.
    pub fn max(&self) -> usize {
        self.max
    }

    /// How many sessions are live.
    pub fn live(&self) -> usize {
        self.counts().live
    }

    /// A place for one new session, held while its `initialize` is answered;
    /// `None` when live sessions and admissions in flight fill the table.
    pub fn admit(self: &Arc<Self>) -> Option<Admission> {
        let mut counts = self.counts();
        if counts.live + counts.admitting >= self.max {
            if !counts.full {
                counts.full = true;
                tracing::warn!(
                    max_sessions = self.max,
                    "the session table is full: legacy initializes are refused 503 \
                     until sessions end"
                );
            }
            return None;
        }
        counts.full = false;
        counts.admitting += 1;
        Some(Admission(self.clone()))
    }

    /// Whether `id` names a live session that `caller` may use: any caller
    /// for a session nobody owns, only its owner for one opened with a token
    /// ([`SessionTable::bind`]).
    pub async fn knows(&self, id: &str, caller: Option<&str>) -> bool {
        let id = SessionId::from(id);
        if !self.sessions.sessions.read().await.contains_key(&id) {
            return false;
        }
        match self.owners().get(&id) {
            Some(owner) => caller == Some(owner.as_str()),
            None => true,
        }
    }

    /// Records that the session `id` belongs to `owner` (an OAuth caller's
    /// [`session_owner`](crate::oauth::Caller::session_owner)).
    pub fn bind(&self, id: &str, owner: String) {
        self.owners().insert(SessionId::from(id), owner);
    }

    fn owners(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, String>> {
        self.owners.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn counts(&self) -> std::sync::MutexGuard<'_, Counts> {
        // The counts stay consistent even if a holder panicked.
        self.counts.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A place for one session being created; given back when dropped.
#[derive(Debug)]
pub struct Admission(Arc<SessionTable>);

impl Drop for Admission {
    fn drop(&mut self) {
        self.0.counts().admitting -= 1;
    }
}

impl SessionManager for SessionTable {
    type Error = SessionTableError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        {
            let mut counts = self.counts();
            if counts.live >= self.max {
                return Err(SessionTableError::Full(self.max));
            }
            counts.live += 1;
        }
        let Some(route) = &self.route else {
            return match self.sessions.create_session().await {
                Ok(created) => Ok(created),
                Err(error) => {
                    self.counts().live -= 1;
                    Err(error.into())
                }
            };
        };
        // rmcp's own `create_session`, with an id of ours: the route, then
        // 128 random bits.
        let mut random = [0u8; 16];
        getrandom::fill(&mut random).expect("the operating system's random number generator");
        let hex: String = random.iter().map(|b| format!("{b:02x}")).collect();
        let id = SessionId::from(format!("{route}.{hex}"));
        let (handle, worker) =
            create_local_session(id.clone(), self.sessions.session_config.clone());
        self.sessions
            .sessions
            .write()
            .await
            .insert(id.clone(), handle);
        Ok((id, WorkerTransport::spawn(worker)))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.sessions.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.sessions.has_session(id).await?)
    }

    /// As rmcp's own, but counts the session out when it was there.
    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let handle = self.sessions.sessions.write().await.remove(id);
        self.owners().remove(id);
        let Some(handle) = handle else {
            return Ok(());
        };
        self.counts().live -= 1;
        match handle.close().await {
            // The worker already exited: nothing left to clean up.
            Ok(()) | Err(SessionError::SessionServiceTerminated) => Ok(()),
            Err(error) => Err(LocalSessionManagerError::from(error).into()),
        }
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(SessionManager::create_stream(&self.sessions, id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        Ok(self.sessions.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(SessionManager::create_standalone_stream(&self.sessions, id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(SessionManager::resume(&self.sessions, id, last_event_id).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(max: usize) -> Arc<SessionTable> {
        Arc::new(SessionTable::new(max, Duration::from_secs(60)))
    }

    #[tokio::test]
    async fn a_route_prefixes_every_session_id_and_the_session_works() {
        let table = SessionTable::new(4, Duration::from_secs(60)).with_route(Some("r-2".into()));
        let (id, _transport) = table.create_session().await.unwrap();
        let (route, random) = id.split_once('.').unwrap();
        assert_eq!(route, "r-2");
        assert_eq!(random.len(), 32);
        assert!(random.bytes().all(|b| b.is_ascii_hexdigit()));
        assert!(table.knows(&id, None).await);
        assert_eq!(table.live(), 1);
        let (other, _transport) = table.create_session().await.unwrap();
        assert_ne!(id, other);
        table.close_session(&id).await.unwrap();
        assert!(!table.knows(&id, None).await);
        assert_eq!(table.live(), 1);
    }

    #[tokio::test]
    async fn a_bound_session_serves_its_owner_only() {
        let table = table(2);
        let (id, _transport) = table.create_session().await.unwrap();
        table.bind(&id, "alice\u{0}app".into());
        assert!(table.knows(&id, Some("alice\u{0}app")).await);
        assert!(!table.knows(&id, Some("bob\u{0}app")).await);
        assert!(!table.knows(&id, Some("alice\u{0}other")).await);
        assert!(!table.knows(&id, None).await);
        table.close_session(&id).await.unwrap();
        assert!(
            table.owners().is_empty(),
            "the binding ends with the session"
        );
        let (free, _transport) = table.create_session().await.unwrap();
        assert!(
            table.knows(&free, Some("anyone")).await,
            "an unbound session"
        );
    }

    #[test]
    fn session_routes_are_short_plain_names() {
        let refusal = "a session route is 1 to 63 ASCII letters, digits, '-' or '_'";
        for good in ["a", "wharf-0", "pod_1", &"x".repeat(63)] {
            assert_eq!(check_session_route(good), Ok(()), "{good}");
        }
        for bad in ["", "a.b", "a b", "é", "x/y", &"x".repeat(64)] {
            assert_eq!(check_session_route(bad), Err(refusal.into()), "{bad:?}");
        }
    }

    #[tokio::test]
    async fn sessions_and_admissions_share_the_ceiling() {
        let table = table(2);
        let first = table.admit().expect("room for one");
        let (id, _transport) = table.create_session().await.unwrap();
        drop(first);
        assert_eq!(table.live(), 1);
        let second = table.admit().expect("room for two");
        assert!(table.admit().is_none(), "an admission in flight counts");
        drop(second);
        let _third = table.admit().expect("the dropped admission is free again");
        table.close_session(&id).await.unwrap();
        assert_eq!(table.live(), 0);
    }

    #[tokio::test]
    async fn creating_past_the_ceiling_is_refused() {
        let table = table(1);
        let (id, _transport) = table.create_session().await.unwrap();
        let error = table
            .create_session()
            .await
            .err()
            .expect("over the ceiling");
        assert_eq!(
            error.to_string(),
            "the server already holds its limit of 1 sessions (--max-sessions)"
        );
        assert!(table.admit().is_none());
        table.close_session(&id).await.unwrap();
        assert!(table.admit().is_some());
    }

    #[tokio::test]
    async fn closing_twice_counts_once() {
        let table = table(3);
        let (id, _transport) = table.create_session().await.unwrap();
        let (_other, _transport2) = table.create_session().await.unwrap();
        assert!(table.knows(id.as_ref(), None).await);
        table.close_session(&id).await.unwrap();
        table.close_session(&id).await.unwrap();
        assert!(!table.knows(id.as_ref(), None).await);
        assert_eq!(table.live(), 1);
    }
}
