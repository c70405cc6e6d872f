//! The HTTP face of the OAuth resource server ([`crate::oauth`]): the bearer
//! token of each request checked, the caller attached to the request, the 401
//! and 403 challenges, and the Protected Resource Metadata document
//! (RFC 9728) a client reads to find the authorization server.
//!
//! Challenges follow RFC 6750 §3 and the MCP authorization spec: a request
//! without a token gets `Bearer resource_metadata="…"` (and the scopes the
//! server needs, where known), a refused token also gets
//! `error="invalid_token"` and the reason, and a token lacking a scope a tool
//! needs gets 403 with `error="insufficient_scope"` and that scope, so the
//! client can ask for it (step-up).

use std::sync::Arc;

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::rejection;
use crate::oauth::{Caller, ResourceServer, TokenError};

/// Where Protected Resource Metadata is served (RFC 9728 §3): the root
/// document and, for a resource URI with a path, the path-suffixed one.
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// What the transport asks about scopes, answered by whoever knows the tools
/// (the transport knows nothing of plugins).
pub trait ScopePolicy: Send + Sync {
    /// The scopes a caller needs to call `tool`; none for an unknown tool
    /// (which the server then refuses as unknown).
    fn tool_scopes(&self, tool: &str) -> Vec<String>;
    /// Every scope some tool needs, for `scopes_supported`.
    fn all_scopes(&self) -> Vec<String>;
}

/// The resource server and the scope policy of its tools.
#[derive(Clone)]
pub struct Protection {
    pub server: Arc<ResourceServer>,
    pub scopes: Option<Arc<dyn ScopePolicy>>,
}

impl std::fmt::Debug for Protection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Protection")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

impl Protection {
    /// The address of the metadata document for this resource: the
    /// well-known segment inserted before the resource URI's path.
    pub fn metadata_url(&self) -> String {
        let resource = self.server.resource();
        let Ok(url) = url::Url::parse(resource) else {
            return resource.to_owned();
        };
        let path = url.path().trim_end_matches('/');
        format!("{}{METADATA_PATH}{path}", origin_of(&url))
    }

    /// The metadata document's paths on this server.
    pub fn metadata_paths(&self) -> Vec<String> {
        let path = url::Url::parse(self.server.resource())
            .map(|u| u.path().trim_end_matches('/').to_owned())
            .unwrap_or_default();
        let mut paths = vec![METADATA_PATH.to_owned()];
        if !path.is_empty() {
            paths.push(format!("{METADATA_PATH}{path}"));
        }
        paths
    }

    /// The Protected Resource Metadata document.
    pub fn metadata(&self) -> Response {
        let mut document = json!({
            "resource": self.server.resource(),
            "authorization_servers": self.server.issuer_ids(),
            "bearer_methods_supported": ["header"],
        });
        let scopes = self
            .scopes
            .as_ref()
            .map(|p| p.all_scopes())
            .unwrap_or_default();
        if !scopes.is_empty() {
            document["scopes_supported"] = json!(scopes);
        }
        let mut response = (StatusCode::OK, document.to_string()).into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        response
    }

    /// Checks the request's bearer token: on success the [`crate::oauth::Caller`]
    /// is attached to the request's extensions; else the refusal.
    pub async fn admit(&self, request: &mut Request) -> Result<(), Response> {
        let Some(value) = request.headers().get(header::AUTHORIZATION) else {
            return Err(self.unauthorized(None));
        };
        let Some(token) = super::auth::bearer(value.as_bytes()) else {
            return Err(self.unauthorized(Some(&TokenError::Malformed(
                "the Authorization header is not `Bearer <token>`".into(),
            ))));
        };
        let Ok(token) = std::str::from_utf8(token) else {
            return Err(self.unauthorized(Some(&TokenError::Malformed(
                "the token is not ASCII".into(),
            ))));
        };
        match self.server.verify(token).await {
            Ok(caller) => {
                request.extensions_mut().insert(caller);
                Ok(())
            }
            Err(TokenError::Unavailable(reason)) => {
                tracing::warn!("cannot check a token: {reason}");
                Err(rejection(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the authorization server cannot be reached to check the token",
                ))
            }
            Err(error) => Err(self.unauthorized(Some(&error))),
        }
    }

    /// 401: no token (`error` is `None`), or a refused one.
    pub fn unauthorized(&self, error: Option<&TokenError>) -> Response {
        let mut challenge = String::from("Bearer ");
        if let Some(error) = error {
            challenge.push_str(&format!(
                "error=\"invalid_token\", error_description=\"{}\", ",
                quoted(&error.to_string())
            ));
        }
        challenge.push_str(&format!(
            "resource_metadata=\"{}\"",
            quoted(&self.metadata_url())
        ));
        let message = match error {
            Some(error) => format!("Unauthorized: {error}"),
            None => "Unauthorized: a bearer token is required".to_owned(),
        };
        with_challenge(rejection(StatusCode::UNAUTHORIZED, &message), &challenge)
    }

    /// The 403 for a `tools/call` of `tool` whose scopes the request's
    /// caller (attached by [`Protection::admit`]) lacks; `None` lets it pass.
    pub fn forbidden_call(&self, request: &Request, tool: &str) -> Option<Response> {
        let caller = request.extensions().get::<Caller>()?;
        let needed = self.scopes.as_ref()?.tool_scopes(tool);
        let missing: Vec<String> = needed
            .into_iter()
            .filter(|s| !caller.scopes.contains(s))
            .collect();
        (!missing.is_empty()).then(|| self.insufficient_scope(&missing))
    }

    /// 403: the token lacks `scopes` (all of which the request needs).
    pub fn insufficient_scope(&self, scopes: &[String]) -> Response {
        let scope = scopes.join(" ");
        let challenge = format!(
            "Bearer error=\"insufficient_scope\", scope=\"{}\", resource_metadata=\"{}\", error_description=\"{}\"",
            quoted(&scope),
            quoted(&self.metadata_url()),
            quoted(&format!("the token lacks the scope {scope:?}")),
        );
        with_challenge(
            rejection(
                StatusCode::FORBIDDEN,
                &format!("Forbidden: the token lacks the scope {scope:?}"),
            ),
            &challenge,
        )
    }
}

fn with_challenge(mut response: Response, challenge: &str) -> Response {
    if let Ok(value) = HeaderValue::from_str(challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// `scheme://host[:port]` of a URL.
fn origin_of(url: &url::Url) -> String {
    url[..url::Position::BeforePath].to_owned()
}

/// A value fit for a quoted-string: `"` and `\` escaped, control characters
/// and non-ASCII replaced (header values must stay visible ASCII).
fn quoted(value: &str) -> String {
    value
        .chars()
        .map(|c| match c {
            '"' | '\\' => format!("\\{c}"),
            c if c.is_ascii() && !c.is_ascii_control() => c.to_string(),
            _ => "?".to_owned(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    struct FixedScopes;

    impl ScopePolicy for FixedScopes {
        fn tool_scopes(&self, tool: &str) -> Vec<String> {
            match tool {
                "files_delete" => vec!["files:read".into(), "files:write".into()],
                _ => vec!["files:read".into()],
            }
        }
        fn all_scopes(&self) -> Vec<String> {
            vec!["files:read".into(), "files:write".into()]
        }
    }

    fn protection(resource: &str) -> Protection {
        Protection {
            server: Arc::new(
                ResourceServer::new(resource, &["https://as.example".into()], None).unwrap(),
            ),
            scopes: Some(Arc::new(FixedScopes)),
        }
    }

    #[test]
    fn a_call_needs_every_scope_of_its_tool() {
        let p = protection("https://wharf.example/mcp");
        let mut request = Request::new(axum::body::Body::empty());
        assert!(
            p.forbidden_call(&request, "files_delete").is_none(),
            "no caller, no check"
        );
        request.extensions_mut().insert(Caller {
            scopes: ["files:read".to_owned()].into(),
            ..Caller::default()
        });
        assert!(p.forbidden_call(&request, "files_list").is_none());
        let refusal = p.forbidden_call(&request, "files_delete").unwrap();
        assert_eq!(refusal.status(), StatusCode::FORBIDDEN);
        assert!(
            challenge(&refusal)
                .starts_with("Bearer error=\"insufficient_scope\", scope=\"files:write\"")
        );
    }

    fn challenge(response: &Response) -> &str {
        response.headers()[header::WWW_AUTHENTICATE]
            .to_str()
            .unwrap()
    }

    #[test]
    fn the_metadata_url_inserts_the_well_known_segment() {
        let p = protection("https://wharf.example:8443/mcp");
        assert_eq!(
            p.metadata_url(),
            "https://wharf.example:8443/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            p.metadata_paths(),
            [
                "/.well-known/oauth-protected-resource",
                "/.well-known/oauth-protected-resource/mcp"
            ]
        );
        let root = protection("https://wharf.example/");
        assert_eq!(
            root.metadata_url(),
            "https://wharf.example/.well-known/oauth-protected-resource"
        );
        assert_eq!(
            root.metadata_paths(),
            ["/.well-known/oauth-protected-resource"]
        );
    }

    #[tokio::test]
    async fn refusals_carry_their_challenge() {
        let p = protection("https://wharf.example/mcp");
        let metadata = "https://wharf.example/.well-known/oauth-protected-resource/mcp";
        let mut request = Request::new(axum::body::Body::empty());
        let refusal = p.admit(&mut request).await.unwrap_err();
        assert_eq!(refusal.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            challenge(&refusal),
            format!("Bearer resource_metadata=\"{metadata}\"")
        );

        request.headers_mut().insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Basic eA=="),
        );
        let refusal = p.admit(&mut request).await.unwrap_err();
        assert_eq!(
            challenge(&refusal),
            format!(
                "Bearer error=\"invalid_token\", error_description=\"malformed token: the Authorization header is not `Bearer <token>`\", resource_metadata=\"{metadata}\""
            )
        );

        request.headers_mut().insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer opaque"),
        );
        let refusal = p.admit(&mut request).await.unwrap_err();
        assert_eq!(
            challenge(&refusal),
            format!(
                "Bearer error=\"invalid_token\", error_description=\"the token is not a JWT and no introspection endpoint is configured\", resource_metadata=\"{metadata}\""
            )
        );
        assert!(request.extensions().get::<Caller>().is_none());

        let refusal = p.insufficient_scope(&["files:write".into()]);
        assert_eq!(refusal.status(), StatusCode::FORBIDDEN);
        assert_eq!(
            challenge(&refusal),
            format!(
                "Bearer error=\"insufficient_scope\", scope=\"files:write\", resource_metadata=\"{metadata}\", error_description=\"the token lacks the scope \\\"files:write\\\"\""
            )
        );
    }

    #[tokio::test]
    async fn the_metadata_document_names_resource_and_issuers() {
        let response = protection("https://wharf.example/mcp").metadata();
        let body = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .unwrap();
        assert_eq!(
            serde_json::from_slice::<serde_json::Value>(&body).unwrap(),
            json!({
                "resource": "https://wharf.example/mcp",
                "authorization_servers": ["https://as.example"],
                "bearer_methods_supported": ["header"],
                "scopes_supported": ["files:read", "files:write"],
            })
        );
    }

    #[test]
    fn quoted_strings_stay_inside_their_quotes() {
        assert_eq!(quoted("a\"b\\c\nd é"), "a\\\"b\\\\c?d ?");
    }
}
