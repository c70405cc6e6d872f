//! Wharf as an OAuth 2.1 resource server (MCP authorization, 2026-07-28):
//! checks the access token of a request and says who the caller is.
//!
//! Not transport-specific: the HTTP transport calls [`ResourceServer::verify`]
//! with the bearer token and answers 401/403 from the [`TokenError`]; the
//! [`Caller`] it gets back travels with the request so the server can filter
//! and refuse by scope. The token itself never goes further than this module:
//! it is not logged, not cached (introspection caches by its digest), and
//! never reaches a plugin.
//!
//! A JWT access token ([`jwt`]) is checked against the keys of the issuer it
//! names, which must be one of the trusted ones ([`issuer`]: metadata
//! discovery and the key cache; [`keys`]: which keys and algorithms count).
//! Anything else is asked about at the introspection endpoint, if one is set
//! ([`introspection`]). Outgoing requests go through [`fetch`].

pub mod fetch;
pub mod introspection;
pub mod issuer;
pub mod jwt;
pub mod keys;

use std::collections::BTreeSet;

pub use introspection::Introspection;
pub use issuer::Issuer;

/// Seconds of clock skew allowed on `exp` and `nbf`.
pub const LEEWAY_SECS: u64 = 60;

/// Who made a request, from a verified token: what the audit trail records
/// and what per-tool scopes are checked against. Never holds the token.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Caller {
    /// The token's `sub`: the user (or the client, in a client-credentials grant).
    pub subject: Option<String>,
    /// The OAuth client that got the token (`client_id`, or `azp`).
    pub client_id: Option<String>,
    /// The scopes the token grants.
    pub scopes: BTreeSet<String>,
}

impl Caller {
    /// Who owns a legacy session this caller opens: its subject and client,
    /// so that another user's token (or another client's) cannot use it.
    pub fn session_owner(&self) -> String {
        format!(
            "{}\u{0}{}",
            self.subject.as_deref().unwrap_or_default(),
            self.client_id.as_deref().unwrap_or_default()
        )
    }

    /// Whether the token grants every one of `needed`.
    pub fn grants<'a>(&self, needed: impl IntoIterator<Item = &'a str>) -> bool {
        needed.into_iter().all(|s| self.scopes.contains(s))
    }
}

/// Why a token was refused. The message is what the client sees as
/// `error_description` in the 401 challenge; it never repeats the token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("malformed token: {0}")]
    Malformed(String),
    #[error("the token is not a JWT and no introspection endpoint is configured")]
    Opaque,
    #[error("algorithm {0:?} is not accepted: only public-key signatures (RS, PS, ES, EdDSA)")]
    Algorithm(String),
    #[error("algorithm {0} does not match the signing key")]
    KeyAlgorithm(String),
    #[error("the token has no {0:?} claim")]
    MissingClaim(&'static str),
    #[error("issuer {0:?} is not trusted")]
    Issuer(String),
    #[error("no key {0:?} in the issuer's key set")]
    UnknownKey(String),
    #[error("invalid signature")]
    Signature,
    #[error("the token has expired")]
    Expired,
    #[error("the token is not valid yet")]
    NotYetValid,
    #[error("the token's audience is not {0}")]
    Audience(String),
    #[error("the token is not active")]
    Inactive,
    /// The authorization server could not be asked: not the client's fault.
    #[error("cannot check the token now: {0}")]
    Unavailable(String),
}

/// What a resource server trusts: its own identifier and the issuers.
pub struct ResourceServer {
    resource: String,
    issuers: Vec<Issuer>,
    introspection: Option<Introspection>,
}

impl std::fmt::Debug for ResourceServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceServer")
            .field("resource", &self.resource)
            .field("issuers", &self.issuer_ids())
            .field("introspection", &self.introspection)
            .finish()
    }
}

impl ResourceServer {
    /// A resource server known as `resource` (its canonical URI, RFC 8707:
    /// tokens must name it in `aud`), trusting `issuers`, with an optional
    /// introspection endpoint for opaque tokens.
    pub fn new(
        resource: &str,
        issuers: &[String],
        introspection: Option<Introspection>,
    ) -> Result<Self, String> {
        let url = url::Url::parse(resource).map_err(|e| format!("{resource}: not a URL: {e}"))?;
        fetch::check_url(&url)?;
        if url.fragment().is_some() {
            return Err(format!("{resource}: a resource URI has no fragment"));
        }
        if issuers.is_empty() && introspection.is_none() {
            return Err("no --auth-issuer and no --auth-introspection".into());
        }
        Ok(Self {
            resource: resource.to_owned(),
            issuers: issuers
                .iter()
                .map(|i| Issuer::new(i))
                .collect::<Result<_, _>>()?,
            introspection,
        })
    }

    /// The canonical URI of this server, as tokens' `aud` must name it.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The trusted issuers' identifiers.
    pub fn issuer_ids(&self) -> Vec<&str> {
        self.issuers.iter().map(Issuer::id).collect()
    }

    /// Fetches every issuer's keys now, so the first request does not wait;
    /// a failure is logged and retried on the first token.
    pub async fn prefetch(&self) {
        for issuer in &self.issuers {
            if let Err(e) = issuer.refresh().await {
                tracing::warn!(issuer = issuer.id(), "{e}");
            }
        }
    }

    /// The caller a bearer token stands for, or why it is refused.
    pub async fn verify(&self, token: &str) -> Result<Caller, TokenError> {
        if !jwt::looks_like_jwt(token) || self.issuers.is_empty() {
            return match &self.introspection {
                Some(introspection) => {
                    introspection
                        .check(token, &self.resource, &self.issuer_ids())
                        .await
                }
                None if jwt::looks_like_jwt(token) => {
                    Err(TokenError::Malformed("no issuer is trusted".into()))
                }
                None => Err(TokenError::Opaque),
            };
        }
        let claimed = jwt::inspect(token)?;
        let issuer = self
            .issuers
            .iter()
            .find(|i| i.id() == claimed.issuer)
            .ok_or_else(|| TokenError::Issuer(claimed.issuer.clone()))?;
        let key = issuer.key(claimed.kid.as_deref()).await?;
        jwt::verify(token, &claimed, &key, &self.resource, LEEWAY_SECS)
    }
}

/// Seconds since the Unix epoch.
pub(crate) fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resource_server_needs_a_way_to_check_tokens() {
        assert_eq!(
            ResourceServer::new("https://wharf.example/mcp", &[], None).unwrap_err(),
            "no --auth-issuer and no --auth-introspection"
        );
        assert_eq!(
            ResourceServer::new(
                "http://wharf.example/mcp",
                &["https://as.example".into()],
                None
            )
            .unwrap_err(),
            "http://wharf.example/mcp: plain http:// is accepted only on a loopback address; use https://"
        );
    }

    #[tokio::test]
    async fn an_untrusted_issuer_is_named() {
        use jwt::tests::{TestKey, good_claims};
        let server = ResourceServer::new(
            jwt::tests::RESOURCE,
            &["https://other.example".into()],
            None,
        )
        .unwrap();
        let token = TestKey::new("k1").sign(Some("k1"), &good_claims());
        assert_eq!(
            server.verify(&token).await.unwrap_err(),
            TokenError::Issuer(jwt::tests::ISSUER.into())
        );
        assert_eq!(
            server.verify("opaque").await.unwrap_err(),
            TokenError::Opaque
        );
    }

    #[test]
    fn scopes_are_granted_all_or_nothing() {
        let caller = Caller {
            scopes: ["a".to_owned(), "b".to_owned()].into(),
            ..Caller::default()
        };
        assert!(caller.grants(["a", "b"]));
        assert!(caller.grants([]));
        assert!(!caller.grants(["a", "c"]));
    }
}
