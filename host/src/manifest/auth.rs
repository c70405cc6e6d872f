//! `[auth]`: the OAuth scopes a caller's access token needs for a plugin's
//! tools (and for its prompts and resources), and whether the plugin may learn
//! who calls it. Only checked when Wharf is an OAuth resource server
//! (`--auth-issuer`; docs/auth.md).

use std::collections::BTreeMap;

use serde::Deserialize;

use super::KeyError;

/// `[auth]`: the scopes an access token must grant to see and call the
/// plugin's tools. Only checked when Wharf is an OAuth resource server.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct AuthSection {
    /// Needed for every tool of the plugin.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// `[auth.tools]`: more scopes for one tool, by the plugin's own name for it.
    #[serde(default)]
    pub tools: BTreeMap<String, Vec<String>>,
    /// Whether the plugin may learn who calls it (subject and scopes, never
    /// the token) through the `host.caller` import.
    #[serde(default)]
    pub caller: bool,
}

/// The scopes a plugin's tools need, resolved from `[auth]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scopes {
    plugin: Vec<String>,
    tools: BTreeMap<String, Vec<String>>,
}

impl Scopes {
    /// The scopes of the whole plugin (its prompts and resources need these).
    pub fn for_plugin(&self) -> &[String] {
        &self.plugin
    }

    /// The tools `[auth.tools]` names, by the plugin's own names.
    pub fn named_tools(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().map(String::as_str)
    }

    /// Every scope the tool the plugin calls `tool` needs, sorted.
    pub fn for_tool(&self, tool: &str) -> Vec<String> {
        let mut all: Vec<String> = self
            .plugin
            .iter()
            .chain(self.tools.get(tool).into_iter().flatten())
            .cloned()
            .collect();
        all.sort();
        all.dedup();
        all
    }
}

/// Whether `scope` is an RFC 6749 §3.3 scope-token: printable ASCII but
/// space, `"` and `\`.
fn check_scope(scope: &str) -> Result<(), String> {
    let ok = !scope.is_empty()
        && scope
            .bytes()
            .all(|b| b == 0x21 || (0x23..=0x5b).contains(&b) || (0x5d..=0x7e).contains(&b));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{scope}` is not a scope: printable ASCII without spaces, `\"` or `\\`"
        ))
    }
}

pub(super) fn resolve_scopes(section: &AuthSection) -> Result<Scopes, KeyError> {
    for (index, scope) in section.scopes.iter().enumerate() {
        check_scope(scope).map_err(|m| (format!("auth.scopes[{index}]"), m))?;
    }
    for (tool, scopes) in &section.tools {
        for (index, scope) in scopes.iter().enumerate() {
            check_scope(scope).map_err(|m| (format!("auth.tools.{tool}[{index}]"), m))?;
        }
    }
    Ok(Scopes {
        plugin: section.scopes.clone(),
        tools: section.tools.clone(),
    })
}
