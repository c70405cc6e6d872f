//! Who is calling, as the HTTP transport found it in the access token, and
//! what that caller may see and call (per-tool scopes from `[auth]`).
//!
//! The transport attaches an [`oauth::Caller`] to the HTTP request; rmcp hands
//! the request's `http::request::Parts` to the handler in the context's
//! extensions. No caller (stdio, a static `--auth-token`, no auth at all)
//! means scopes are not checked: they are a property of OAuth access tokens.

use rmcp::RoleServer;
use rmcp::service::RequestContext;

use crate::oauth::Caller;

/// The caller of this request, when its token was an OAuth access token.
pub(super) fn caller_of(context: &RequestContext<RoleServer>) -> Option<Caller> {
    context
        .extensions
        .get::<http::request::Parts>()?
        .extensions
        .get::<Caller>()
        .cloned()
}

/// Whether `caller` (if any) may see and call something needing `scopes`.
pub(super) fn may_use(caller: Option<&Caller>, scopes: &[String]) -> bool {
    caller.is_none_or(|c| c.grants(scopes.iter().map(String::as_str)))
}

/// The scopes of `scopes` that `caller` lacks.
pub(super) fn missing(caller: &Caller, scopes: &[String]) -> Vec<String> {
    scopes
        .iter()
        .filter(|s| !caller.scopes.contains(*s))
        .cloned()
        .collect()
}

/// The refusal of a request for something needing `scopes` that the
/// caller of `context` lacks (`what`: "tool `x`", "prompt `y`", …); `None`
/// lets it pass. Over HTTP a `tools/call` is refused 403 before this.
pub(super) fn refusal(
    context: &RequestContext<RoleServer>,
    scopes: &[String],
    what: &str,
) -> Option<rmcp::ErrorData> {
    let caller = caller_of(context)?;
    let missing = missing(&caller, scopes);
    (!missing.is_empty()).then(|| {
        let scope = missing.join(" ");
        rmcp::ErrorData::invalid_request(
            format!("Forbidden: the token lacks the scope {scope:?} needed by {what}"),
            Some(serde_json::json!({ "scope": scope })),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_caller_nothing_is_hidden() {
        let needed = vec!["files:write".to_owned()];
        assert!(may_use(None, &needed));
        let reader = Caller {
            scopes: ["files:read".to_owned()].into(),
            ..Caller::default()
        };
        assert!(!may_use(Some(&reader), &needed));
        assert!(may_use(Some(&reader), &[]));
        assert_eq!(missing(&reader, &needed), ["files:write"]);
    }
}
