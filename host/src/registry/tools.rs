//! A tool as clients see it: its exposed name, the plugin that runs it, and
//! the check of its arguments before a call.

use std::sync::Arc;

use serde_json::Value;

use super::Named;
use super::arguments::ArgumentSchema;
use crate::runtime::{Plugin, ToolSpec};

/// A tool as clients see it: its exposed name and the plugin that runs it.
pub struct ExposedTool {
    pub(super) name: String,
    pub(super) plugin: Arc<Plugin>,
    pub(super) spec: usize,
    pub(super) arguments: ArgumentSchema,
    /// The OAuth scopes a caller needs to see and call it (`[auth]`).
    pub(super) scopes: Vec<String>,
    /// The arguments its input schema mirrors in `Mcp-Param-*` headers.
    pub(super) param_headers: Vec<super::ParamHeader>,
}

impl ExposedTool {
    /// The name clients call it by (`<plugin>_<tool>`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The OAuth scopes a caller's token must grant to see and call it.
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// The arguments a client also sends as `Mcp-Param-{Name}` headers
    /// (`x-mcp-header` in its input schema), checked once at listing.
    pub fn param_headers(&self) -> &[super::ParamHeader] {
        &self.param_headers
    }

    /// The plugin that provides it.
    pub fn plugin(&self) -> &Arc<Plugin> {
        &self.plugin
    }

    /// The plugin's own description of it.
    pub fn spec(&self) -> &ToolSpec {
        &self.plugin.tools()[self.spec]
    }

    /// Checks `arguments` against the tool's input schema; the error lists every
    /// violation with the JSON pointer of the offending value.
    pub fn check_arguments(&self, arguments: &Value) -> Result<(), String> {
        self.arguments.check(arguments)
    }
}

impl Named for ExposedTool {
    fn exposed_name(&self) -> &str {
        &self.name
    }
}
