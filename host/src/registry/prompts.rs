//! A prompt as clients see it: its exposed name and the plugin that renders it.

use std::sync::Arc;

use super::Named;
use crate::runtime::{Plugin, PromptSpec};

/// A prompt as clients see it: its exposed name and the plugin that renders it.
pub struct ExposedPrompt {
    pub(super) name: String,
    pub(super) plugin: Arc<Plugin>,
    pub(super) spec: usize,
}

impl ExposedPrompt {
    /// The name clients get it by (`<plugin>_<prompt>`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The plugin that provides it.
    pub fn plugin(&self) -> &Arc<Plugin> {
        &self.plugin
    }

    /// The plugin's own description of it.
    pub fn spec(&self) -> &PromptSpec {
        &self.plugin.prompts()[self.spec]
    }
}

impl Named for ExposedPrompt {
    fn exposed_name(&self) -> &str {
        &self.name
    }
}
