//! The Streamable HTTP settings of `wharf serve` (`--http` and the flags that
//! only matter with it), and how they become [`HttpOptions`].

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use clap::builder::TypedValueParser as _;
use wharf::http::{
    self, BearerToken, ConnectionLimits, HttpOptions, OriginPolicy, ParamHeader, ParamHeaders,
    Protection, ScopePolicy, ServiceStatus,
};
use wharf::oauth::{Introspection, ResourceServer};
use wharf::registry::Registry;

/// Streamable HTTP transport settings.
#[derive(Args)]
pub struct HttpArgs {
    /// Serve MCP over Streamable HTTP at `http://ADDR/mcp` instead of stdio.
    /// `PORT` alone binds 127.0.0.1; port 0 picks a free port.
    #[arg(long, value_name = "ADDR", value_parser = parse_listen_addr)]
    http: Option<SocketAddr>,

    /// A browser origin allowed to call the server (`scheme://host[:port]`,
    /// `null`, or `*` for any); repeatable. Loopback origins are allowed when
    /// bound to loopback.
    #[arg(long = "allowed-origin", value_name = "ORIGIN")]
    allowed_origins: Vec<String>,

    /// A `Host` name the server answers to (DNS-rebinding defence); repeatable.
    /// Loopback names are allowed when bound to loopback; with no list on a
    /// public address, any Host is accepted.
    #[arg(long = "allowed-host", value_name = "HOST")]
    allowed_hosts: Vec<String>,

    /// Require `Authorization: Bearer TOKEN` on /mcp and /metrics.
    #[arg(long, env = "WHARF_AUTH_TOKEN", hide_env_values = true)]
    auth_token: Option<String>,

    /// Act as an OAuth 2.1 resource server: accept JWT access tokens issued by
    /// this authorization server (an `https://` issuer identifier, or
    /// `http://` on loopback); repeatable. Needs --public-url; exclusive with
    /// --auth-token.
    #[arg(
        long = "auth-issuer",
        value_name = "URL",
        requires = "public_url",
        conflicts_with = "auth_token"
    )]
    auth_issuers: Vec<String>,

    /// Check opaque access tokens at this RFC 7662 introspection endpoint,
    /// with --auth-client-id and --auth-client-secret. Needs --public-url;
    /// exclusive with --auth-token.
    #[arg(long, value_name = "URL", requires_all = ["public_url", "auth_client_id", "auth_client_secret"], conflicts_with = "auth_token")]
    auth_introspection: Option<String>,

    /// Wharf's client id at the introspection endpoint.
    #[arg(long, value_name = "ID", requires = "auth_introspection")]
    auth_client_id: Option<String>,

    /// Wharf's client secret at the introspection endpoint.
    #[arg(
        long,
        value_name = "SECRET",
        env = "WHARF_AUTH_CLIENT_SECRET",
        hide_env_values = true,
        requires = "auth_introspection"
    )]
    auth_client_secret: Option<String>,

    /// The canonical URL clients use to reach this server's MCP endpoint
    /// (e.g. `https://tools.example.com/mcp`): access tokens must name it in
    /// `aud` (RFC 8707), and the Protected Resource Metadata names it.
    #[arg(long, value_name = "URL")]
    public_url: Option<String>,

    /// Largest accepted HTTP request body, in bytes (413 above).
    #[arg(long, default_value_t = 4 << 20)]
    max_body_bytes: usize,

    /// Longest an HTTP request may take to start its response, in milliseconds
    /// (408 above). Default: the call timeout plus 5 seconds.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    request_timeout_ms: Option<u64>,

    /// Close a legacy HTTP session after this many seconds without traffic.
    #[arg(long, default_value_t = 1800, value_parser = clap::value_parser!(u64).range(1..))]
    session_idle_secs: u64,

    /// Most legacy sessions open at once; an `initialize` past it is answered
    /// 503 with `Retry-After`.
    #[arg(long, default_value_t = http::DEFAULT_MAX_SESSIONS, value_parser = clap::value_parser!(u64).range(1..).map(|n| n as usize))]
    max_sessions: usize,

    /// Start every legacy session id with NAME and a `.`, so that a load
    /// balancer can send a session's requests to this replica by the id alone
    /// (1 to 63 ASCII letters, digits, `-` or `_`; a pod name, say).
    #[arg(long, env = "WHARF_SESSION_ROUTE", value_name = "NAME", value_parser = parse_session_route)]
    session_route: Option<String>,

    /// Most long-lived SSE streams open at once (`subscriptions/listen` and
    /// legacy GET streams); one more is answered 503 with `Retry-After`.
    #[arg(long, default_value_t = http::DEFAULT_MAX_STREAMS, value_parser = clap::value_parser!(u64).range(1..).map(|n| n as usize))]
    max_streams: usize,

    /// Most HTTP connections open at once; past it, new connections wait
    /// (unaccepted) until one closes. Default: 1024, or fewer to fit the
    /// open-file limit (`ulimit -n`) with 64 descriptors to spare.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..).map(|n| n as usize))]
    max_connections: Option<usize>,

    /// Time a connection has to send a complete request head, in milliseconds,
    /// counted from its accept and from each answer while kept alive: an idle
    /// or slowloris connection is closed after it. Never cuts an open stream.
    #[arg(long, default_value_t = http::DEFAULT_HEADER_TIMEOUT.as_millis() as u64, value_parser = clap::value_parser!(u64).range(1..))]
    header_timeout_ms: u64,

    /// Close a connection whose client takes none of its response for this
    /// many milliseconds (an SSE stream it never reads, say).
    #[arg(long, default_value_t = http::DEFAULT_WRITE_STALL_TIMEOUT.as_millis() as u64, value_parser = clap::value_parser!(u64).range(1..))]
    write_stall_timeout_ms: u64,

    /// On SIGTERM, keep serving for this many milliseconds with `/readyz`
    /// answering 503 before closing the port, so that a load balancer stops
    /// sending work first. Calls in flight then still get their time limit.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=600_000))]
    drain_delay_ms: u64,
}

impl HttpArgs {
    /// The address to serve HTTP on; `None` serves stdio.
    pub fn address(&self) -> Option<SocketAddr> {
        self.http
    }

    /// The transport's options when bound to `addr`; `call_timeout` (the
    /// default limit of one call) sets the request timeout unless
    /// `--request-timeout-ms` does, and the grace given to calls at shutdown.
    pub fn options(
        self,
        addr: SocketAddr,
        call_timeout: Duration,
        status: Arc<ServiceStatus>,
    ) -> anyhow::Result<HttpOptions> {
        let protection = self.protection()?;
        Ok(HttpOptions {
            protection,
            origins: OriginPolicy {
                local: addr.ip().is_loopback(),
                hosts: self.allowed_hosts,
                origins: self.allowed_origins,
            },
            token: self
                .auth_token
                .filter(|t| !t.is_empty())
                .map(BearerToken::new),
            max_body_bytes: self.max_body_bytes,
            request_timeout: self
                .request_timeout_ms
                .map(Duration::from_millis)
                .unwrap_or(call_timeout + Duration::from_secs(5)),
            session_idle: Duration::from_secs(self.session_idle_secs),
            max_sessions: self.max_sessions,
            session_route: self.session_route,
            max_streams: self.max_streams,
            max_connections: fit_open_file_limit(self.max_connections),
            connection: ConnectionLimits {
                header_timeout: Duration::from_millis(self.header_timeout_ms),
                write_stall_timeout: Duration::from_millis(self.write_stall_timeout_ms),
            },
            shutdown_grace: call_timeout + Duration::from_secs(1),
            drain_delay: Duration::from_millis(self.drain_delay_ms),
            status,
            ..HttpOptions::default()
        })
    }

    /// The OAuth resource server the flags ask for, if any.
    fn protection(&self) -> anyhow::Result<Option<Protection>> {
        if self.auth_issuers.is_empty() && self.auth_introspection.is_none() {
            if self.public_url.is_some() {
                anyhow::bail!("--public-url needs --auth-issuer or --auth-introspection");
            }
            return Ok(None);
        }
        let resource = self.public_url.as_deref().unwrap_or_default();
        let introspection = match (
            &self.auth_introspection,
            &self.auth_client_id,
            &self.auth_client_secret,
        ) {
            (Some(url), Some(id), Some(secret)) => Some(
                Introspection::new(url, id, secret)
                    .map_err(|e| anyhow::anyhow!("--auth-introspection {e}"))?,
            ),
            _ => None,
        };
        let server = ResourceServer::new(resource, &self.auth_issuers, introspection)
            .map_err(|e| anyhow::anyhow!("OAuth settings: {e}"))?;
        Ok(Some(Protection {
            server: Arc::new(server),
            scopes: None,
        }))
    }
}

/// The scopes of the tools in the registry's current set: what the transport
/// checks a `tools/call` against and lists in the resource metadata.
pub struct RegistryScopes(pub Arc<Registry>);

impl ScopePolicy for RegistryScopes {
    fn tool_scopes(&self, tool: &str) -> Vec<String> {
        self.0
            .snapshot()
            .get(tool)
            .map(|t| t.scopes().to_vec())
            .unwrap_or_default()
    }

    fn all_scopes(&self) -> Vec<String> {
        let set = self.0.snapshot();
        let all: std::collections::BTreeSet<&String> =
            set.tools().iter().flat_map(|t| t.scopes()).collect();
        all.into_iter().cloned().collect()
    }
}

/// The `x-mcp-header` arguments of the tools in the registry's current set:
/// what the transport checks a `tools/call`'s `Mcp-Param-*` headers against.
pub struct RegistryParamHeaders(pub Arc<Registry>);

impl ParamHeaders for RegistryParamHeaders {
    fn param_headers(&self, tool: &str) -> Vec<ParamHeader> {
        self.0
            .snapshot()
            .get(tool)
            .map(|t| {
                t.param_headers()
                    .iter()
                    .map(|p| ParamHeader {
                        header: p.header.clone(),
                        path: p.path.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// File descriptors kept for everything but connections: plugin folders and
/// grants, the cache, the watcher, the runtimes' own.
const RESERVED_FILES: u64 = 64;

/// `asked` connections (the default when `None`), or fewer when the
/// open-file limit could not hold them (with a warning if they were asked
/// for): past that limit, accepting fails outright.
fn fit_open_file_limit(asked: Option<usize>) -> usize {
    let wanted = asked.unwrap_or(http::DEFAULT_MAX_CONNECTIONS);
    let Some(limit) = open_file_limit() else {
        return wanted;
    };
    let room = limit.saturating_sub(RESERVED_FILES).max(1) as usize;
    if room < wanted {
        if asked.is_none() {
            return room;
        }
        tracing::warn!(
            open_file_limit = limit,
            max_connections = room,
            "--max-connections lowered to fit the open-file limit (ulimit -n)"
        );
        return room;
    }
    wanted
}

/// The soft `RLIMIT_NOFILE`, where there is one.
#[cfg(target_os = "linux")]
fn open_file_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one `rlimit` through a valid pointer.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
    (ok && limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur)
}

#[cfg(not(target_os = "linux"))]
fn open_file_limit() -> Option<u64> {
    None
}

/// `PORT` (on 127.0.0.1), `localhost:PORT`, or an `IP:PORT` socket address.
fn parse_listen_addr(value: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = value.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    if let Some(port) = value.strip_prefix("localhost:") {
        let port = port.parse::<u16>().map_err(|e| format!("bad port: {e}"))?;
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    value
        .parse()
        .map_err(|_| format!("expected PORT, localhost:PORT or IP:PORT, got {value:?}"))
}

/// `--session-route`: a name that fits in a session id.
fn parse_session_route(route: &str) -> Result<String, String> {
    http::session_table::check_session_route(route).map(|()| route.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_fit_the_open_file_limit() {
        let limit = open_file_limit().expect("a Linux open-file limit") as usize;
        let room = limit - RESERVED_FILES as usize;
        assert_eq!(fit_open_file_limit(Some(room + 1)), room);
        assert_eq!(fit_open_file_limit(Some(3)), 3);
        assert_eq!(
            fit_open_file_limit(None),
            http::DEFAULT_MAX_CONNECTIONS.min(room)
        );
    }

    #[test]
    fn listen_addresses_default_to_loopback() {
        assert_eq!(
            parse_listen_addr("8080").unwrap(),
            "127.0.0.1:8080".parse().unwrap()
        );
        assert_eq!(
            parse_listen_addr("localhost:0").unwrap(),
            "127.0.0.1:0".parse().unwrap()
        );
        assert_eq!(
            parse_listen_addr("[::1]:9").unwrap(),
            "[::1]:9".parse().unwrap()
        );
        assert_eq!(
            parse_listen_addr("0.0.0.0:80").unwrap(),
            "0.0.0.0:80".parse().unwrap()
        );
        assert!(parse_listen_addr("example.com:80").is_err());
        assert!(parse_listen_addr("localhost:x").is_err());
    }
}
