//! Plugin manifests: `NAME.toml` beside `NAME.wasm`, granting a plugin more than
//! the default sandbox (directories, HTTP hosts, environment variables, configuration)
//! and setting its limits.
//!
//! A manifest is checked completely at load time: unknown keys, wrong types, missing
//! directories, malformed host patterns and limits above the server's ceilings are
//! all errors that name the file and the key, and the plugin is not loaded. Limits a
//! manifest does not set come from the command line's defaults.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::runtime::{CallLimits, Ceilings, DirGrant, Grants, HostAllowList, HostPattern};

mod auth;
pub mod tasks;
use auth::resolve_scopes;
pub use auth::{AuthSection, Scopes};
pub use tasks::{TaskMode, TaskPolicy, TaskStart};

/// The contents of a manifest file, as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Manifest {
    /// Limits of each call; unset keys take the server's defaults.
    #[serde(default)]
    pub limits: LimitsSection,
    /// Preopened directories (`[[dir]]`, one table per directory).
    #[serde(default)]
    pub dir: Vec<DirSection>,
    /// Outbound HTTP.
    #[serde(default)]
    pub http: HttpSection,
    /// Environment variables.
    #[serde(default)]
    pub env: EnvSection,
    /// Static configuration, readable through the `host.config` import.
    #[serde(default)]
    pub config: BTreeMap<String, String>,
    /// How the plugin's tools, prompts and resources are named for clients.
    #[serde(default)]
    pub names: NamesSection,
    /// The OAuth scopes a caller needs (over HTTP with `--auth-issuer`).
    #[serde(default)]
    pub auth: AuthSection,
    /// What the audit trail must not write.
    #[serde(default)]
    pub audit: AuditSection,
    /// Which tools answer with a task (`io.modelcontextprotocol/tasks`).
    #[serde(default)]
    pub tasks: tasks::TasksSection,
}

/// `[audit]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct AuditSection {
    /// Argument fields (object keys, at any depth) whose values a
    /// `--audit-arguments` line replaces with `"[redacted]"`.
    #[serde(default)]
    pub secret: Vec<String>,
}

/// `[names]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct NamesSection {
    /// `false` exposes tools and prompts under the names the plugin gives them,
    /// without the `<plugin>_` prefix, and resources under the plugin's own URIs
    /// (default `true`). A name or URI another plugin already exposes is then
    /// left out.
    pub prefix: Option<bool>,
}

/// `[limits]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LimitsSection {
    pub memory_mib: Option<u32>,
    pub timeout_ms: Option<u64>,
    pub fuel: Option<u64>,
    pub max_concurrent_calls: Option<u32>,
    pub max_output_bytes: Option<u64>,
}

/// One `[[dir]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct DirSection {
    /// Host directory, absolute or relative to the manifest's folder.
    pub host: PathBuf,
    /// Absolute path the guest sees it at.
    pub guest: String,
    #[serde(default)]
    pub mode: DirMode,
}

/// Whether a directory is granted for reading only or also for writing.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DirMode {
    #[default]
    ReadOnly,
    ReadWrite,
}

/// `[http]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct HttpSection {
    /// `host`, `host:port`, `host:*` or `*.domain` entries.
    #[serde(default)]
    pub allow: Vec<String>,
}

/// `[env]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct EnvSection {
    /// Names passed through from Wharf's own environment (skipped if unset there).
    #[serde(default)]
    pub pass: Vec<String>,
    /// Fixed values; they win over a passed-through variable of the same name.
    #[serde(default)]
    pub set: BTreeMap<String, String>,
}

/// Why a manifest was refused; the message names the file and the key.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("cannot read the manifest {}: {source}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("invalid manifest {}{}: {message}", .path.display(), key_suffix(.key))]
    Invalid {
        path: PathBuf,
        /// Dotted path of the offending key (`limits.memory-mib`, `dir[0].host`),
        /// empty for a syntax error.
        key: String,
        message: String,
    },
}

fn key_suffix(key: &str) -> String {
    if key.is_empty() {
        String::new()
    } else {
        format!(", key `{key}`")
    }
}

/// The manifest that goes with a component: same folder, same stem, `.toml`.
pub fn manifest_path(component: &Path) -> PathBuf {
    component.with_extension("toml")
}

/// What a manifest resolves to: the limits and grants of the plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub limits: CallLimits,
    pub grants: Grants,
    /// Whether names get the plugin's prefix (`[names] prefix`).
    pub prefix_names: bool,
    /// The scopes its tools need (`[auth]`).
    pub scopes: Scopes,
    /// Argument fields the audit trail redacts (`[audit] secret`).
    pub secret_fields: Vec<String>,
    /// Which tools answer with a task (`[tasks]`).
    pub tasks: TaskPolicy,
}

/// Reads and resolves the manifest at `path`, or returns `defaults` and no grants
/// if there is none.
pub fn load(
    path: &Path,
    defaults: &CallLimits,
    ceilings: &Ceilings,
) -> Result<Resolved, ManifestError> {
    resolve_bytes(path, read(path)?.as_deref(), defaults, ceilings)
}

/// The bytes of the manifest at `path`, or `None` if there is none. A caller
/// that fingerprints a manifest reads it once with this and resolves the same
/// bytes, so an edit between two reads cannot pair one version's fingerprint
/// with another's settings.
pub fn read(path: &Path) -> Result<Option<Vec<u8>>, ManifestError> {
    match std::fs::read(path) {
        Ok(text) => Ok(Some(text)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ManifestError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Resolves the manifest `bytes` read from `path` (`None`: there is none, so
/// `defaults` and no grants).
pub fn resolve_bytes(
    path: &Path,
    bytes: Option<&[u8]>,
    defaults: &CallLimits,
    ceilings: &Ceilings,
) -> Result<Resolved, ManifestError> {
    let Some(bytes) = bytes else {
        return Ok(Resolved {
            limits: defaults.clone(),
            grants: Grants::default(),
            prefix_names: true,
            scopes: Scopes::default(),
            secret_fields: Vec::new(),
            tasks: TaskPolicy::default(),
        });
    };
    let text = std::str::from_utf8(bytes).map_err(|_| ManifestError::Read {
        path: path.to_path_buf(),
        source: std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        ),
    })?;
    let manifest = parse(path, text)?;
    let folder = path.parent().unwrap_or(Path::new("."));
    resolve(&manifest, folder, defaults, ceilings, |name| {
        std::env::var(name).ok()
    })
    .map_err(|(key, message)| ManifestError::Invalid {
        path: path.to_path_buf(),
        key,
        message,
    })
}

/// Parses manifest text; errors carry the key path and the line.
pub fn parse(path: &Path, text: &str) -> Result<Manifest, ManifestError> {
    let invalid = |key: String, error: &toml::de::Error| {
        let line = error
            .span()
            .map(|span| text[..span.start.min(text.len())].matches('\n').count() + 1);
        let message = error.message().trim_end().to_string();
        ManifestError::Invalid {
            path: path.to_path_buf(),
            key,
            message: match line {
                Some(line) => format!("{message} (line {line})"),
                None => message,
            },
        }
    };
    let deserializer = toml::Deserializer::parse(text).map_err(|e| invalid(String::new(), &e))?;
    serde_path_to_error::deserialize(deserializer).map_err(|error| {
        let key = error.path().to_string();
        let key = if key == "." { String::new() } else { key };
        invalid(key, error.inner())
    })
}

/// A key path and what is wrong with it.
type KeyError = (String, String);

/// Turns a parsed manifest into limits and grants: fills in defaults, checks limits
/// against the ceilings, canonicalises directories (relative to `folder`), parses
/// host patterns and reads passed-through variables with `getenv`.
pub fn resolve(
    manifest: &Manifest,
    folder: &Path,
    defaults: &CallLimits,
    ceilings: &Ceilings,
    getenv: impl Fn(&str) -> Option<String>,
) -> Result<Resolved, KeyError> {
    let limits = resolve_limits(&manifest.limits, defaults, ceilings)?;
    let mut dirs: Vec<DirGrant> = Vec::new();
    for (index, dir) in manifest.dir.iter().enumerate() {
        let grant = resolve_dir(dir, folder)
            .map_err(|(field, message)| (format!("dir[{index}].{field}"), message))?;
        if dirs.iter().any(|d| d.guest == grant.guest) {
            return Err((
                format!("dir[{index}].guest"),
                format!("`{}` is granted twice", grant.guest),
            ));
        }
        dirs.push(grant);
    }
    let mut patterns = Vec::new();
    for (index, entry) in manifest.http.allow.iter().enumerate() {
        let pattern = HostPattern::parse(entry)
            .map_err(|error| (format!("http.allow[{index}]"), error.to_string()))?;
        patterns.push(pattern);
    }
    let mut env: Vec<(String, String)> = Vec::new();
    for (index, name) in manifest.env.pass.iter().enumerate() {
        check_env_name(name).map_err(|m| (format!("env.pass[{index}]"), m))?;
        match getenv(name) {
            Some(value) => env.push((name.clone(), value)),
            None => {
                tracing::warn!(variable = %name, "env.pass: not set in Wharf's environment, skipped")
            }
        }
    }
    for (name, value) in &manifest.env.set {
        check_env_name(name).map_err(|m| (format!("env.set.{name}"), m))?;
        env.retain(|(n, _)| n != name);
        env.push((name.clone(), value.clone()));
    }
    Ok(Resolved {
        limits,
        grants: Grants {
            dirs,
            http: HostAllowList::new(patterns),
            env,
            config: manifest
                .config
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            caller: manifest.auth.caller,
        },
        prefix_names: manifest.names.prefix.unwrap_or(true),
        scopes: resolve_scopes(&manifest.auth)?,
        secret_fields: secret_fields(&manifest.audit)?,
        tasks: tasks::resolve(&manifest.tasks)?,
    })
}

/// `[audit] secret`, each name checked.
fn secret_fields(audit: &AuditSection) -> Result<Vec<String>, KeyError> {
    for (index, name) in audit.secret.iter().enumerate() {
        if name.is_empty() {
            return Err((
                format!("audit.secret[{index}]"),
                "a field name cannot be empty".into(),
            ));
        }
    }
    Ok(audit.secret.clone())
}

fn resolve_limits(
    section: &LimitsSection,
    defaults: &CallLimits,
    ceilings: &Ceilings,
) -> Result<CallLimits, KeyError> {
    let mut limits = defaults.clone();
    let positive = |key: &str, value: u64| {
        if value == 0 {
            Err((format!("limits.{key}"), "must be at least 1".to_string()))
        } else {
            Ok(value)
        }
    };
    if let Some(mib) = section.memory_mib {
        let bytes = positive("memory-mib", mib.into())? as usize * (1 << 20);
        if bytes > ceilings.memory_bytes {
            return Err((
                "limits.memory-mib".into(),
                format!(
                    "{mib} is above the server's ceiling of {} MiB (--max-memory-mib)",
                    ceilings.memory_bytes >> 20
                ),
            ));
        }
        limits.memory_bytes = bytes;
    }
    if let Some(ms) = section.timeout_ms {
        let timeout = Duration::from_millis(positive("timeout-ms", ms)?);
        if timeout > ceilings.timeout {
            return Err((
                "limits.timeout-ms".into(),
                format!(
                    "{ms} is above the server's ceiling of {} ms (--max-timeout-ms)",
                    ceilings.timeout.as_millis()
                ),
            ));
        }
        limits.timeout = timeout;
    }
    if let Some(fuel) = section.fuel {
        limits.fuel = Some(positive("fuel", fuel)?);
    }
    if let Some(calls) = section.max_concurrent_calls {
        limits.max_concurrent_calls = positive("max-concurrent-calls", calls.into())? as usize;
    }
    if let Some(bytes) = section.max_output_bytes {
        let bytes = positive("max-output-bytes", bytes)?;
        limits.max_output_bytes = usize::try_from(bytes).unwrap_or(usize::MAX);
    }
    Ok(limits)
}

fn resolve_dir(dir: &DirSection, folder: &Path) -> Result<DirGrant, (&'static str, String)> {
    let joined = folder.join(&dir.host);
    let host = joined
        .canonicalize()
        .map_err(|e| ("host", format!("{}: {e}", joined.display())))?;
    if !host.is_dir() {
        return Err(("host", format!("{} is not a directory", host.display())));
    }
    let guest = Path::new(&dir.guest);
    let normal = guest.is_absolute()
        && guest
            .components()
            .all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
    if !normal {
        return Err((
            "guest",
            format!(
                "`{}` must be an absolute path without `.` or `..`",
                dir.guest
            ),
        ));
    }
    Ok(DirGrant {
        host,
        guest: dir.guest.clone(),
        writable: dir.mode == DirMode::ReadWrite,
    })
}

fn check_env_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.contains('=') || name.contains('\0') {
        Err(format!("`{name}` is not a valid environment variable name"))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
