//! Opaque access tokens, checked by asking the authorization server (RFC 7662
//! token introspection) with Wharf's own client credentials.
//!
//! An answer is cached until the token's `exp`, keyed by the token's SHA-256
//! (the token itself is not kept), so a client making many calls costs one
//! introspection. Answers without `exp` are not cached.

use std::collections::HashMap;
use std::sync::Mutex;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;
use sha2::{Digest, Sha256};
use url::Url;

use super::{Caller, TokenError, fetch, unix_now};

/// The most cached answers; past it, expired ones are dropped, then all.
const MAX_CACHED: usize = 10_000;

/// An introspection endpoint and the credentials to call it.
pub struct Introspection {
    url: Url,
    /// `Basic base64(client_id:client_secret)`.
    authorization: String,
    cache: Mutex<HashMap<[u8; 32], (Caller, u64)>>,
}

impl std::fmt::Debug for Introspection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Introspection({})", self.url)
    }
}

impl Introspection {
    pub fn new(url: &str, client_id: &str, client_secret: &str) -> Result<Self, String> {
        let url = Url::parse(url).map_err(|e| format!("{url}: not a URL: {e}"))?;
        fetch::check_url(&url)?;
        // RFC 6749 §2.3.1: each part form-urlencoded before joining.
        let credentials = format!(
            "{}:{}",
            form_urlencode(client_id),
            form_urlencode(client_secret)
        );
        Ok(Self {
            url,
            authorization: format!("Basic {}", STANDARD.encode(credentials)),
            cache: Mutex::default(),
        })
    }

    /// The caller `token` stands for, if the server says it is active, for
    /// `resource`, from a `trusted` issuer (when it names one) and unexpired.
    pub async fn check(
        &self,
        token: &str,
        resource: &str,
        trusted: &[&str],
    ) -> Result<Caller, TokenError> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some((caller, exp)) = self.cache.lock().unwrap().get(&digest)
            && *exp > unix_now()
        {
            return Ok(caller.clone());
        }
        let form = format!(
            "token={}&token_type_hint=access_token",
            form_urlencode(token)
        );
        let answer = fetch::post_form(&self.url, &self.authorization, form)
            .await
            .map_err(|e| TokenError::Unavailable(e.to_string()))?;
        let (caller, exp) = judge(&answer, resource, trusted)?;
        if let Some(exp) = exp {
            let mut cache = self.cache.lock().unwrap();
            if cache.len() >= MAX_CACHED {
                let now = unix_now();
                cache.retain(|_, (_, exp)| *exp > now);
                if cache.len() >= MAX_CACHED {
                    cache.clear();
                }
            }
            cache.insert(digest, (caller.clone(), exp));
        }
        Ok(caller)
    }
}

/// An introspection answer's verdict, and the token's `exp` if it has one.
fn judge(
    answer: &Value,
    resource: &str,
    trusted: &[&str],
) -> Result<(Caller, Option<u64>), TokenError> {
    if answer.get("active") != Some(&Value::Bool(true)) {
        return Err(TokenError::Inactive);
    }
    let exp = answer.get("exp").and_then(Value::as_u64);
    if exp.is_some_and(|exp| exp <= unix_now()) {
        return Err(TokenError::Expired);
    }
    let audience_ok = match answer.get("aud") {
        None => true,
        Some(Value::String(aud)) => aud == resource,
        Some(Value::Array(auds)) => auds.iter().any(|a| a.as_str() == Some(resource)),
        Some(_) => false,
    };
    if !audience_ok {
        return Err(TokenError::Audience(resource.to_owned()));
    }
    if let Some(iss) = answer.get("iss").and_then(Value::as_str)
        && !trusted.is_empty()
        && !trusted.contains(&iss)
    {
        return Err(TokenError::Issuer(iss.to_owned()));
    }
    let text = |name: &str| answer.get(name).and_then(Value::as_str).map(str::to_owned);
    let caller = Caller {
        subject: text("sub"),
        client_id: text("client_id"),
        scopes: text("scope")
            .unwrap_or_default()
            .split_ascii_whitespace()
            .map(str::to_owned)
            .collect(),
    };
    Ok((caller, exp))
}

/// `application/x-www-form-urlencoded` of one value.
fn form_urlencode(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const RESOURCE: &str = "https://wharf.example/mcp";

    #[test]
    fn answers_are_judged() {
        let later = unix_now() + 60;
        let (caller, exp) = judge(
            &json!({"active": true, "sub": "bob", "client_id": "c", "scope": "a b", "exp": later, "aud": [RESOURCE]}),
            RESOURCE,
            &[],
        )
        .unwrap();
        assert_eq!(caller.subject.as_deref(), Some("bob"));
        assert_eq!(caller.scopes.iter().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(exp, Some(later));

        let cases = [
            (json!({"active": false}), TokenError::Inactive),
            (json!({}), TokenError::Inactive),
            (json!({"active": true, "exp": 5}), TokenError::Expired),
            (
                json!({"active": true, "aud": "https://other.example"}),
                TokenError::Audience(RESOURCE.into()),
            ),
            (
                json!({"active": true, "iss": "https://evil.example"}),
                TokenError::Issuer("https://evil.example".into()),
            ),
        ];
        for (answer, error) in cases {
            assert_eq!(
                judge(&answer, RESOURCE, &["https://as.example"]).unwrap_err(),
                error,
                "{answer}"
            );
        }
    }

    #[test]
    fn credentials_are_form_encoded_then_base64() {
        let i = Introspection::new("https://as.example/introspect", "wharf", "a:b c").unwrap();
        assert_eq!(
            i.authorization,
            format!("Basic {}", STANDARD.encode("wharf:a%3Ab+c"))
        );
        assert_eq!(
            format!("{i:?}"),
            "Introspection(https://as.example/introspect)"
        );
    }
}
