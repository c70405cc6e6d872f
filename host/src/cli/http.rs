//! The Streamable HTTP settings of `wharf serve` (`--http` and the flags that
//! only matter with it), and how they become [`HttpOptions`].

use std::net::SocketAddr;
use std::time::Duration;

use clap::Args;
use wharf::http::{BearerToken, HttpOptions, OriginPolicy};

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
}

impl HttpArgs {
    /// The address to serve HTTP on; `None` serves stdio.
    pub fn address(&self) -> Option<SocketAddr> {
        self.http
    }

    /// The transport's options when bound to `addr`; `call_timeout` (the
    /// default limit of one call) sets the request timeout unless
    /// `--request-timeout-ms` does, and the grace given to calls at shutdown.
    pub fn options(self, addr: SocketAddr, call_timeout: Duration) -> HttpOptions {
        HttpOptions {
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
            shutdown_grace: call_timeout + Duration::from_secs(1),
            ..HttpOptions::default()
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
