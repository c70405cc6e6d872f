//! The current set of plugins and the tools, prompts and resources clients see.
//!
//! Strategy: a [`ToolSet`] is immutable once built. The [`Registry`] holds the
//! current one behind an atomic pointer; readers take a snapshot (an `Arc`) without
//! locking, and a reload builds a new set and swaps it in. Calls that started on
//! the old set keep their snapshot, so they finish on the version they started on.
//!
//! Beside the set: `tools`, `prompts` and `resources` (what clients see of
//! each), `arguments` (checking a call's arguments against the tool's input
//! schema), `headers` (the `x-mcp-header` arguments a tool mirrors in HTTP
//! headers), `names` (exposed names and who claimed them), `listing` (sorted
//! listings and their pages) and `digest` (which plugin files the set holds).

use std::sync::Arc;

use arc_swap::ArcSwap;
use serde_json::Value;
use tokio::sync::watch;

use crate::manifest::{Scopes, TaskMode, TaskPolicy};
use crate::runtime::Plugin;

mod arguments;
mod digest;
mod headers;
mod listing;
mod names;
mod prompts;
mod resources;
mod tools;

use arguments::ArgumentSchema;
pub use arguments::prepare_schema_checks;
pub use digest::{PluginSetDigest, PluginVersion};
pub use headers::{HeaderAnnotationError, ParamHeader};
use listing::{Listing, Named};
use names::Claims;
pub use names::Naming;
pub use prompts::ExposedPrompt;
use resources::ResourceCollector;
pub use resources::{ExposedResource, ExposedTemplate, SchemePrefixError};
pub use tools::ExposedTool;

/// One consistent set of plugins and their tools, prompts, resources and
/// resource templates, each sorted by exposed name or URI.
#[derive(Default)]
pub struct ToolSet {
    plugins: Vec<Arc<Plugin>>,
    /// `[auth] scopes` of each plugin that has some, by plugin name: what its
    /// prompts and resources need.
    plugin_scopes: std::collections::HashMap<String, Vec<String>>,
    tools: Listing<ExposedTool>,
    prompts: Listing<ExposedPrompt>,
    resources: Listing<ExposedResource>,
    templates: Listing<ExposedTemplate>,
    /// Which files the plugins came from, when the set was loaded from files.
    digest: Option<PluginSetDigest>,
    /// `[tasks]` of each plugin that has one, by plugin name.
    task_policies: std::collections::HashMap<String, TaskPolicy>,
}

/// Where a read of a URI goes.
pub struct ResourceTarget<'a> {
    /// The plugin that serves it.
    pub plugin: &'a Arc<Plugin>,
    /// The URI in the plugin's own form.
    pub plugin_uri: String,
    /// How the plugin's URIs are exposed (to expose what the read returns).
    pub naming: Naming,
    /// The listed resource, if it is one rather than a template's match.
    pub listed: Option<&'a ExposedResource>,
}

impl ToolSet {
    /// Builds the set from loaded plugins (whose names are already unique), every
    /// tool named `<plugin>_<tool>`.
    pub fn new(plugins: Vec<Arc<Plugin>>) -> Self {
        Self::with_naming(
            plugins
                .into_iter()
                .map(|plugin| (plugin, Naming::Prefixed, Scopes::default()))
                .collect(),
        )
    }

    /// Builds the set from loaded plugins, each with its naming and the
    /// scopes its tools need (`[auth]` of its manifest). A tool or prompt
    /// whose name is unusable, or whose name an earlier plugin (in name order)
    /// already exposes, or a tool whose input schema is unusable, is left out with
    /// a warning.
    pub fn with_naming(mut members: Vec<(Arc<Plugin>, Naming, Scopes)>) -> Self {
        members.sort_by(|a, b| a.0.name().cmp(b.0.name()));
        let mut tools: Vec<ExposedTool> = Vec::new();
        let mut prompts: Vec<ExposedPrompt> = Vec::new();
        let (mut tool_names, mut prompt_names) = (Claims::default(), Claims::default());
        let mut resources = ResourceCollector::default();
        for (plugin, naming, scopes) in &members {
            resources.add(plugin, *naming);

            for (index, spec) in plugin.tools().iter().enumerate() {
                let schema = Value::Object(spec.input_schema.clone());
                let arguments = match ArgumentSchema::compile(&schema) {
                    Ok(arguments) => arguments,
                    Err(error) => {
                        tracing::warn!(
                            plugin = plugin.name(),
                            tool = %spec.name,
                            "tool left out: its input schema is not a valid JSON Schema: {error}"
                        );
                        continue;
                    }
                };
                let param_headers = match headers::param_headers(&spec.input_schema) {
                    Ok(found) => found,
                    Err(error) => {
                        tracing::warn!(
                            plugin = plugin.name(),
                            tool = %spec.name,
                            "tool left out: {error}"
                        );
                        continue;
                    }
                };
                let Some(name) = tool_names.claim(plugin, *naming, "tool", &spec.name) else {
                    continue;
                };
                tools.push(ExposedTool {
                    param_headers,
                    name,
                    plugin: plugin.clone(),
                    spec: index,
                    arguments,
                    scopes: scopes.for_tool(&spec.name),
                });
            }
            for (index, spec) in plugin.prompts().iter().enumerate() {
                let Some(name) = prompt_names.claim(plugin, *naming, "prompt", &spec.name) else {
                    continue;
                };
                prompts.push(ExposedPrompt {
                    name,
                    plugin: plugin.clone(),
                    spec: index,
                });
            }
        }
        Self {
            plugin_scopes: members
                .iter()
                .filter(|(_, _, scopes)| !scopes.for_plugin().is_empty())
                .map(|(plugin, _, scopes)| (plugin.name().to_owned(), scopes.for_plugin().to_vec()))
                .collect(),
            plugins: members.into_iter().map(|(plugin, ..)| plugin).collect(),
            tools: Listing::new(tools),
            prompts: Listing::new(prompts),
            resources: Listing::new(resources.resources),
            templates: Listing::new(resources.templates),
            digest: None,
            task_policies: Default::default(),
        }
    }

    /// The set, with each plugin's `[tasks]` (by plugin name).
    pub fn with_task_policies(
        mut self,
        policies: impl IntoIterator<Item = (String, TaskPolicy)>,
    ) -> Self {
        self.task_policies = policies
            .into_iter()
            .filter(|(_, policy)| *policy != TaskPolicy::default())
            .collect();
        self
    }

    /// How `tool` uses tasks: its plugin's `[tasks]` and the tool's own hint.
    pub fn task_mode(&self, tool: &ExposedTool) -> TaskMode {
        let hint = tool.spec().task_hint;
        match self.task_policies.get(tool.plugin().name()) {
            Some(policy) => policy.for_tool(&tool.spec().name, hint),
            None => TaskPolicy::default().for_tool(&tool.spec().name, hint),
        }
    }

    /// The set, marked with the digest of the files its plugins came from.
    pub fn with_digest(mut self, digest: PluginSetDigest) -> Self {
        self.digest = Some(digest);
        self
    }

    /// The digest of the files the plugins came from (`None` for a set not
    /// built from a plugin folder).
    pub fn digest(&self) -> Option<PluginSetDigest> {
        self.digest
    }

    /// The OAuth scopes a caller needs for the prompts and resources of
    /// `plugin` (its manifest's `[auth] scopes`).
    pub fn plugin_scopes(&self, plugin: &str) -> &[String] {
        self.plugin_scopes.get(plugin).map_or(&[], Vec::as_slice)
    }

    /// All tools, sorted by exposed name.
    pub fn tools(&self) -> &[ExposedTool] {
        &self.tools.items
    }

    /// All prompts, sorted by exposed name.
    pub fn prompts(&self) -> &[ExposedPrompt] {
        &self.prompts.items
    }

    /// All resources, sorted by exposed URI.
    pub fn resources(&self) -> &[ExposedResource] {
        &self.resources.items
    }

    /// All resource templates, sorted by exposed template.
    pub fn templates(&self) -> &[ExposedTemplate] {
        &self.templates.items
    }

    /// The template clients know as `template` (for completion).
    pub fn get_template(&self, template: &str) -> Option<&ExposedTemplate> {
        self.templates.get(template)
    }

    /// Where a read of `uri` goes: a listed resource, else the first template
    /// (in exposed order) that matches it.
    pub fn resolve_resource(&self, uri: &str) -> Option<ResourceTarget<'_>> {
        if let Some(listed) = self.resources.get(uri) {
            return Some(ResourceTarget {
                plugin: listed.plugin(),
                plugin_uri: listed.spec().uri.clone(),
                naming: listed.naming(),
                listed: Some(listed),
            });
        }
        self.templates.items.iter().find_map(|template| {
            template.template().matches(uri)?;
            let plugin_uri = template
                .naming()
                .plugin_uri(template.plugin().name(), uri)?;
            Some(ResourceTarget {
                plugin: template.plugin(),
                plugin_uri: plugin_uri.to_owned(),
                naming: template.naming(),
                listed: None,
            })
        })
    }

    /// The URI clients see for `uri` of `plugin` if the plugin serves it
    /// (lists it or has a template matching it), so that links in its results
    /// can be read back.
    pub fn exposed_uri(&self, plugin: &str, uri: &str) -> Option<String> {
        let listed = self
            .resources
            .items
            .iter()
            .find(|r| r.plugin().name() == plugin && r.spec().uri == uri);
        if let Some(listed) = listed {
            return Some(listed.uri().to_owned());
        }
        self.templates
            .items
            .iter()
            .filter(|t| t.plugin().name() == plugin)
            .find(|t| t.spec().template.matches(uri).is_some())
            .and_then(|t| t.naming().expose_uri(plugin, uri).ok())
    }

    /// The loaded plugins.
    pub fn plugins(&self) -> &[Arc<Plugin>] {
        &self.plugins
    }

    /// The tool clients call `name`.
    pub fn get(&self, name: &str) -> Option<&ExposedTool> {
        self.tools.get(name)
    }

    /// The prompt clients get as `name`.
    pub fn get_prompt(&self, name: &str) -> Option<&ExposedPrompt> {
        self.prompts.get(name)
    }

    /// What differs between the listings of `self` and `other` (names and
    /// descriptions): a swap between equal listings needs no notification.
    pub fn listing_changes(&self, other: &ToolSet) -> ListingChanges {
        ListingChanges {
            tools: !same(&self.tools.items, &other.tools.items, |a, b| {
                a.name == b.name && a.spec() == b.spec()
            }),
            prompts: !same(&self.prompts.items, &other.prompts.items, |a, b| {
                a.name == b.name && a.spec() == b.spec()
            }),
            resources: !same(&self.resources.items, &other.resources.items, |a, b| {
                a.uri() == b.uri() && a.spec() == b.spec()
            }) || !same(&self.templates.items, &other.templates.items, |a, b| {
                a.template() == b.template() && a.spec() == b.spec()
            }),
        }
    }

    /// The tools after the one named `after` (all of them for `None`), at most
    /// `limit`, and whether more follow.
    pub fn page(&self, after: Option<&str>, limit: usize) -> (&[ExposedTool], bool) {
        self.tools.page(after, limit)
    }

    /// The prompts after the one named `after`, at most `limit`, and whether more
    /// follow.
    pub fn prompt_page(&self, after: Option<&str>, limit: usize) -> (&[ExposedPrompt], bool) {
        self.prompts.page(after, limit)
    }

    /// The resources after the one at `after`, at most `limit`, and whether
    /// more follow.
    pub fn resource_page(&self, after: Option<&str>, limit: usize) -> (&[ExposedResource], bool) {
        self.resources.page(after, limit)
    }

    /// The templates after `after`, at most `limit`, and whether more follow.
    pub fn template_page(&self, after: Option<&str>, limit: usize) -> (&[ExposedTemplate], bool) {
        self.templates.page(after, limit)
    }
}

fn same<T>(a: &[T], b: &[T], eq: impl Fn(&T, &T) -> bool) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(a, b)| eq(a, b))
}

/// Which listings a swap changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ListingChanges {
    pub tools: bool,
    pub prompts: bool,
    /// Resources or resource templates.
    pub resources: bool,
}

impl ListingChanges {
    pub fn any(self) -> bool {
        self.tools || self.prompts || self.resources
    }
}

/// How many times each listing has changed; subscribers compare versions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ListingVersions {
    pub tools: u64,
    pub prompts: u64,
    pub resources: u64,
    /// Every swap, even one that changed no listing (a plugin rebuilt with the
    /// same tools): what a resource returns may have changed.
    pub swaps: u64,
}

/// Holds the current [`ToolSet`]; cheap to read from any task.
///
/// Subscribers (listen streams, legacy sessions, resource watches) watch
/// counters: one per listing, moved only when what clients see changed, and one
/// for every swap. `watch` keeps just the latest value, so a burst of swaps
/// reaches a slow subscriber as one change.
pub struct Registry {
    current: ArcSwap<ToolSet>,
    listing: watch::Sender<ListingVersions>,
}

impl Registry {
    /// A registry serving `set`.
    pub fn new(set: ToolSet) -> Self {
        Self {
            current: ArcSwap::from_pointee(set),
            listing: watch::Sender::new(ListingVersions::default()),
        }
    }

    /// The set as it is now; keep the snapshot for the whole of one request.
    pub fn snapshot(&self) -> Arc<ToolSet> {
        self.current.load_full()
    }

    /// Replaces the set; requests already holding a snapshot are unaffected.
    /// Returns which listings changed (and subscribers were told of).
    pub fn replace(&self, set: ToolSet) -> ListingChanges {
        let changes = self.current.load().listing_changes(&set);
        self.current.store(Arc::new(set));
        self.listing.send_modify(|versions| {
            versions.tools += u64::from(changes.tools);
            versions.prompts += u64::from(changes.prompts);
            versions.resources += u64::from(changes.resources);
            versions.swaps += 1;
        });
        changes
    }

    /// A receiver that sees new versions each time a listing changes.
    pub fn watch_listing(&self) -> watch::Receiver<ListingVersions> {
        self.listing.subscribe()
    }
}
