//! Outbound HTTP (`wasi:http`): the allow-list of hosts and the hook that checks
//! every request against it.
//!
//! Every component may import `wasi:http` (JavaScript components always do), so the
//! interface is always linked; a plugin without an `[http]` grant simply has every
//! request refused with the error code `HTTP-request-denied`. Redirects are not
//! followed by the host: each hop is a new request from the guest, checked again.
//! Connections (and TLS configuration) are created per request, when a request is
//! allowed, never at start-up.

use std::fmt;

use wasmtime_wasi_http::{RequestOptions, WasiBody, WasiHttpHooks};

/// Why an allow-list entry was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    #[error("`{0}` is not a host name or host:port (no scheme, path or user info)")]
    Malformed(String),
    #[error("`{0}`: a wildcard may only be a whole first label, as in `*.example.com`")]
    Wildcard(String),
}

/// One allowed host: `example.com` (default port of the scheme), `example.com:8080`,
/// `example.com:*` (any port), `*.example.com` (any subdomain, not the domain itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern {
    /// Lower-case host; for a wildcard, the suffix after `*.`.
    host: String,
    wildcard: bool,
    port: PortRule,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PortRule {
    Default,
    Any,
    Exactly(u16),
}

impl HostPattern {
    /// Parses one entry of `[http] allow`.
    pub fn parse(text: &str) -> Result<Self, PatternError> {
        let malformed = || PatternError::Malformed(text.to_string());
        let (host, port) = match text.rsplit_once(':') {
            // An IPv6 literal is bracketed, so its colons are inside `[...]`.
            Some((host, port)) if !port.contains(']') => {
                let port = match port {
                    "*" => PortRule::Any,
                    port => PortRule::Exactly(port.parse().map_err(|_| malformed())?),
                };
                (host, port)
            }
            _ => (text, PortRule::Default),
        };
        let (host, wildcard) = match host.strip_prefix("*.") {
            Some(rest) => (rest, true),
            None => (host, false),
        };
        if host.contains('*') {
            return Err(PatternError::Wildcard(text.to_string()));
        }
        let valid = !host.is_empty()
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '[' | ']' | ':'));
        if !valid {
            return Err(malformed());
        }
        Ok(Self {
            host: host.to_ascii_lowercase(),
            wildcard,
            port,
        })
    }

    /// Whether a request to `host` on `port` (the scheme's default port is
    /// `default_port`) matches.
    fn matches(&self, host: &str, port: u16, default_port: u16) -> bool {
        let host_ok = if self.wildcard {
            host.len() > self.host.len() + 1
                && host.ends_with(&self.host)
                && host.as_bytes()[host.len() - self.host.len() - 1] == b'.'
        } else {
            host == self.host
        };
        let port_ok = match self.port {
            PortRule::Default => port == default_port,
            PortRule::Any => true,
            PortRule::Exactly(p) => port == p,
        };
        host_ok && port_ok
    }
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.wildcard {
            f.write_str("*.")?;
        }
        f.write_str(&self.host)?;
        match self.port {
            PortRule::Default => Ok(()),
            PortRule::Any => f.write_str(":*"),
            PortRule::Exactly(port) => write!(f, ":{port}"),
        }
    }
}

/// The hosts a plugin may reach; empty (nothing) by default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostAllowList {
    patterns: Vec<HostPattern>,
}

impl HostAllowList {
    /// An allow-list of these patterns.
    pub fn new(patterns: Vec<HostPattern>) -> Self {
        Self { patterns }
    }

    /// Whether nothing is allowed.
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// The patterns, as written in a manifest.
    pub fn patterns(&self) -> &[HostPattern] {
        &self.patterns
    }

    /// Whether a request to `uri` may be sent. Only `http` and `https` are known.
    pub fn allows(&self, uri: &http::Uri) -> bool {
        let default_port = match uri.scheme_str() {
            Some("http") => 80,
            Some("https") => 443,
            _ => return false,
        };
        let Some(authority) = uri.authority() else {
            return false;
        };
        let host = authority.host().to_ascii_lowercase();
        let port = authority.port_u16().unwrap_or(default_port);
        self.patterns
            .iter()
            .any(|p| p.matches(&host, port, default_port))
    }
}

/// The `wasi:http` hooks of one call: checks each request and remembers refusals,
/// so a failed call can say which host was refused.
pub(crate) struct OutboundHttp {
    plugin: std::sync::Arc<str>,
    allow: std::sync::Arc<HostAllowList>,
    /// `host[:port]` of every refused request, in order.
    pub(crate) denied: Vec<String>,
    /// The call's W3C `traceparent`, added to each allowed request that has
    /// none (OpenTelemetry export on).
    pub(crate) traceparent: Option<std::sync::Arc<str>>,
}

impl OutboundHttp {
    pub(crate) fn new(
        plugin: std::sync::Arc<str>,
        allow: std::sync::Arc<HostAllowList>,
        traceparent: Option<std::sync::Arc<str>>,
    ) -> Self {
        Self {
            plugin,
            allow,
            denied: Vec::new(),
            traceparent,
        }
    }
}

type SendResult = wasmtime_wasi_http::Result<(
    http::Response<WasiBody>,
    Box<dyn Future<Output = wasmtime_wasi_http::Result<()>> + Send>,
)>;

impl WasiHttpHooks for OutboundHttp {
    fn send_request(
        &mut self,
        mut request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        fut: Box<dyn Future<Output = wasmtime_wasi_http::Result<()>> + Send>,
    ) -> Box<dyn Future<Output = SendResult> + Send> {
        if self.allow.allows(request.uri()) {
            if let Some(traceparent) = &self.traceparent
                && let Ok(value) = http::HeaderValue::from_str(traceparent)
            {
                request.headers_mut().entry("traceparent").or_insert(value);
            }
            return wasmtime_wasi_http::default_hooks().send_request(request, options, fut);
        }
        let target = request
            .uri()
            .authority()
            .map_or_else(|| request.uri().to_string(), ToString::to_string);
        tracing::warn!(plugin = %self.plugin, host = %target, "outbound HTTP request refused: host not allowed");
        self.denied.push(target);
        Box::new(async { Err(wasmtime_wasi_http::Error::HttpRequestDenied) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(patterns: &[&str]) -> HostAllowList {
        HostAllowList::new(
            patterns
                .iter()
                .map(|p| HostPattern::parse(p).unwrap())
                .collect(),
        )
    }

    fn allows(list: &HostAllowList, uri: &str) -> bool {
        list.allows(&uri.parse().unwrap())
    }

    #[test]
    fn plain_host_means_the_default_port() {
        let list = list(&["api.example.com"]);
        assert!(allows(&list, "https://api.example.com/x"));
        assert!(allows(&list, "http://API.example.com/"));
        assert!(allows(&list, "https://api.example.com:443/"));
        assert!(!allows(&list, "https://api.example.com:8443/"));
        assert!(!allows(&list, "https://example.com/"));
        assert!(!allows(&list, "https://api.example.com.evil.net/"));
    }

    #[test]
    fn ports_and_wildcards() {
        let list = list(&["127.0.0.1:8080", "*.example.org", "any.test:*"]);
        assert!(allows(&list, "http://127.0.0.1:8080/"));
        assert!(!allows(&list, "http://127.0.0.1:8081/"));
        assert!(!allows(&list, "http://127.0.0.1/"));
        assert!(allows(&list, "https://a.example.org/"));
        assert!(allows(&list, "https://a.b.example.org/"));
        assert!(!allows(&list, "https://example.org/"));
        assert!(!allows(&list, "https://badexample.org/"));
        assert!(allows(&list, "http://any.test:1234/"));
        assert!(!allows(&list, "ftp://any.test:1234/"));
    }

    #[test]
    fn empty_list_allows_nothing() {
        assert!(!allows(&HostAllowList::default(), "https://example.com/"));
    }

    #[test]
    fn bad_patterns_are_refused() {
        assert_eq!(
            HostPattern::parse("https://x.com"),
            Err(PatternError::Malformed("https://x.com".into()))
        );
        assert_eq!(
            HostPattern::parse("a.*.com"),
            Err(PatternError::Wildcard("a.*.com".into()))
        );
        assert!(HostPattern::parse("x.com:99999").is_err());
        assert!(HostPattern::parse("").is_err());
        assert!(HostPattern::parse("x.com/path").is_err());
        assert_eq!(
            HostPattern::parse("[::1]:80").unwrap().to_string(),
            "[::1]:80"
        );
        assert_eq!(
            HostPattern::parse("*.A.com:*").unwrap().to_string(),
            "*.a.com:*"
        );
    }
}
