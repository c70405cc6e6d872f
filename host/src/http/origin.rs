//! DNS-rebinding and cross-origin defence: the `Host` and `Origin` checks.
//!
//! A browser page on any site can make requests to `http://127.0.0.1:PORT`,
//! and a hostile DNS name can be re-pointed at 127.0.0.1. MCP therefore asks
//! servers to reject a present but disallowed `Origin` (403) and, when bound to
//! loopback, a `Host` that is not a loopback name. rmcp 3.11 accepts any
//! `Origin` by default (an empty allow-list disables its check), so Wharf does
//! both checks here, in front of every route (see [`super::gate`]), and turns
//! rmcp's own checks off to keep a single source of truth.

use std::net::Ipv6Addr;

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;

use super::rejection;
use crate::excerpt::Excerpt;

/// Names that always denote this machine.
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Which `Host` and `Origin` values the server accepts.
#[derive(Debug, Clone, Default)]
pub struct OriginPolicy {
    /// Accept loopback hosts and origins (`localhost`, `127.0.0.1`, `[::1]`, any port);
    /// on when the server is bound to a loopback address.
    pub local: bool,
    /// Further `Host` names (with or without a port). When `local` is off and this
    /// is empty, any well-formed `Host` is accepted.
    pub hosts: Vec<String>,
    /// Further origins, `scheme://host[:port]`, or `*` for any, or `null`.
    pub origins: Vec<String>,
}

impl OriginPolicy {
    /// Whether a request with this `Host` header value (or request-target
    /// authority) may proceed. A value that is not `host[:port]` never does.
    pub fn host_allowed(&self, host: &str) -> bool {
        let Some(authority) = HostPort::parse(host.trim()) else {
            return false;
        };
        if self.local && LOOPBACK_HOSTS.contains(&authority.host.as_str()) {
            return true;
        }
        if !self.local && self.hosts.is_empty() {
            return true;
        }
        self.hosts.iter().any(|allowed| {
            let Some(allowed) = HostPort::parse(allowed.trim()) else {
                return false;
            };
            allowed.host == authority.host
                && allowed.port.is_none_or(|port| Some(port) == authority.port)
        })
    }

    /// Whether a request with this `Origin` header value may proceed.
    pub fn origin_allowed(&self, origin: &str) -> bool {
        let origin = origin.trim();
        if self.origins.iter().any(|allowed| allowed == "*") {
            return true;
        }
        if origin.eq_ignore_ascii_case("null") {
            return self.origins.iter().any(|o| o.eq_ignore_ascii_case("null"));
        }
        let Some(parsed) = Origin::parse(origin) else {
            return false;
        };
        if self.local && LOOPBACK_HOSTS.contains(&parsed.host.as_str()) {
            return true;
        }
        self.origins
            .iter()
            .filter_map(|allowed| Origin::parse(allowed))
            .any(|allowed| allowed == parsed)
    }
}

/// `host[:port]` as RFC 9110 allows it in `Host` (RFC 3986 `authority` without
/// userinfo), parsed strictly: an IPv6 literal in brackets and nothing after
/// it but a port; otherwise a name of letters, digits, `-`, `.`, `_` and `~`.
/// The host is lowercased, an IPv6 address written in its canonical form.
#[derive(Debug, PartialEq, Eq)]
struct HostPort {
    host: String,
    port: Option<u16>,
}

impl HostPort {
    fn parse(value: &str) -> Option<Self> {
        let (host, rest) = if let Some(literal) = value.strip_prefix('[') {
            let (address, rest) = literal.split_once(']')?;
            (address.parse::<Ipv6Addr>().ok()?.to_string(), rest)
        } else {
            let end = value.find(':').unwrap_or(value.len());
            let (name, rest) = value.split_at(end);
            let name_char = |c: char| c.is_ascii_alphanumeric() || "-._~".contains(c);
            if name.is_empty() || !name.chars().all(name_char) {
                return None;
            }
            (name.to_ascii_lowercase(), rest)
        };
        let port = match rest {
            "" | ":" => None,
            _ => {
                let digits = rest.strip_prefix(':')?;
                if digits.len() > 5 || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                Some(digits.parse::<u16>().ok()?)
            }
        };
        Some(Self { host, port })
    }
}

/// A serialized origin, `(scheme, host, port)` with the scheme's default port
/// filled in: exactly `scheme://host[:port]`, as browsers send it.
#[derive(Debug, PartialEq, Eq)]
struct Origin {
    scheme: String,
    host: String,
    port: Option<u16>,
}

impl Origin {
    fn parse(value: &str) -> Option<Self> {
        let (scheme, authority) = value.trim().split_once("://")?;
        let scheme_char = |c: char| c.is_ascii_alphanumeric() || "+-.".contains(c);
        if !scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            || !scheme.chars().all(scheme_char)
        {
            return None;
        }
        let scheme = scheme.to_ascii_lowercase();
        let HostPort { host, port } = HostPort::parse(authority)?;
        let port = port.or(match scheme.as_str() {
            "http" => Some(80),
            "https" => Some(443),
            _ => None,
        });
        Some(Self { scheme, host, port })
    }
}

/// The one value of a header that must not repeat: `Err(())` when repeated.
fn single(request: &Request, name: header::HeaderName) -> Result<Option<&HeaderValue>, ()> {
    let mut values = request.headers().get_all(name).iter();
    let first = values.next();
    match values.next() {
        Some(_) => Err(()),
        None => Ok(first),
    }
}

/// The refusal, if any: 400 for no `Host`, or a repeated `Host` or `Origin`;
/// 403 for a disallowed `Origin`, `Host`, or request-target host.
///
/// A request target in absolute form (`POST http://host/mcp`) names the host
/// the request is for (RFC 9112, section 3.2.2), so that host is checked too.
pub fn refusal(policy: &OriginPolicy, request: &Request) -> Option<Response> {
    let Ok(host_header) = single(request, header::HOST) else {
        return Some(rejection(
            StatusCode::BAD_REQUEST,
            "Bad Request: more than one Host header",
        ));
    };
    let Ok(origin) = single(request, header::ORIGIN) else {
        return Some(rejection(
            StatusCode::BAD_REQUEST,
            "Bad Request: more than one Origin header",
        ));
    };
    let target = request.uri().authority().map(|a| a.as_str().as_bytes());
    let hosts = [host_header.map(HeaderValue::as_bytes), target];
    if hosts.iter().all(Option::is_none) {
        return Some(rejection(
            StatusCode::BAD_REQUEST,
            "Bad Request: missing Host header",
        ));
    }
    for host in hosts.into_iter().flatten() {
        let allowed = std::str::from_utf8(host).is_ok_and(|h| policy.host_allowed(h));
        if !allowed {
            tracing::warn!(
                host = %Excerpt::new(host),
                "rejected a request for a disallowed Host (DNS rebinding?)"
            );
            return Some(rejection(
                StatusCode::FORBIDDEN,
                "Forbidden: Host header is not allowed",
            ));
        }
    }
    if let Some(origin) = origin {
        let allowed = origin.to_str().is_ok_and(|o| policy.origin_allowed(o));
        if !allowed {
            tracing::warn!(
                origin = %Excerpt::new(origin.as_bytes()),
                "rejected a request from a disallowed Origin"
            );
            return Some(rejection(
                StatusCode::FORBIDDEN,
                "Forbidden: Origin is not allowed",
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local() -> OriginPolicy {
        OriginPolicy {
            local: true,
            hosts: vec![],
            origins: vec!["https://app.example.com".into()],
        }
    }

    #[test]
    fn loopback_hosts_pass_and_others_do_not_when_local() {
        let policy = local();
        for host in [
            "127.0.0.1:8080",
            "localhost",
            "LOCALHOST:1",
            "[::1]:9",
            "[0:0:0:0:0:0:0:1]",
            "localhost:",
        ] {
            assert!(policy.host_allowed(host), "{host}");
        }
        for host in [
            "evil.example:8080",
            "127.0.0.2",
            "",
            "a b",
            "[::1]evil",
            "[::1]:evil",
            "[::1]:9evil",
            "[::2]",
            "localhost:99999",
            "localhost:-1",
            "localhost:1:2",
            "user@localhost",
            "localhost/x",
            "[::1",
            "::1",
        ] {
            assert!(!policy.host_allowed(host), "{host}");
        }
    }

    #[test]
    fn any_host_passes_on_a_public_bind_without_a_list() {
        let open = OriginPolicy::default();
        assert!(open.host_allowed("wharf.example.com"));
        let listed = OriginPolicy {
            hosts: vec!["wharf.example.com:443".into(), "other.example".into()],
            ..OriginPolicy::default()
        };
        assert!(listed.host_allowed("wharf.example.com:443"));
        assert!(!listed.host_allowed("wharf.example.com:8443"));
        assert!(listed.host_allowed("other.example:1234"));
        assert!(!listed.host_allowed("localhost"));
    }

    #[test]
    fn origins_match_scheme_host_and_port() {
        let policy = local();
        for origin in [
            "http://localhost:5173",
            "https://127.0.0.1",
            "http://[::1]:3000",
            "https://app.example.com",
            "https://app.example.com:443",
        ] {
            assert!(policy.origin_allowed(origin), "{origin}");
        }
        for origin in [
            "https://evil.example",
            "http://app.example.com",
            "https://app.example.com:8443",
            "null",
            "not a url",
            "http://[::1]evil",
            "http://localhost/path",
            "http://user@localhost",
            "http://localhost https://evil.example",
            "://localhost",
        ] {
            assert!(!policy.origin_allowed(origin), "{origin}");
        }
    }

    #[test]
    fn wildcard_and_null_are_explicit_opt_ins() {
        let any = OriginPolicy {
            origins: vec!["*".into()],
            ..OriginPolicy::default()
        };
        assert!(any.origin_allowed("https://evil.example"));
        let null = OriginPolicy {
            origins: vec!["null".into()],
            ..OriginPolicy::default()
        };
        assert!(null.origin_allowed("null"));
        assert!(!null.origin_allowed("http://localhost"));
    }
}
