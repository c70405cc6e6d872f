//! A loaded plugin: its code, its sandbox, and what it offers (tools,
//! prompts, resources), listed when it loads, and listed again into a new
//! `Plugin` sharing its code when it says its lists changed ([`Plugin::relisted`]).
//!
//! Every request that runs guest code (a tool call, a prompt, a resource read,
//! a completion, and the listings at load) goes through one path,
//! `Plugin::invoke` in `plugin/invoke.rs`; the files beside it say only what
//! differs: `tools.rs`, `prompts.rs`, `resources.rs`.

use std::sync::Arc;

use arc_swap::ArcSwap;

use super::admission::CallSlots;
use super::cache::ContentHash;
use super::code::{Code, Exports, Tier};
use super::failure::{LoadError, SkippedFunction};
use super::grants::Grants;
use super::limits::CallLimits;
use super::list_changes;
use super::placement::Placement;
use super::prompt::PromptSpec;
use super::resource::{ResourceSpec, TemplateSpec};
use super::retire::Retirer;
use super::state::Sandbox;
use super::types::ToolSpec;

mod invoke;
mod prompts;
mod resources;
mod tools;

/// What kind of component a plugin is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PluginKind {
    /// Implements `wharf:plugin` (exports `wharf:plugin/tools`).
    Wharf,
    /// Exports ordinary functions, each a tool.
    Plain,
}

/// A compiled plugin, ready to be instantiated for each call.
pub struct Plugin {
    name: Arc<str>,
    /// The SHA-256 of the component file it was compiled from.
    digest: ContentHash,
    pub(super) sandbox: Arc<Sandbox>,
    kind: PluginKind,
    /// Its compiled component and spare instance; replaced by the optimised
    /// compile if Winch's quick one came first (see `tiers`).
    pub(super) code: Arc<ArcSwap<Code>>,
    /// Where its calls run guest code.
    placement: Placement,
    tools: Vec<ToolSpec>,
    /// Prompts (`wharf:plugin` components that export `prompts` only).
    prompts: Vec<PromptSpec>,
    /// Resources and templates (components that export `resources` only).
    resources: Vec<ResourceSpec>,
    templates: Vec<TemplateSpec>,
    /// Exported functions that are not tools (plain components only).
    skipped: Vec<SkippedFunction>,
    /// The names of the component's imports (`wasi:filesystem/types@0.2.0`, ...).
    imports: Vec<String>,
    /// This plugin's own concurrency limit.
    calls: CallSlots,
    /// The runtime's, shared by every plugin.
    all_calls: CallSlots,
    /// Drops finished stores once the answer is out.
    retirer: Retirer,
}

/// What the runtime gives a plugin it has compiled and linked (see
/// `load::Runtime::load_with`).
pub(super) struct PluginParts {
    pub(super) name: Arc<str>,
    pub(super) digest: ContentHash,
    pub(super) sandbox: Arc<Sandbox>,
    pub(super) code: Code,
    pub(super) skipped: Vec<SkippedFunction>,
    pub(super) imports: Vec<String>,
    pub(super) placement: Placement,
    pub(super) all_calls: CallSlots,
    pub(super) retirer: Retirer,
}

impl std::fmt::Debug for Plugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plugin")
            .field("name", &self.name)
            .field("tools", &self.tools.len())
            .finish_non_exhaustive()
    }
}

impl Plugin {
    /// The plugin, with what it offers asked of it: a `wharf:plugin`
    /// component lists its tools, prompts and resources; a plain component
    /// (whose tools its type gives) is started once, so that one that cannot
    /// start (a trap in its initialisation, say) is refused now rather than
    /// failing every call.
    pub(super) async fn open(parts: PluginParts) -> Result<Self, LoadError> {
        let (kind, tools) = match &parts.code.exports {
            Exports::Wharf(_) => (PluginKind::Wharf, Vec::new()),
            Exports::Plain(plain) => (
                PluginKind::Plain,
                plain.tools.iter().map(|t| t.spec.clone()).collect(),
            ),
        };
        let max_concurrent_calls = parts.sandbox.limits.max_concurrent_calls;
        let mut plugin = Plugin {
            name: parts.name,
            digest: parts.digest,
            sandbox: parts.sandbox,
            kind,
            code: Arc::new(ArcSwap::from_pointee(parts.code)),
            placement: parts.placement,
            tools,
            prompts: Vec::new(),
            resources: Vec::new(),
            templates: Vec::new(),
            skipped: parts.skipped,
            imports: parts.imports,
            calls: CallSlots::new(max_concurrent_calls),
            all_calls: parts.all_calls,
            retirer: parts.retirer,
        };
        if kind == PluginKind::Plain {
            plugin.start_once().await.map_err(LoadError::Start)?;
        } else {
            plugin.tools = plugin.listed_tools().await?;
            plugin.prompts = plugin
                .list_prompts()
                .await
                .map_err(LoadError::ListPrompts)?;
            (plugin.resources, plugin.templates) = plugin
                .list_resources()
                .await
                .map_err(LoadError::ListResources)?;
        }
        Ok(plugin)
    }

    /// The plugin with the lists it flagged through `lists.changed` asked of
    /// it again, on a fresh instance under its own limits, and its other
    /// lists as they were; it shares this one's code, sandbox and
    /// concurrency limit. `None` when nothing is flagged (or it is a plain
    /// component, whose tools its type fixes). On an error the flags are
    /// spent: the plugin keeps its lists until it flags them again.
    pub async fn relisted(&self) -> Result<Option<Plugin>, LoadError> {
        let which = self.sandbox.lists.take();
        if which == 0 || self.kind == PluginKind::Plain {
            return Ok(None);
        }
        let mut plugin = Plugin {
            name: self.name.clone(),
            digest: self.digest,
            sandbox: self.sandbox.clone(),
            kind: self.kind,
            code: self.code.clone(),
            placement: self.placement.clone(),
            tools: self.tools.clone(),
            prompts: self.prompts.clone(),
            resources: self.resources.clone(),
            templates: self.templates.clone(),
            skipped: self.skipped.clone(),
            imports: self.imports.clone(),
            calls: self.calls.clone(),
            all_calls: self.all_calls.clone(),
            retirer: self.retirer.clone(),
        };
        if which & list_changes::TOOLS != 0 {
            plugin.tools = plugin.listed_tools().await?;
        }
        if which & list_changes::PROMPTS != 0 {
            plugin.prompts = plugin
                .list_prompts()
                .await
                .map_err(LoadError::ListPrompts)?;
        }
        if which & list_changes::RESOURCES != 0 {
            (plugin.resources, plugin.templates) = plugin
                .list_resources()
                .await
                .map_err(LoadError::ListResources)?;
        }
        Ok(Some(plugin))
    }

    /// The SHA-256 of the component file it was compiled from: which build
    /// of the plugin answered a call (audit lines, trace attributes).
    pub fn digest(&self) -> ContentHash {
        self.digest
    }

    /// The plugin's name (from its file name).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tools it offers, in the order the plugin listed them.
    pub fn tools(&self) -> &[ToolSpec] {
        &self.tools
    }

    /// The prompts it offers, in the order the plugin listed them.
    pub fn prompts(&self) -> &[PromptSpec] {
        &self.prompts
    }

    /// The resources it lists, in its order.
    pub fn resources(&self) -> &[ResourceSpec] {
        &self.resources
    }

    /// Its resource templates, in its order.
    pub fn templates(&self) -> &[TemplateSpec] {
        &self.templates
    }

    /// Whether it implements `wharf:plugin` or is a plain component.
    pub fn kind(&self) -> PluginKind {
        self.kind
    }

    /// Which compiler made the code its calls run now.
    pub fn tier(&self) -> Tier {
        self.code.load().tier
    }

    /// Exported functions of a plain component that are not tools, with the reason.
    pub fn skipped(&self) -> &[SkippedFunction] {
        &self.skipped
    }

    /// The names of everything the component imports.
    pub fn imports(&self) -> &[String] {
        &self.imports
    }

    /// The limits each of its calls gets.
    pub fn limits(&self) -> &CallLimits {
        &self.sandbox.limits
    }

    /// What it was granted beyond the default sandbox.
    pub fn grants(&self) -> &Grants {
        &self.sandbox.grants
    }
}

#[cfg(test)]
mod tests;
