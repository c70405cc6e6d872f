//! One component outside a server: what `wharf inspect` shows and what
//! `wharf call` runs.
//!
//! Both load the file exactly as the server's folder loader does (same runtime,
//! sandbox and manifest rules), so what they report is what a client would see.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::loader::FileError;
use crate::manifest;
use crate::naming;
use crate::registry::ToolSet;
use crate::runtime::{
    CallContext, CallFailure, CallOutput, ContentItem, Plugin, PluginKind, ResourceBody, Runtime,
};

/// Why a single component could not be inspected or called.
#[derive(Debug, thiserror::Error)]
pub enum OneShotError {
    #[error("{}: {source}", .path.display())]
    Load { path: PathBuf, source: FileError },
    #[error("the plugin `{plugin}` has no tool `{tool}`; it has: {available}")]
    UnknownTool {
        plugin: String,
        tool: String,
        available: String,
    },
}

/// A component loaded on its own, with the manifest that applies to it.
pub struct Single {
    pub plugin: std::sync::Arc<Plugin>,
    /// The manifest used, if one exists.
    pub manifest: Option<PathBuf>,
    set: ToolSet,
}

impl Single {
    /// Loads `component` with `manifest` (default: `NAME.toml` beside it).
    pub async fn load(
        runtime: &Runtime,
        component: &Path,
        manifest: Option<&Path>,
    ) -> Result<Self, OneShotError> {
        let load_error = |source: FileError| OneShotError::Load {
            path: component.to_path_buf(),
            source,
        };
        let stem = component.file_stem().unwrap_or_default().to_string_lossy();
        let name = naming::plugin_name(&stem).map_err(|e| load_error(e.into()))?;
        let manifest_path = manifest
            .map(Path::to_path_buf)
            .unwrap_or_else(|| manifest::manifest_path(component));
        let bytes = std::fs::read(component).map_err(|e| load_error(e.into()))?;
        let resolved = manifest::load(&manifest_path, runtime.limits(), runtime.ceilings())
            .map_err(|e| load_error(e.into()))?;
        let plugin = runtime
            .load_with(&name, bytes.into(), resolved.limits, resolved.grants)
            .await
            .map_err(|e| load_error(e.into()))?;
        let plugin = std::sync::Arc::new(plugin);
        Ok(Self {
            set: ToolSet::new(vec![plugin.clone()]),
            plugin,
            manifest: manifest_path.is_file().then_some(manifest_path),
        })
    }

    /// Calls `tool` (with or without the `<plugin>_` prefix) once, after checking
    /// the arguments against its input schema as the server does. An argument
    /// problem is returned as an error output, like the server's.
    pub async fn call(&self, tool: &str, arguments: &Value) -> Result<CallResult, OneShotError> {
        let exposed = if tool.starts_with(&format!("{}_", self.plugin.name())) {
            tool.to_string()
        } else {
            format!("{}_{tool}", self.plugin.name())
        };
        let Some(found) = self.set.get(&exposed) else {
            return Err(OneShotError::UnknownTool {
                plugin: self.plugin.name().to_string(),
                tool: tool.to_string(),
                available: self
                    .set
                    .tools()
                    .iter()
                    .map(|t| t.name())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        if let Err(problems) = found.check_arguments(arguments) {
            return Ok(CallResult::Failed(format!(
                "Invalid arguments for tool `{exposed}`: {problems}"
            )));
        }
        let outcome = self
            .plugin
            .call(&found.spec().name, arguments, CallContext::default())
            .await;
        Ok(match outcome {
            Ok(output) => CallResult::Output(output),
            Err(failure @ CallFailure::UnknownTool(_)) => CallResult::Failed(failure.to_string()),
            Err(failure) => CallResult::Failed(format!("Tool `{exposed}` failed: {failure}")),
        })
    }

    /// What `wharf inspect` reports.
    pub fn report(&self) -> Report {
        let plugin = &self.plugin;
        let tools = self
            .set
            .tools()
            .iter()
            .map(|t| ToolReport {
                name: t.name().to_string(),
                description: t.spec().description.clone(),
                input_schema: Value::Object(t.spec().input_schema.clone()),
                output_schema: t.spec().output_schema.clone().map(Value::Object),
            })
            .collect();
        let grants = plugin.grants();
        Report {
            plugin: plugin.name().to_string(),
            kind: match plugin.kind() {
                PluginKind::Wharf => "wharf plugin",
                PluginKind::Plain => "plain component",
            },
            tools,
            skipped: plugin
                .skipped()
                .iter()
                .map(|s| SkippedReport {
                    function: s.function.clone(),
                    reason: s.reason.clone(),
                })
                .collect(),
            permissions: permissions(plugin.imports()),
            manifest: self.manifest.as_ref().map(|p| p.display().to_string()),
            grants: GrantsReport {
                dirs: grants
                    .dirs
                    .iter()
                    .map(|d| {
                        let mode = if d.writable {
                            "read-write"
                        } else {
                            "read-only"
                        };
                        format!("{} -> {} ({mode})", d.host.display(), d.guest)
                    })
                    .collect(),
                http: grants
                    .http
                    .patterns()
                    .iter()
                    .map(ToString::to_string)
                    .collect(),
                env: grants.env.iter().map(|(k, _)| k.clone()).collect(),
                config: grants.config.iter().map(|(k, _)| k.clone()).collect(),
            },
        }
    }
}

/// The outcome of one call.
pub enum CallResult {
    /// The tool ran (its output may still be an error, `is_error`).
    Output(CallOutput),
    /// The call failed before or while running; the message a client would see.
    Failed(String),
}

/// The content of a result as lines of text: text items as they are, other
/// items as a short placeholder.
pub fn content_text(output: &CallOutput) -> String {
    let mut text = String::new();
    for item in &output.content {
        match item {
            ContentItem::Text(t) => text.push_str(t),
            ContentItem::Image { mime_type, data } | ContentItem::Audio { mime_type, data } => {
                text.push_str(&format!("[{mime_type}, {} bytes]", data.len()))
            }
            ContentItem::ResourceLink { uri, .. } => text.push_str(&format!("[link {uri}]")),
            ContentItem::EmbeddedResource { uri, body, .. } => match body {
                ResourceBody::Text(t) => text.push_str(&format!("[resource {uri}]\n{t}")),
                ResourceBody::Blob(data) => {
                    text.push_str(&format!("[resource {uri}, {} bytes]", data.len()))
                }
            },
        }
        text.push('\n');
    }
    text
}

/// A component as `wharf inspect` describes it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub plugin: String,
    pub kind: &'static str,
    pub tools: Vec<ToolReport>,
    pub skipped: Vec<SkippedReport>,
    /// Capabilities the component imports that only a manifest can grant.
    pub permissions: Vec<Permission>,
    pub manifest: Option<String>,
    pub grants: GrantsReport,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolReport {
    pub name: String,
    pub description: Option<String>,
    pub input_schema: Value,
    pub output_schema: Option<Value>,
}

#[derive(Debug, Serialize)]
pub struct SkippedReport {
    pub function: String,
    pub reason: String,
}

/// A capability and the imports that ask for it.
#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct Permission {
    pub capability: &'static str,
    /// What grants it (a manifest section), or that nothing can.
    pub granted_by: &'static str,
    pub imports: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct GrantsReport {
    pub dirs: Vec<String>,
    pub http: Vec<String>,
    pub env: Vec<String>,
    pub config: Vec<String>,
}

/// The imports that need a grant, grouped by capability. Imports every component
/// gets (clocks, random, stdio, the `host` and `lists` interfaces) are left out.
pub fn permissions(imports: &[String]) -> Vec<Permission> {
    const CAPABILITIES: &[(&str, &str, &str)] = &[
        ("wasi:filesystem/", "filesystem", "[[dir]]"),
        ("wasi:sockets/", "sockets", "nothing (always denied)"),
        ("wasi:http/", "http", "[http] allow"),
        ("wasi:cli/environment", "env", "[env]"),
    ];
    let mut out: Vec<Permission> = Vec::new();
    for (prefix, capability, granted_by) in CAPABILITIES {
        let matching: Vec<String> = imports
            .iter()
            .filter(|i| i.starts_with(prefix))
            .cloned()
            .collect();
        if !matching.is_empty() {
            out.push(Permission {
                capability,
                granted_by,
                imports: matching,
            });
        }
    }
    out
}

impl Report {
    /// Human-readable text, schemas as pretty JSON.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap_or_default();
        let indent = |text: String| text.replace('\n', "\n    ");
        out.push_str(&format!("plugin: {}\nkind: {}\n", self.plugin, self.kind));
        out.push_str(&format!("\ntools ({}):\n", self.tools.len()));
        for tool in &self.tools {
            out.push_str(&format!("\n  {}\n", tool.name));
            if let Some(description) = &tool.description {
                out.push_str(&format!("    {}\n", indent(description.clone())));
            }
            out.push_str(&format!(
                "    input schema:\n    {}\n",
                indent(pretty(&tool.input_schema))
            ));
            match &tool.output_schema {
                Some(schema) => out.push_str(&format!(
                    "    output schema:\n    {}\n",
                    indent(pretty(schema))
                )),
                None => out.push_str("    output schema: none\n"),
            }
        }
        if !self.skipped.is_empty() {
            out.push_str(&format!("\nskipped functions ({}):\n", self.skipped.len()));
            for skip in &self.skipped {
                out.push_str(&format!("  {}: {}\n", skip.function, skip.reason));
            }
        }
        out.push_str("\npermissions the component imports:\n");
        if self.permissions.is_empty() {
            out.push_str("  none beyond the default sandbox\n");
        }
        for p in &self.permissions {
            out.push_str(&format!(
                "  {} (granted by {}): {}\n",
                p.capability,
                p.granted_by,
                p.imports.join(", ")
            ));
        }
        match &self.manifest {
            None => out.push_str("\nmanifest: none (default sandbox: nothing granted)\n"),
            Some(path) => {
                out.push_str(&format!("\nmanifest: {path}\n"));
                let g = &self.grants;
                for (what, list) in [
                    ("dirs", &g.dirs),
                    ("http", &g.http),
                    ("env", &g.env),
                    ("config", &g.config),
                ] {
                    let shown = if list.is_empty() {
                        "none".to_string()
                    } else {
                        list.join(", ")
                    };
                    out.push_str(&format!("  {what}: {shown}\n"));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permissions_group_imports_by_capability() {
        let imports: Vec<String> = [
            "wasi:cli/environment@0.2.6",
            "wasi:clocks/wall-clock@0.2.6",
            "wasi:filesystem/types@0.2.6",
            "wasi:filesystem/preopens@0.2.6",
            "wasi:sockets/tcp@0.2.6",
        ]
        .map(String::from)
        .to_vec();
        let p = permissions(&imports);
        let caps: Vec<&str> = p.iter().map(|p| p.capability).collect();
        assert_eq!(caps, ["filesystem", "sockets", "env"]);
        assert_eq!(p[0].imports.len(), 2);
        assert_eq!(p[0].granted_by, "[[dir]]");
    }
}
