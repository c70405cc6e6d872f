//! Who made a request, as far as authentication tells: a leaf, set by the
//! HTTP transport's auth check in the request's extensions and read by the
//! server for the audit trail.
//!
//! Today the only scheme is the static bearer token (`--auth-token`): one
//! secret shared by every client, so it proves a caller was let in but not
//! who they are (`subject` is `None`). An OAuth resource server would fill
//! `subject` with the token's `sub` claim and keep the same line format.

use serde::Serialize;

/// The authenticated caller of a request; absent when auth is off (stdio,
/// or HTTP without `--auth-token`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Caller {
    /// How the caller proved itself: `static-token` (`--auth-token`).
    pub auth: &'static str,
    /// Who the caller is, when the scheme names one (an OAuth subject);
    /// `None` for a shared static token.
    pub subject: Option<String>,
}

impl Caller {
    /// A caller let in by the shared static bearer token.
    pub fn static_token() -> Self {
        Self {
            auth: "static-token",
            subject: None,
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
}
