//! The audit lines of a scan: each plugin loaded, removed or failed.

use std::sync::Arc;

use super::{PluginFolder, ScanReport};
use crate::audit::{AuditLog, PluginChange, PluginEntry};
use crate::registry::ToolSet;

impl PluginFolder {
    /// Writes the audit line of each change `report` lists: a plugin loaded
    /// (with the digest it replaced, from `before`, the set served before
    /// the scan), removed, or failed to load; and tells `audit` which
    /// argument fields of each loaded plugin its call lines redact.
    pub fn audit_scan(&self, report: &ScanReport, before: &ToolSet, audit: &AuditLog) {
        let digest_before = |name: &str| {
            before
                .plugins()
                .iter()
                .find(|p| p.name() == name)
                .map(|p| p.digest().hex())
        };
        for name in &report.loaded {
            let Some(loaded) = self.loaded.get(name) else {
                continue;
            };
            let digest = loaded.plugin.digest().hex();
            let previous = digest_before(name);
            let file = loaded.path.display().to_string();
            audit.set_secret_fields(name, loaded.secret_fields.clone());
            audit.plugin(&PluginEntry {
                change: PluginChange::Loaded,
                plugin: name,
                digest: Some(&digest),
                previous_digest: previous.as_deref(),
                file: Some(&file),
            });
        }
        for name in &report.removed {
            audit.set_secret_fields(name, Arc::from([]));
            let digest = digest_before(name);
            audit.plugin(&PluginEntry {
                change: PluginChange::Removed,
                plugin: name,
                digest: digest.as_deref(),
                previous_digest: None,
                file: None,
            });
        }
        for path in &report.failed {
            let name = path.file_stem().unwrap_or_default().to_string_lossy();
            let file = path.display().to_string();
            audit.plugin(&PluginEntry {
                change: PluginChange::Failed,
                plugin: &name,
                digest: None,
                previous_digest: None,
                file: Some(&file),
            });
        }
    }

    /// Writes that plugin `name` was listed again at its own word.
    pub fn audit_relist(&self, name: &str, audit: &AuditLog) {
        let Some(loaded) = self.loaded.get(name) else {
            return;
        };
        let digest = loaded.plugin.digest().hex();
        let file = loaded.path.display().to_string();
        audit.plugin(&PluginEntry {
            change: PluginChange::Relisted,
            plugin: name,
            digest: Some(&digest),
            previous_digest: None,
            file: Some(&file),
        });
    }
}
