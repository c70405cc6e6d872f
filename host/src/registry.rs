//! The current set of plugins and the tools clients see.
//!
//! Strategy: a [`ToolSet`] is immutable once built. The [`Registry`] holds the
//! current one behind an atomic pointer; readers take a snapshot (an `Arc`) without
//! locking, and a reload builds a new set and swaps it in. Calls that started on
//! the old set keep their snapshot, so they finish on the version they started on.

use std::collections::HashMap;
use std::sync::Arc;

use arc_swap::ArcSwap;
use jsonschema::ValidationError;
use jsonschema::error::ValidationErrorKind;
use serde_json::Value;
use tokio::sync::watch;

use crate::naming;
use crate::runtime::{Plugin, ToolSpec};

/// A tool as clients see it: its exposed name and the plugin that runs it.
pub struct ExposedTool {
    name: String,
    plugin: Arc<Plugin>,
    spec: usize,
    validator: jsonschema::Validator,
}

impl ExposedTool {
    /// The name clients call it by (`<plugin>_<tool>`).
    pub fn name(&self) -> &str {
        &self.name
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
        let problems: Vec<String> = self
            .validator
            .iter_errors(arguments)
            .map(|error| violation(&error))
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        }
    }
}

/// One schema violation as text, with the JSON pointer of the offending value.
///
/// A failed `oneOf`/`anyOf` (a variant, a result, an option) says only that no
/// alternative matched; when one alternative got further into the value than
/// all the others, its own problem is added, so a model sees which field to fix.
fn violation(error: &ValidationError<'_>) -> String {
    let path = error.instance_path().to_string();
    let mut text = if path.is_empty() {
        error.to_string()
    } else {
        format!("at {path}: {error}")
    };
    if let ValidationErrorKind::OneOfNotValid { context } | ValidationErrorKind::AnyOf { context } =
        error.kind()
        && let Some(hint) = closest_alternative(context, depth(&path))
    {
        text.push_str(&format!(" (closest alternative: {hint})"));
    }
    text
}

/// The problems of the one alternative whose errors lie deepest in the value,
/// if exactly one does and it got past the value the alternatives are about.
fn closest_alternative(
    alternatives: &[Vec<ValidationError<'static>>],
    base: usize,
) -> Option<String> {
    let depths: Vec<usize> = alternatives
        .iter()
        .map(|errors| {
            errors
                .iter()
                .map(|e| depth(&e.instance_path().to_string()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let deepest = *depths.iter().max()?;
    if deepest <= base || depths.iter().filter(|d| **d == deepest).count() != 1 {
        return None;
    }
    let index = depths.iter().position(|d| *d == deepest)?;
    let problems: Vec<String> = alternatives[index].iter().map(violation).collect();
    Some(problems.join("; "))
}

/// How many reference tokens a JSON pointer has.
fn depth(pointer: &str) -> usize {
    pointer.matches('/').count()
}

/// One consistent set of plugins and their tools, sorted by exposed name.
#[derive(Default)]
pub struct ToolSet {
    plugins: Vec<Arc<Plugin>>,
    tools: Vec<ExposedTool>,
    by_name: HashMap<String, usize>,
}

/// How a plugin's tools are named for clients.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Naming {
    /// `<plugin>_<tool>`: never collides.
    #[default]
    Prefixed,
    /// The tool's own name (manifest `[names] prefix = false`).
    AsDeclared,
}

impl ToolSet {
    /// Builds the set from loaded plugins (whose names are already unique), every
    /// tool named `<plugin>_<tool>`.
    pub fn new(plugins: Vec<Arc<Plugin>>) -> Self {
        Self::with_naming(
            plugins
                .into_iter()
                .map(|plugin| (plugin, Naming::Prefixed))
                .collect(),
        )
    }

    /// Builds the set from loaded plugins, each with its naming. A tool whose name
    /// or input schema is unusable, or whose name an earlier plugin (in name
    /// order) already exposes, is left out with a warning.
    pub fn with_naming(mut members: Vec<(Arc<Plugin>, Naming)>) -> Self {
        members.sort_by(|a, b| a.0.name().cmp(b.0.name()));
        let mut tools: Vec<ExposedTool> = Vec::new();
        let mut taken: HashMap<String, Arc<str>> = HashMap::new();
        for (plugin, naming) in &members {
            for (index, spec) in plugin.tools().iter().enumerate() {
                let name = match naming {
                    Naming::Prefixed => naming::exposed_tool_name(plugin.name(), &spec.name),
                    Naming::AsDeclared => naming::declared_tool_name(&spec.name),
                };
                let name = match name {
                    Ok(name) => name,
                    Err(error) => {
                        tracing::warn!(plugin = plugin.name(), "tool left out: {error}");
                        continue;
                    }
                };
                if let Some(owner) = taken.get(&name) {
                    tracing::warn!(
                        plugin = plugin.name(),
                        "tool left out: plugin `{owner}` already exposes a tool named `{name}`"
                    );
                    continue;
                }
                let schema = Value::Object(spec.input_schema.clone());
                let validator = match jsonschema::validator_for(&schema) {
                    Ok(validator) => validator,
                    Err(error) => {
                        tracing::warn!(
                            plugin = plugin.name(),
                            tool = %spec.name,
                            "tool left out: its input schema is not a valid JSON Schema: {error}"
                        );
                        continue;
                    }
                };
                taken.insert(name.clone(), plugin.name().into());
                tools.push(ExposedTool {
                    name,
                    plugin: plugin.clone(),
                    spec: index,
                    validator,
                });
            }
        }
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        let by_name = tools
            .iter()
            .enumerate()
            .map(|(index, tool)| (tool.name.clone(), index))
            .collect();
        Self {
            plugins: members.into_iter().map(|(plugin, _)| plugin).collect(),
            tools,
            by_name,
        }
    }

    /// All tools, sorted by exposed name.
    pub fn tools(&self) -> &[ExposedTool] {
        &self.tools
    }

    /// The loaded plugins.
    pub fn plugins(&self) -> &[Arc<Plugin>] {
        &self.plugins
    }

    /// The tool clients call `name`.
    pub fn get(&self, name: &str) -> Option<&ExposedTool> {
        self.by_name.get(name).map(|&index| &self.tools[index])
    }

    /// Whether `other` shows clients exactly the same tools (names and
    /// descriptions), so a swap between the two needs no list-changed notification.
    pub fn same_listing(&self, other: &ToolSet) -> bool {
        self.tools.len() == other.tools.len()
            && self
                .tools
                .iter()
                .zip(&other.tools)
                .all(|(a, b)| a.name == b.name && a.spec() == b.spec())
    }

    /// The tools after the one named `after` (all of them for `None`), at most `limit`,
    /// and whether more follow. Keyed by name rather than position, so a page
    /// boundary stays put when the set changes between pages.
    pub fn page(&self, after: Option<&str>, limit: usize) -> (&[ExposedTool], bool) {
        let start = match after {
            None => 0,
            Some(after) => self
                .tools
                .partition_point(|tool| tool.name.as_str() <= after),
        };
        let end = (start + limit).min(self.tools.len());
        (&self.tools[start..end], end < self.tools.len())
    }
}

/// Holds the current [`ToolSet`]; cheap to read from any task.
///
/// Subscribers (listen streams, legacy sessions) watch a counter that moves only
/// when what clients see changed; `watch` keeps just the latest value, so a burst
/// of swaps reaches a slow subscriber as one change.
pub struct Registry {
    current: ArcSwap<ToolSet>,
    listing: watch::Sender<u64>,
}

impl Registry {
    /// A registry serving `set`.
    pub fn new(set: ToolSet) -> Self {
        Self {
            current: ArcSwap::from_pointee(set),
            listing: watch::Sender::new(0),
        }
    }

    /// The set as it is now; keep the snapshot for the whole of one request.
    pub fn snapshot(&self) -> Arc<ToolSet> {
        self.current.load_full()
    }

    /// Replaces the set; requests already holding a snapshot are unaffected.
    /// Returns whether the tool listing changed (and subscribers were told).
    pub fn replace(&self, set: ToolSet) -> bool {
        let changed = !self.current.load().same_listing(&set);
        self.current.store(Arc::new(set));
        if changed {
            self.listing.send_modify(|version| *version += 1);
        }
        changed
    }

    /// A receiver that sees a new value each time the tool listing changes.
    pub fn watch_listing(&self) -> watch::Receiver<u64> {
        self.listing.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn problems(schema: Value, value: Value) -> Vec<String> {
        let validator = jsonschema::validator_for(&schema).unwrap();
        validator
            .iter_errors(&value)
            .map(|e| violation(&e))
            .collect()
    }

    #[test]
    fn a_failed_one_of_names_the_closest_alternative() {
        let variant = json!({"type": "object", "properties": {"s": {"oneOf": [
            {"type": "object", "properties": {"circle": {"type": "number"}}, "required": ["circle"], "additionalProperties": false},
            {"type": "object", "properties": {"empty": {"type": "null"}}, "required": ["empty"], "additionalProperties": false},
            {"type": "string", "enum": ["empty"]}
        ]}}});
        assert_eq!(
            problems(variant.clone(), json!({"s": {"circle": "x"}})),
            [
                r#"at /s: {"circle":"x"} is not valid under any of the schemas listed in the 'oneOf' keyword (closest alternative: at /s/circle: "x" is not of type "number")"#
            ]
        );
        // No alternative got further than the others: no guess.
        assert_eq!(
            problems(variant, json!({"s": {"square": 1}})),
            [
                r#"at /s: {"square":1} is not valid under any of the schemas listed in the 'oneOf' keyword"#
            ]
        );
    }
}
