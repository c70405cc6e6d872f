//! Checking a JWT access token (RFC 9068) against a key: first what the token
//! says of itself (algorithm, key id, issuer), read without trusting it to pick
//! the issuer and key; then the signature and the claims.

use std::collections::HashSet;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation};
use serde::Deserialize;
use serde_json::Value;

use super::keys::{Key, asymmetric};
use super::{Caller, TokenError};

/// What a token claims about itself, before any check.
#[derive(Debug, PartialEq, Eq)]
pub struct Unverified {
    pub algorithm: Algorithm,
    pub kid: Option<String>,
    pub issuer: String,
}

/// Whether `token` has the shape of a JWS (three dot-separated parts whose
/// first is a JSON header); anything else may be an opaque token.
pub fn looks_like_jwt(token: &str) -> bool {
    let mut parts = token.split('.');
    let header = parts.next().unwrap_or_default();
    parts.count() == 2
        && URL_SAFE_NO_PAD
            .decode(header)
            .ok()
            .and_then(|h| serde_json::from_slice::<Value>(&h).ok())
            .is_some_and(|h| h.is_object())
}

/// The token's algorithm, key id and issuer, read without trusting them.
pub fn inspect(token: &str) -> Result<Unverified, TokenError> {
    let mut parts = token.split('.');
    let (Some(header), Some(payload), Some(_), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(TokenError::Malformed(
            "not three dot-separated parts".into(),
        ));
    };
    let header = decode_part(header, "header")?;
    let alg = header
        .get("alg")
        .and_then(Value::as_str)
        .ok_or_else(|| TokenError::Malformed("the header has no \"alg\"".into()))?;
    let algorithm = asymmetric(alg).ok_or_else(|| TokenError::Algorithm(alg.to_owned()))?;
    let kid = header.get("kid").and_then(Value::as_str).map(str::to_owned);
    let payload = decode_part(payload, "payload")?;
    let issuer = payload
        .get("iss")
        .and_then(Value::as_str)
        .ok_or(TokenError::MissingClaim("iss"))?
        .to_owned();
    Ok(Unverified {
        algorithm,
        kid,
        issuer,
    })
}

fn decode_part(part: &str, what: &str) -> Result<Value, TokenError> {
    let bytes = URL_SAFE_NO_PAD
        .decode(part)
        .map_err(|_| TokenError::Malformed(format!("the {what} is not base64url")))?;
    let value: Value = serde_json::from_slice(&bytes)
        .map_err(|_| TokenError::Malformed(format!("the {what} is not JSON")))?;
    if !value.is_object() {
        return Err(TokenError::Malformed(format!(
            "the {what} is not a JSON object"
        )));
    }
    Ok(value)
}

/// The claims Wharf reads from a verified token.
#[derive(Deserialize)]
struct Claims {
    sub: Option<String>,
    client_id: Option<String>,
    azp: Option<String>,
    /// RFC 9068 §2.2.3: space-separated.
    scope: Option<String>,
    /// Some servers (Azure AD, Okta) send an array instead.
    scp: Option<Value>,
}

/// The caller, if `token` is signed by `key` with the algorithm it claims,
/// for `resource`, from `issuer`, and within its time (with `leeway` seconds).
pub fn verify(
    token: &str,
    claimed: &Unverified,
    key: &Key,
    resource: &str,
    leeway: u64,
) -> Result<Caller, TokenError> {
    if !key.algorithms.contains(&claimed.algorithm) {
        return Err(TokenError::KeyAlgorithm(format!("{:?}", claimed.algorithm)));
    }
    let mut validation = Validation::new(claimed.algorithm);
    validation.leeway = leeway;
    validation.validate_nbf = true;
    validation.set_audience(&[resource]);
    validation.set_issuer(&[&claimed.issuer]);
    validation.required_spec_claims = HashSet::from(["exp".into(), "aud".into(), "iss".into()]);
    let data = jsonwebtoken::decode::<Claims>(token, &key.decoding, &validation).map_err(|e| {
        match e.into_kind() {
            ErrorKind::ExpiredSignature => TokenError::Expired,
            ErrorKind::ImmatureSignature => TokenError::NotYetValid,
            ErrorKind::InvalidAudience => TokenError::Audience(resource.to_owned()),
            ErrorKind::InvalidIssuer => TokenError::Issuer(claimed.issuer.clone()),
            ErrorKind::InvalidSignature => TokenError::Signature,
            ErrorKind::MissingRequiredClaim(claim) => match claim.as_str() {
                "exp" => TokenError::MissingClaim("exp"),
                "aud" => TokenError::MissingClaim("aud"),
                _ => TokenError::MissingClaim("iss"),
            },
            ErrorKind::InvalidAlgorithm => {
                TokenError::KeyAlgorithm(format!("{:?}", claimed.algorithm))
            }
            ErrorKind::Json(_) => TokenError::Malformed("a claim has the wrong type".into()),
            other => TokenError::Malformed(format!("{other:?}")),
        }
    })?;
    let claims = data.claims;
    let mut scopes: Vec<String> = claims
        .scope
        .as_deref()
        .unwrap_or_default()
        .split_ascii_whitespace()
        .map(str::to_owned)
        .collect();
    match claims.scp {
        Some(Value::String(s)) => scopes.extend(s.split_ascii_whitespace().map(str::to_owned)),
        Some(Value::Array(items)) => {
            scopes.extend(items.iter().filter_map(Value::as_str).map(str::to_owned))
        }
        _ => {}
    }
    Ok(Caller {
        subject: claims.sub,
        client_id: claims.client_id.or(claims.azp),
        scopes: scopes.into_iter().collect(),
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::oauth::keys::KeySet;
    use jsonwebtoken::{EncodingKey, Header};
    use ring::rand::SystemRandom;
    use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair as _};
    use serde_json::json;

    pub const RESOURCE: &str = "https://wharf.example/mcp";
    pub const ISSUER: &str = "https://as.example";

    /// A P-256 key pair made for the test: the private half and its JWK.
    pub struct TestKey {
        pub pkcs8: Vec<u8>,
        pub jwk: Value,
    }

    impl TestKey {
        pub fn new(kid: &str) -> Self {
            let rng = SystemRandom::new();
            let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
                .unwrap()
                .as_ref()
                .to_vec();
            let pair =
                EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &pkcs8, &rng).unwrap();
            let point = pair.public_key().as_ref();
            let jwk = json!({
                "kty": "EC", "crv": "P-256", "kid": kid, "use": "sig",
                "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
                "y": URL_SAFE_NO_PAD.encode(&point[33..]),
            });
            Self { pkcs8, jwk }
        }

        pub fn sign(&self, kid: Option<&str>, claims: &Value) -> String {
            let mut header = Header::new(Algorithm::ES256);
            header.kid = kid.map(str::to_owned);
            jsonwebtoken::encode(&header, claims, &EncodingKey::from_ec_der(&self.pkcs8)).unwrap()
        }
    }

    pub fn now() -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64
    }

    pub fn good_claims() -> Value {
        json!({
            "iss": ISSUER, "aud": RESOURCE, "sub": "alice", "client_id": "cli",
            "exp": now() + 300, "iat": now(), "scope": "files:read tools",
        })
    }

    fn check(key: &TestKey, token: &str) -> Result<Caller, TokenError> {
        let set = KeySet::from_jwks(&json!({"keys": [key.jwk]})).unwrap();
        let claimed = inspect(token)?;
        verify(
            token,
            &claimed,
            set.find(claimed.kid.as_deref()).unwrap(),
            RESOURCE,
            30,
        )
    }

    fn with(claims: &[(&str, Value)]) -> Value {
        let mut c = good_claims();
        for (k, v) in claims {
            if v.is_null() {
                c.as_object_mut().unwrap().remove(*k);
            } else {
                c[*k] = v.clone();
            }
        }
        c
    }

    #[test]
    fn a_good_token_names_its_caller() {
        let key = TestKey::new("k1");
        let caller = check(&key, &key.sign(Some("k1"), &good_claims())).unwrap();
        assert_eq!(caller.subject.as_deref(), Some("alice"));
        assert_eq!(caller.client_id.as_deref(), Some("cli"));
        assert_eq!(
            caller.scopes.iter().collect::<Vec<_>>(),
            ["files:read", "tools"]
        );
        // An audience array holding the resource is fine too, and `scp`.
        let token = key.sign(
            Some("k1"),
            &with(&[
                ("aud", json!(["other", RESOURCE])),
                ("scope", Value::Null),
                ("scp", json!(["a", "b"])),
            ]),
        );
        let caller = check(&key, &token).unwrap();
        assert_eq!(caller.scopes.iter().collect::<Vec<_>>(), ["a", "b"]);
    }

    #[test]
    fn every_rejection_has_its_error() {
        let key = TestKey::new("k1");
        let cases: Vec<(Value, TokenError)> = vec![
            (with(&[("exp", json!(now() - 120))]), TokenError::Expired),
            (
                with(&[("nbf", json!(now() + 120))]),
                TokenError::NotYetValid,
            ),
            (
                with(&[("aud", json!("https://other.example/mcp"))]),
                TokenError::Audience(RESOURCE.into()),
            ),
            (
                with(&[("exp", Value::Null)]),
                TokenError::MissingClaim("exp"),
            ),
            (
                with(&[("aud", Value::Null)]),
                TokenError::MissingClaim("aud"),
            ),
            (
                with(&[("iss", Value::Null)]),
                TokenError::MissingClaim("iss"),
            ),
            // A non-numeric `exp` counts as none.
            (
                with(&[("exp", json!("tomorrow"))]),
                TokenError::MissingClaim("exp"),
            ),
            (
                with(&[("sub", json!(5))]),
                TokenError::Malformed("a claim has the wrong type".into()),
            ),
        ];
        for (claims, error) in cases {
            assert_eq!(
                check(&key, &key.sign(Some("k1"), &claims)).unwrap_err(),
                error,
                "{claims}"
            );
        }
        // Within the leeway, a just-expired token still passes.
        assert!(
            check(
                &key,
                &key.sign(Some("k1"), &with(&[("exp", json!(now() - 10))]))
            )
            .is_ok()
        );
    }

    #[test]
    fn a_signature_by_another_key_is_refused() {
        let key = TestKey::new("k1");
        let impostor = TestKey::new("k1");
        let token = impostor.sign(Some("k1"), &good_claims());
        assert_eq!(check(&key, &token).unwrap_err(), TokenError::Signature);
    }

    #[test]
    fn algorithm_confusion_is_refused() {
        let body = URL_SAFE_NO_PAD.encode(good_claims().to_string());
        for alg in ["none", "HS256"] {
            let header = URL_SAFE_NO_PAD.encode(json!({"alg": alg, "kid": "k1"}).to_string());
            let token = format!("{header}.{body}.");
            assert_eq!(
                inspect(&token).unwrap_err(),
                TokenError::Algorithm(alg.into())
            );
        }
        // An RS256 header on an EC key: the key decides.
        let key = TestKey::new("k1");
        let signed = key.sign(Some("k1"), &good_claims());
        let header = URL_SAFE_NO_PAD.encode(json!({"alg": "RS256", "kid": "k1"}).to_string());
        let forged = format!("{header}.{}", signed.split_once('.').unwrap().1);
        assert_eq!(
            check(&key, &forged).unwrap_err(),
            TokenError::KeyAlgorithm("RS256".into())
        );
    }

    #[test]
    fn malformed_tokens_say_what_is_wrong() {
        assert_eq!(
            inspect("abc").unwrap_err(),
            TokenError::Malformed("not three dot-separated parts".into())
        );
        assert_eq!(
            inspect("!!.e30.x").unwrap_err(),
            TokenError::Malformed("the header is not base64url".into())
        );
        let header = URL_SAFE_NO_PAD.encode(r#"{"alg":"ES256"}"#);
        assert_eq!(
            inspect(&format!("{header}.WzFd.x")).unwrap_err(),
            TokenError::Malformed("the payload is not a JSON object".into())
        );
        assert!(!looks_like_jwt("opaque-token"));
        assert!(looks_like_jwt(&format!("{header}.e30.x")));
    }
}
