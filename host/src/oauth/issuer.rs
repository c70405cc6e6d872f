//! One trusted authorization server: its metadata (found once) and its keys
//! (fetched, cached, refreshed when a token names a key not in the cache).
//!
//! Strategy: the key set sits in an [`ArcSwap`], so checking a token reads it
//! without a lock. A token naming an unknown `kid` (after the server rotated
//! its keys) takes the refresh lock and fetches the set again, unless a fetch
//! was made within [`REFRESH_COOLDOWN`]: a stream of made-up key ids costs the
//! authorization server at most one request per cooldown.

use std::sync::Arc;
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use serde_json::Value;
use tokio::sync::Mutex;
use url::Url;

use super::TokenError;
use super::fetch;
use super::keys::{Key, KeySet};

/// The shortest time between two fetches of one issuer's key set.
pub const REFRESH_COOLDOWN: Duration = Duration::from_secs(5);

/// A trusted issuer.
pub struct Issuer {
    /// Exactly as configured, and as tokens must name it in `iss`.
    id: String,
    url: Url,
    keys: ArcSwap<KeySet>,
    /// The key set's address once discovered, and when it was last fetched.
    refresh: Mutex<Refresh>,
}

#[derive(Default)]
struct Refresh {
    jwks_uri: Option<Url>,
    last: Option<Instant>,
}

impl Issuer {
    /// An issuer identifier: an `https://` URL (or `http://` on loopback)
    /// without query or fragment (RFC 8414 §2).
    pub fn new(id: &str) -> Result<Self, String> {
        let url = Url::parse(id).map_err(|e| format!("{id}: not a URL: {e}"))?;
        fetch::check_url(&url)?;
        if url.query().is_some() || url.fragment().is_some() {
            return Err(format!("{id}: an issuer has no query or fragment"));
        }
        Ok(Self {
            id: id.to_owned(),
            url,
            keys: ArcSwap::default(),
            refresh: Mutex::default(),
        })
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// The key `kid` names, fetching the key set again if it is not known.
    pub async fn key(&self, kid: Option<&str>) -> Result<Key, TokenError> {
        if let Some(key) = self.keys.load().find(kid) {
            return Ok(key.clone());
        }
        self.refresh().await?;
        self.keys
            .load()
            .find(kid)
            .cloned()
            .ok_or_else(|| TokenError::UnknownKey(kid.unwrap_or("(none)").to_owned()))
    }

    /// Fetches the metadata (the first time) and the key set, unless fetched
    /// within the cooldown.
    pub async fn refresh(&self) -> Result<(), TokenError> {
        let mut refresh = self.refresh.lock().await;
        if refresh.last.is_some_and(|t| t.elapsed() < REFRESH_COOLDOWN) {
            return Ok(());
        }
        refresh.last = Some(Instant::now());
        let jwks_uri = match &refresh.jwks_uri {
            Some(uri) => uri.clone(),
            None => {
                let uri = self.discover().await?;
                refresh.jwks_uri = Some(uri.clone());
                uri
            }
        };
        let document = fetch::get_json(&jwks_uri)
            .await
            .map_err(|e| TokenError::Unavailable(e.to_string()))?;
        let set = KeySet::from_jwks(&document)
            .map_err(|e| TokenError::Unavailable(format!("{jwks_uri}: {e}")))?;
        tracing::info!(issuer = %self.id, keys = set.keys.len(), "fetched the issuer's signing keys");
        self.keys.store(Arc::new(set));
        Ok(())
    }

    /// The `jwks_uri` from the issuer's metadata: RFC 8414 first, then
    /// OpenID Connect Discovery, each checked to name this issuer.
    async fn discover(&self) -> Result<Url, TokenError> {
        let mut failures = Vec::new();
        for candidate in metadata_urls(&self.url) {
            let document = match fetch::get_json(&candidate).await {
                Ok(document) => document,
                Err(e) => {
                    failures.push(e.to_string());
                    continue;
                }
            };
            return self.jwks_uri_of(&candidate, &document);
        }
        Err(TokenError::Unavailable(format!(
            "no metadata for issuer {}: {}",
            self.id,
            failures.join("; ")
        )))
    }

    fn jwks_uri_of(&self, from: &Url, document: &Value) -> Result<Url, TokenError> {
        let unavailable = |why: String| TokenError::Unavailable(format!("{from}: {why}"));
        let named = document.get("issuer").and_then(Value::as_str);
        if named != Some(self.id.as_str()) {
            return Err(unavailable(format!(
                "the metadata names issuer {named:?}, not {:?}",
                self.id
            )));
        }
        let uri = document
            .get("jwks_uri")
            .and_then(Value::as_str)
            .ok_or_else(|| unavailable("the metadata has no jwks_uri".into()))?;
        let uri = Url::parse(uri).map_err(|e| unavailable(format!("jwks_uri: {e}")))?;
        fetch::check_url(&uri).map_err(unavailable)?;
        Ok(uri)
    }
}

/// Where an issuer's metadata may be, in order (RFC 8414 §3.1 inserts the
/// well-known segment before the issuer's path; OpenID appends it too).
pub fn metadata_urls(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/');
    let at = |p: String| {
        let mut url = issuer.clone();
        url.set_path(&p);
        url
    };
    let mut urls = vec![
        at(format!("/.well-known/oauth-authorization-server{path}")),
        at(format!("/.well-known/openid-configuration{path}")),
    ];
    if !path.is_empty() {
        urls.push(at(format!("{path}/.well-known/openid-configuration")));
    }
    urls
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oauth::jwt::tests::TestKey;
    use axum::routing::get;
    use serde_json::json;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn metadata_is_looked_for_where_the_rfcs_say() {
        let urls = |issuer: &str| -> Vec<String> {
            metadata_urls(&Url::parse(issuer).unwrap())
                .iter()
                .map(Url::to_string)
                .collect()
        };
        assert_eq!(
            urls("https://as.example"),
            [
                "https://as.example/.well-known/oauth-authorization-server",
                "https://as.example/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            urls("https://as.example/tenant1/"),
            [
                "https://as.example/.well-known/oauth-authorization-server/tenant1",
                "https://as.example/.well-known/openid-configuration/tenant1",
                "https://as.example/tenant1/.well-known/openid-configuration",
            ]
        );
    }

    #[test]
    fn issuers_must_be_https_or_loopback() {
        assert_eq!(
            Issuer::new("http://as.example").err().unwrap(),
            "http://as.example/: plain http:// is accepted only on a loopback address; use https://"
        );
        assert_eq!(
            Issuer::new("https://as.example/?tenant=1").err().unwrap(),
            "https://as.example/?tenant=1: an issuer has no query or fragment"
        );
        assert!(Issuer::new("http://127.0.0.1:4000").is_ok());
    }

    /// An authorization server on loopback serving OpenID metadata (no
    /// RFC 8414 document) and a key set the test can swap.
    async fn serve(keys: Arc<std::sync::Mutex<Value>>, fetches: Arc<AtomicUsize>) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let issuer = base.clone();
        let app = axum::Router::new()
            .route(
                "/.well-known/openid-configuration",
                get(move || {
                    let issuer = issuer.clone();
                    async move {
                        json!({"issuer": issuer, "jwks_uri": format!("{issuer}/jwks")}).to_string()
                    }
                }),
            )
            .route(
                "/jwks",
                get(move || {
                    fetches.fetch_add(1, Ordering::SeqCst);
                    let keys = keys.lock().unwrap().clone();
                    async move { keys.to_string() }
                }),
            );
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        base
    }

    #[tokio::test]
    async fn keys_are_discovered_cached_and_refreshed_on_rotation() {
        let first = TestKey::new("k1");
        let second = TestKey::new("k2");
        let keys = Arc::new(std::sync::Mutex::new(json!({"keys": [first.jwk]})));
        let fetches = Arc::new(AtomicUsize::new(0));
        let base = serve(keys.clone(), fetches.clone()).await;
        let issuer = Issuer::new(&base).unwrap();

        issuer.key(Some("k1")).await.unwrap();
        issuer.key(Some("k1")).await.unwrap();
        assert_eq!(fetches.load(Ordering::SeqCst), 1, "cached");

        // Rotation: k2 is unknown, but the last fetch is too recent.
        *keys.lock().unwrap() = json!({"keys": [second.jwk]});
        assert_eq!(
            issuer.key(Some("k2")).await.err().unwrap(),
            TokenError::UnknownKey("k2".into())
        );
        assert_eq!(fetches.load(Ordering::SeqCst), 1, "rate-limited");
        // After the cooldown the unknown kid fetches the new set.
        issuer.refresh.lock().await.last = Some(Instant::now() - REFRESH_COOLDOWN);
        issuer.key(Some("k2")).await.unwrap();
        assert_eq!(fetches.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn metadata_naming_another_issuer_is_refused() {
        let keys = Arc::new(std::sync::Mutex::new(json!({"keys": []})));
        let base = serve(keys, Arc::default()).await;
        let issuer = Issuer::new(&format!("{base}/")).unwrap();
        assert_eq!(
            issuer.key(Some("k1")).await.err().unwrap(),
            TokenError::Unavailable(format!(
                "{base}/.well-known/openid-configuration: the metadata names issuer Some({base:?}), not \"{base}/\""
            ))
        );
    }
}
