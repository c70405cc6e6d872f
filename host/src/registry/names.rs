//! Exposed names: how a plugin's tools and prompts are named for clients, and
//! which plugin has claimed which name.
//!
//! Names are given out in plugin name order as a set is built; a name that is
//! invalid or already taken leaves its item out with a warning.

use std::collections::HashMap;
use std::sync::Arc;

use crate::naming;
use crate::runtime::Plugin;

/// How a plugin's tools and prompts are named for clients.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Naming {
    /// `<plugin>_<name>`: never collides.
    #[default]
    Prefixed,
    /// The plugin's own name (manifest `[names] prefix = false`).
    AsDeclared,
}

impl Naming {
    fn expose(self, plugin: &str, name: &str) -> Result<String, naming::NameError> {
        match self {
            Naming::Prefixed => naming::exposed_tool_name(plugin, name),
            Naming::AsDeclared => naming::declared_tool_name(name),
        }
    }
}

/// Exposed names already given out, and to which plugin.
#[derive(Default)]
pub(super) struct Claims(HashMap<String, Arc<str>>);

impl Claims {
    /// The exposed name for `name` of `plugin`, unless it is invalid or taken
    /// (logged, as a `kind` left out).
    pub(super) fn claim(
        &mut self,
        plugin: &Plugin,
        naming: Naming,
        kind: &str,
        name: &str,
    ) -> Option<String> {
        let exposed = match naming.expose(plugin.name(), name) {
            Ok(exposed) => exposed,
            Err(error) => {
                tracing::warn!(plugin = plugin.name(), "{kind} left out: {error}");
                return None;
            }
        };
        self.take(plugin, kind, exposed)
    }

    /// `exposed` for `plugin`, unless another plugin has it (logged, as a
    /// `kind` left out).
    pub(super) fn take(&mut self, plugin: &Plugin, kind: &str, exposed: String) -> Option<String> {
        if let Some(owner) = self.0.get(&exposed) {
            tracing::warn!(
                plugin = plugin.name(),
                "{kind} left out: plugin `{owner}` already exposes a {kind} named `{exposed}`"
            );
            return None;
        }
        self.0.insert(exposed.clone(), plugin.name().into());
        Some(exposed)
    }
}
