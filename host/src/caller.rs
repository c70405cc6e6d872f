//! Who made a request, as far as authentication tells: a leaf, set by the
//! HTTP transport's auth check in the request's extensions and read by the
//! server for the audit trail.
//!
//! Two schemes: the static bearer token (`--auth-token`), one secret shared
//! by every client, which proves a caller was let in but not who they are
//! (`subject` is `None`); and OAuth access tokens (`--auth-issuer`), whose
//! `sub` and client the server reads from the transport's `oauth::Caller`.

use serde::Serialize;

/// The authenticated caller of a request; absent when auth is off (stdio,
/// or HTTP without `--auth-token`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Caller {
    /// How the caller proved itself: `static-token` (`--auth-token`) or
    /// `oauth` (an access token).
    pub auth: &'static str,
    /// Who the caller is, when the scheme names one (an OAuth subject);
    /// `None` for a shared static token.
    pub subject: Option<String>,
    /// The OAuth client the token was issued to, when the token names it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
}

impl Caller {
    /// A caller let in by the shared static bearer token.
    pub fn static_token() -> Self {
        Self {
            auth: "static-token",
            subject: None,
            client_id: None,
        }
    }

    /// A caller let in by an OAuth access token naming `subject` and
    /// `client_id`.
    pub fn oauth(subject: Option<String>, client_id: Option<String>) -> Self {
        Self {
            auth: "oauth",
            subject,
            client_id,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Caller;

    #[test]
    fn a_static_token_caller_has_no_subject() {
        assert_eq!(
            serde_json::to_string(&Caller::static_token()).unwrap(),
            r#"{"auth":"static-token","subject":null}"#
        );
    }

    #[test]
    fn an_oauth_caller_names_its_subject_and_client() {
        let caller = Caller::oauth(Some("alice".into()), Some("inspector".into()));
        assert_eq!(
            serde_json::to_string(&caller).unwrap(),
            r#"{"auth":"oauth","subject":"alice","client_id":"inspector"}"#
        );
    }
}
