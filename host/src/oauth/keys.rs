//! A key set (RFC 7517 JWKS) as the verifier uses it: public signing keys
//! only, each with the one algorithm it may verify.
//!
//! Why each key gets its algorithm here rather than from the token: the
//! token's `alg` header is chosen by whoever made the token, so it only picks
//! among what the key allows (RFC 8725 §3.1). Symmetric (`oct`) keys, keys for
//! encryption and unknown key types are dropped when the set is read, so an
//! HMAC check with a public key as the secret can never happen.

use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;

/// One public key of an issuer.
#[derive(Clone)]
pub struct Key {
    /// The key id (`kid`), if the set names one.
    pub kid: Option<String>,
    /// The algorithms this key may verify: its `alg` if the JWK names one,
    /// else those of its type and curve.
    pub algorithms: Vec<Algorithm>,
    pub decoding: DecodingKey,
}

/// The usable keys of one issuer.
#[derive(Clone, Default)]
pub struct KeySet {
    pub keys: Vec<Key>,
}

impl KeySet {
    /// The signing keys of a JWKS document; others are skipped.
    pub fn from_jwks(document: &Value) -> Result<Self, String> {
        let entries = document
            .get("keys")
            .and_then(Value::as_array)
            .ok_or("the key set has no \"keys\" array")?;
        Ok(Self {
            keys: entries.iter().filter_map(read_key).collect(),
        })
    }

    /// The key a token names: by `kid`, or the only key when it names none.
    pub fn find(&self, kid: Option<&str>) -> Option<&Key> {
        match kid {
            Some(kid) => self.keys.iter().find(|k| k.kid.as_deref() == Some(kid)),
            None if self.keys.len() == 1 => self.keys.first(),
            None => None,
        }
    }
}

/// The signature algorithms Wharf accepts: public-key ones only.
pub fn asymmetric(name: &str) -> Option<Algorithm> {
    Some(match name {
        "RS256" => Algorithm::RS256,
        "RS384" => Algorithm::RS384,
        "RS512" => Algorithm::RS512,
        "PS256" => Algorithm::PS256,
        "PS384" => Algorithm::PS384,
        "PS512" => Algorithm::PS512,
        "ES256" => Algorithm::ES256,
        "ES384" => Algorithm::ES384,
        "EdDSA" => Algorithm::EdDSA,
        _ => return None,
    })
}

fn read_key(jwk: &Value) -> Option<Key> {
    let field = |name: &str| jwk.get(name).and_then(Value::as_str);
    if field("use").is_some_and(|u| u != "sig") {
        return None;
    }
    let by_type: Vec<Algorithm> = match (field("kty")?, field("crv")) {
        ("RSA", _) => vec![
            Algorithm::RS256,
            Algorithm::RS384,
            Algorithm::RS512,
            Algorithm::PS256,
            Algorithm::PS384,
            Algorithm::PS512,
        ],
        ("EC", Some("P-256")) => vec![Algorithm::ES256],
        ("EC", Some("P-384")) => vec![Algorithm::ES384],
        ("OKP", Some("Ed25519")) => vec![Algorithm::EdDSA],
        _ => return None,
    };
    let algorithms = match field("alg") {
        Some(alg) => {
            let alg = asymmetric(alg)?;
            if !by_type.contains(&alg) {
                return None;
            }
            vec![alg]
        }
        None => by_type,
    };
    let decoding = match field("kty")? {
        "RSA" => DecodingKey::from_rsa_components(field("n")?, field("e")?),
        "EC" => DecodingKey::from_ec_components(field("x")?, field("y")?),
        _ => DecodingKey::from_ed_components(field("x")?),
    }
    .ok()?;
    Some(Key {
        kid: field("kid").map(str::to_owned),
        algorithms,
        decoding,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_public_signing_keys_are_kept() {
        let set = KeySet::from_jwks(&json!({"keys": [
            {"kty": "oct", "kid": "hmac", "k": "c2VjcmV0"},
            {"kty": "EC", "kid": "enc", "use": "enc", "crv": "P-256", "x": "AA", "y": "AA"},
            {"kty": "EC", "kid": "hs", "alg": "HS256", "crv": "P-256", "x": "AA", "y": "AA"},
            {"kty": "EC", "kid": "mismatch", "alg": "ES384", "crv": "P-256", "x": "AA", "y": "AA"},
            {"kty": "EC", "kid": "p256", "crv": "P-256", "x": "AA", "y": "AA"},
            {"kty": "RSA", "kid": "rsa", "alg": "PS256", "n": "AQAB", "e": "AQAB"},
            {"kty": "OKP", "kid": "ed", "crv": "Ed25519", "x": "AA"},
            {"kty": "OKP", "kid": "x", "crv": "X25519", "x": "AA"},
        ]}))
        .unwrap();
        let kept: Vec<_> = set
            .keys
            .iter()
            .map(|k| (k.kid.clone().unwrap(), k.algorithms.clone()))
            .collect();
        assert_eq!(
            kept,
            [
                ("p256".to_owned(), vec![Algorithm::ES256]),
                ("rsa".to_owned(), vec![Algorithm::PS256]),
                ("ed".to_owned(), vec![Algorithm::EdDSA]),
            ]
        );
        assert!(set.find(Some("hmac")).is_none());
        assert!(set.find(None).is_none(), "three keys: a kid is needed");
        assert_eq!(
            KeySet::from_jwks(&json!({"keys": {}})).err().unwrap(),
            "the key set has no \"keys\" array"
        );
    }

    #[test]
    fn never_a_symmetric_algorithm() {
        for name in ["none", "HS256", "HS384", "HS512", "es256", ""] {
            assert!(asymmetric(name).is_none(), "{name}");
        }
    }
}
