//! Optional bearer-token authentication.
//!
//! The 2026-07-28 revision has no handshake, so every request must carry its
//! credentials; a static token (`--auth-token` / `WHARF_AUTH_TOKEN`) is the
//! simplest scheme that keeps other local users and processes out. rmcp 3.11
//! has no check of its own on the server side.

use std::sync::Arc;

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;

use super::rejection;

/// The secret a client must present as `Authorization: Bearer <token>`.
#[derive(Clone)]
pub struct BearerToken(Arc<str>);

impl BearerToken {
    pub fn new(token: impl Into<Arc<str>>) -> Self {
        Self(token.into())
    }

    /// Whether an `Authorization` header value presents this token. The
    /// comparison takes the same time wherever the first difference is.
    pub fn accepts(&self, authorization: &[u8]) -> bool {
        let Some(presented) = strip_scheme(authorization) else {
            return false;
        };
        let expected = self.0.as_bytes();
        presented.len() == expected.len()
            && presented
                .iter()
                .zip(expected)
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    }
}

impl std::fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BearerToken(..)")
    }
}

/// The credentials after `Bearer ` (scheme name case-insensitive, RFC 6750).
pub fn bearer(value: &[u8]) -> Option<&[u8]> {
    strip_scheme(value).filter(|token| !token.is_empty())
}

fn strip_scheme(value: &[u8]) -> Option<&[u8]> {
    let (scheme, rest) = value.split_at_checked(7)?;
    scheme
        .eq_ignore_ascii_case(b"bearer ")
        .then(|| rest.trim_ascii())
}

/// The refusal, if any: 401 with `WWW-Authenticate: Bearer` unless the token matches.
pub fn refusal(token: &BearerToken, request: &Request) -> Option<Response> {
    let presented = request.headers().get(header::AUTHORIZATION);
    if presented.is_some_and(|value| token.accepts(value.as_bytes())) {
        return None;
    }
    let challenge = if presented.is_some() {
        r#"Bearer realm="wharf", error="invalid_token""#
    } else {
        r#"Bearer realm="wharf""#
    };
    let mut response = rejection(
        StatusCode::UNAUTHORIZED,
        "Unauthorized: a valid bearer token is required",
    );
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static(challenge),
    );
    Some(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_token_passes() {
        let token = BearerToken::new("s3cret");
        assert!(token.accepts(b"Bearer s3cret"));
        assert!(token.accepts(b"bearer  s3cret "));
        for wrong in [
            &b"Bearer s3cre"[..],
            b"Bearer s3cret2",
            b"Basic s3cret",
            b"s3cret",
            b"Bearer",
            b"",
        ] {
            assert!(
                !token.accepts(wrong),
                "{:?}",
                String::from_utf8_lossy(wrong)
            );
        }
    }

    #[test]
    fn debug_output_hides_the_secret() {
        assert_eq!(
            format!("{:?}", BearerToken::new("s3cret")),
            "BearerToken(..)"
        );
    }
}
