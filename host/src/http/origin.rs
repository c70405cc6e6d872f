//! DNS-rebinding and cross-origin defence: the `Host` and `Origin` checks.
//!
//! A browser page on any site can make requests to `http://127.0.0.1:PORT`,
//! and a hostile DNS name can be re-pointed at 127.0.0.1. MCP therefore asks
//! servers to reject a present but disallowed `Origin` (403) and, when bound to
//! loopback, a `Host` that is not a loopback name. rmcp 3.11 accepts any
//! `Origin` by default (an empty allow-list disables its check), so Wharf does
//! both checks here, in front of every route (see [`super::gate`]), and turns
//! rmcp's own checks off to keep a single source of truth.

use std::borrow::Cow;

use axum::extract::Request;
use axum::http::{StatusCode, Uri, header};
use axum::response::Response;

use super::rejection;

/// Names that always denote this machine.
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Which `Host` and `Origin` values the server accepts.
#[derive(Debug, Clone, Default)]
pub struct OriginPolicy {
    /// Accept loopback hosts and origins (`localhost`, `127.0.0.1`, `[::1]`, any port);
    /// on when the server is bound to a loopback address.
    pub local: bool,
    /// Further `Host` names (with or without a port). When `local` is off and this
    /// is empty, any `Host` is accepted.
    pub hosts: Vec<String>,
    /// Further origins, `scheme://host[:port]`, or `*` for any, or `null`.
    pub origins: Vec<String>,
}

impl OriginPolicy {
    /// Whether a request with this `Host` header value may proceed.
    pub fn host_allowed(&self, host: &str) -> bool {
        let Ok(authority) = host.trim().parse::<axum::http::uri::Authority>() else {
            return false;
        };
        let name = normalize(authority.host());
        if self.local && LOOPBACK_HOSTS.contains(&name.as_str()) {
            return true;
        }
        if !self.local && self.hosts.is_empty() {
            return true;
        }
        self.hosts.iter().any(|allowed| {
            let Ok(allowed) = allowed.trim().parse::<axum::http::uri::Authority>() else {
                return false;
            };
            normalize(allowed.host()) == name
                && allowed
                    .port_u16()
                    .is_none_or(|port| Some(port) == authority.port_u16())
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

/// A serialized origin, `(scheme, host, port)` with the scheme's default port filled in.
#[derive(Debug, PartialEq, Eq)]
struct Origin {
    scheme: String,
    host: String,
    port: Option<u16>,
}

impl Origin {
    fn parse(value: &str) -> Option<Self> {
        let uri: Uri = value.trim().parse().ok()?;
        let scheme = uri.scheme_str()?.to_ascii_lowercase();
        let authority = uri.authority()?;
        let port = authority.port_u16().or(match scheme.as_str() {
            "http" => Some(80),
            "https" => Some(443),
            _ => None,
        });
        Some(Self {
            host: normalize(authority.host()),
            scheme,
            port,
        })
    }
}

fn normalize(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase()
}

/// The refusal, if any: 403 for a disallowed `Origin` or `Host`, 400 for no `Host` at all.
pub fn refusal(policy: &OriginPolicy, request: &Request) -> Option<Response> {
    let headers = request.headers();
    let host = match headers.get(header::HOST).and_then(|h| h.to_str().ok()) {
        Some(host) => Some(Cow::Borrowed(host)),
        None => request.uri().authority().map(|a| Cow::Owned(a.to_string())),
    };
    let Some(host) = host else {
        return Some(rejection(
            StatusCode::BAD_REQUEST,
            "Bad Request: missing Host header",
        ));
    };
    if !policy.host_allowed(&host) {
        tracing::warn!(
            host = &*host,
            "rejected a request for a disallowed Host (DNS rebinding?)"
        );
        return Some(rejection(
            StatusCode::FORBIDDEN,
            "Forbidden: Host header is not allowed",
        ));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let allowed = origin.to_str().is_ok_and(|o| policy.origin_allowed(o));
        if !allowed {
            tracing::warn!(?origin, "rejected a request from a disallowed Origin");
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
        for host in ["127.0.0.1:8080", "localhost", "LOCALHOST:1", "[::1]:9"] {
            assert!(policy.host_allowed(host), "{host}");
        }
        for host in ["evil.example:8080", "127.0.0.2", "", "a b"] {
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
