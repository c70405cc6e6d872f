//! Turns the plugin folder into loaded plugins, and keeps them in step with it.
//!
//! Strategy: a [`PluginFolder`] remembers, per plugin name, the file it came from
//! and a fingerprint of that file's bytes and of its manifest (`NAME.toml` beside
//! `NAME.wasm`, which sets the plugin's limits and grants). Each
//! [`PluginFolder::scan`] lists the folder again, loads only what changed
//! (compilation runs off the async executor), keeps the previous version of a
//! plugin whose new file or manifest fails to load, and drops plugins whose file is
//! gone. The caller turns the result into a [`ToolSet`] and swaps it into the
//! registry.
//!
//! A `NAME.oci` file holds a reference instead of a component: its bytes come
//! from the registry through [`OciSource::fetch`] (pulled, stored, verified)
//! and go the same way as a file's, so a tag that moves is a changed file.
//! With `--require-signed`, a `NAME.wasm` loads only beside a `NAME.wasm.sig`
//! that a trusted key made over its bytes (`cosign sign-blob`'s format).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::audit::{AuditLog, PluginChange, PluginEntry};
use crate::manifest::{self, ManifestError, Scopes};
use crate::naming;
use crate::oci::reference::{Reference, ReferenceError};
use crate::oci::signature::TrustPolicy;
use crate::oci::source::{OciError, OciSource};
use crate::registry::{Naming, PluginSetDigest, PluginVersion, ToolSet};
use crate::runtime::{ContentHash, LoadError, Plugin, Runtime};

/// Why one file in the folder did not become a plugin.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error(transparent)]
    Name(#[from] naming::NameError),
    #[error("plugin name `{name}` is already taken by {}", .taken_by.display())]
    DuplicateName { name: String, taken_by: PathBuf },
    #[error("reading the file failed: {0}")]
    Read(#[from] std::io::Error),
    #[error("it is not a regular file")]
    NotAFile,
    #[error("it is a symlink that leads to no file: {0}")]
    BrokenSymlink(std::io::Error),
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(transparent)]
    Reference(#[from] ReferenceError),
    #[error(transparent)]
    Oci(#[from] Box<OciError>),
    #[error("it is a registry reference, and registry plugins are not enabled here")]
    NoRegistry,
    #[error("--require-signed: {0}")]
    Unsigned(String),
    /// Refused rather than loaded: a misspelt name would leave the tool it
    /// meant guarded by fewer scopes than intended.
    #[error("invalid manifest {}, key `auth.tools.{tool}`: the plugin has no tool `{tool}`", .path.display())]
    UnknownScopedTool { path: PathBuf, tool: String },
}

/// Why the folder itself could not be read.
#[derive(Debug, thiserror::Error)]
#[error("cannot read the plugin folder {}: {source}", .path.display())]
pub struct FolderError {
    path: PathBuf,
    source: std::io::Error,
}

/// Whether a file is complete enough to load: the watcher knows when a writer
/// closed it or renamed it into place; otherwise its age decides.
pub trait Settled: Sync {
    fn settled(&self, path: &Path, modified: SystemTime) -> bool;
}

/// Every file counts as complete (start-up, one-shot loads).
pub struct AllSettled;

impl Settled for AllSettled {
    fn settled(&self, _: &Path, _: SystemTime) -> bool {
        true
    }
}

/// A plugin and the version of the file it was loaded from.
struct Loaded {
    path: PathBuf,
    fingerprint: Fingerprint,
    plugin: Arc<Plugin>,
    naming: Naming,
    scopes: Scopes,
    /// Argument fields its audit lines redact (`[audit] secret`).
    secret_fields: Arc<[String]>,
}

/// What a scan did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ScanReport {
    /// Plugins loaded (new or new version), by name.
    pub loaded: Vec<String>,
    /// Plugins removed because their file is gone.
    pub removed: Vec<String>,
    /// Files that failed to load (the previous version, if any, keeps serving).
    pub failed: Vec<PathBuf>,
    /// Files still being written; scan again later.
    pub deferred: Vec<PathBuf>,
}

impl ScanReport {
    /// Whether the set of plugins changed.
    pub fn changed(&self) -> bool {
        !self.loaded.is_empty() || !self.removed.is_empty()
    }
}

/// The plugins loaded from one folder.
pub struct PluginFolder {
    dir: PathBuf,
    runtime: Arc<Runtime>,
    loaded: BTreeMap<String, Loaded>,
    /// Files that failed, so one broken file is reported once: by fingerprint when
    /// loading failed, `None` when its name was the problem.
    failed: HashMap<PathBuf, Option<Fingerprint>>,
    /// Where `.oci` references are pulled from.
    oci: Option<Arc<OciSource>>,
    /// Plugins named on the command line: name and reference.
    references: Vec<(String, Reference)>,
    /// With `--require-signed`: the keys a local component's `.sig` must verify under.
    local_trust: Option<TrustPolicy>,
    /// The last problem logged per file while getting its bytes (a registry
    /// down, a refused signature), so each is logged once until it changes.
    noted: HashMap<PathBuf, String>,
}

impl PluginFolder {
    /// A folder with nothing loaded yet; call [`Self::scan`].
    pub fn new(dir: &Path, runtime: Arc<Runtime>) -> Self {
        Self {
            dir: dir.to_path_buf(),
            runtime,
            loaded: BTreeMap::new(),
            failed: HashMap::new(),
            oci: None,
            references: Vec::new(),
            local_trust: None,
            noted: HashMap::new(),
        }
    }

    /// Loads `NAME.oci` references from `source`.
    pub fn with_oci(mut self, source: Arc<OciSource>) -> Self {
        self.oci = Some(source);
        self
    }

    /// Also serves these plugins (`--plugin NAME=oci://…`), each with the
    /// folder's `NAME.toml` as its manifest.
    pub fn with_references(mut self, references: Vec<(String, Reference)>) -> Self {
        self.references = references;
        self
    }

    /// Requires every local component to carry a signature by one of `policy`'s keys.
    pub fn require_signed(mut self, policy: TrustPolicy) -> Self {
        self.local_trust = Some(policy);
        self
    }

    /// How often registry tags should be looked at again (scan that often).
    pub fn poll_interval(&self) -> Option<Duration> {
        self.oci.as_ref().map(|source| source.poll_interval())
    }

    /// The folder being served.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// How many plugins are loaded.
    pub fn len(&self) -> usize {
        self.loaded.len()
    }

    /// Whether no plugin is loaded.
    pub fn is_empty(&self) -> bool {
        self.loaded.is_empty()
    }

    /// The current plugins as a tool set, with the digest of their files.
    pub fn tool_set(&self) -> ToolSet {
        let digest = PluginSetDigest::of(self.loaded.iter().map(|(name, l)| PluginVersion {
            name,
            component: l.fingerprint.component,
            manifest: match l.fingerprint.manifest {
                ManifestPrint::Bytes(hash) => Some(hash),
                // A plugin whose manifest could not be read is not loaded.
                ManifestPrint::Absent | ManifestPrint::Unreadable => None,
            },
        }));
        ToolSet::with_naming(
            self.loaded
                .values()
                .map(|l| (l.plugin.clone(), l.naming, l.scopes.clone()))
                .collect(),
        )
        .with_digest(digest)
    }

    /// Brings the loaded plugins in line with the folder. A file that fails is
    /// logged and skipped; the others load, concurrently.
    pub async fn scan(&mut self, settled: &dyn Settled) -> Result<ScanReport, FolderError> {
        let mut report = ScanReport::default();
        let mut claimed: BTreeMap<String, PathBuf> = BTreeMap::new();
        let mut jobs = Vec::new();
        // `--plugin` references first: named on the command line, they win a
        // name clash with a file.
        let mut entries: Vec<(PathBuf, Option<Reference>)> = self
            .references
            .iter()
            .map(|(name, reference)| (reference_label(name, reference), Some(reference.clone())))
            .collect();
        entries.extend(component_files(&self.dir)?.into_iter().map(|p| (p, None)));
        for (path, given) in entries {
            let (name, modified) = if let Some(reference) = &given {
                let name = self
                    .references
                    .iter()
                    .find(|(_, r)| r == reference)
                    .map(|(name, _)| name.clone())
                    .unwrap_or_default();
                (name, None)
            } else {
                let modified = match regular_file(&path) {
                    Ok(Some(modified)) => modified,
                    // Deleted since the folder was listed.
                    Ok(None) => continue,
                    Err(error) => {
                        self.report_once(&path, &error);
                        continue;
                    }
                };
                let stem = path.file_stem().unwrap_or_default().to_string_lossy();
                match naming::plugin_name(&stem) {
                    Ok(name) => (name, Some(modified)),
                    Err(error) => {
                        self.report_once(&path, &FileError::from(error));
                        continue;
                    }
                }
            };
            if let Some(taken_by) = claimed.get(&name) {
                let error = FileError::DuplicateName {
                    name,
                    taken_by: taken_by.clone(),
                };
                self.report_once(&path, &error);
                continue;
            }
            claimed.insert(name.clone(), path.clone());

            let manifest_path = match &given {
                Some(_) => self.dir.join(format!("{name}.toml")),
                None => manifest::manifest_path(&path),
            };
            let file_settled = modified.is_none_or(|modified| settled.settled(&path, modified));
            if !file_settled || !manifest_settled(settled, &manifest_path) {
                report.deferred.push(path);
                continue;
            }
            let bytes = match self.component_bytes(&path, given.as_ref()).await {
                Ok(Some(bytes)) => bytes,
                Ok(None) => {
                    report.deferred.push(path);
                    continue;
                }
                Err(error) => {
                    self.note(&path, &name, &error);
                    report.failed.push(path);
                    continue;
                }
            };
            // Read once: the fingerprint and the settings come from the same bytes.
            let manifest = manifest::read(&manifest_path);
            let fingerprint = Fingerprint {
                component: ContentHash::of(&bytes),
                manifest: match &manifest {
                    Ok(None) => ManifestPrint::Absent,
                    Ok(Some(text)) => ManifestPrint::Bytes(ContentHash::of(text)),
                    Err(_) => ManifestPrint::Unreadable,
                },
            };
            let unchanged = self
                .loaded
                .get(&name)
                .is_some_and(|l| l.path == path && l.fingerprint == fingerprint);
            if unchanged || self.failed.get(&path) == Some(&Some(fingerprint)) {
                continue;
            }
            let runtime = self.runtime.clone();
            jobs.push(async move {
                let result = match manifest {
                    Ok(manifest) => {
                        load_file(&runtime, &name, &manifest_path, manifest.as_deref(), bytes).await
                    }
                    Err(error) => Err(error.into()),
                };
                (name, path, fingerprint, result)
            });
        }

        for (name, path, fingerprint, result) in futures::future::join_all(jobs).await {
            match result {
                Ok((plugin, naming, scopes, secret_fields)) => {
                    tracing::info!(
                        plugin = plugin.name(),
                        tools = plugin.tools().len(),
                        file = %path.display(),
                        "plugin loaded"
                    );
                    self.failed.remove(&path);
                    self.loaded.insert(
                        name.clone(),
                        Loaded {
                            path,
                            fingerprint,
                            plugin: Arc::new(plugin),
                            naming,
                            scopes,
                            secret_fields: secret_fields.into(),
                        },
                    );
                    report.loaded.push(name);
                }
                Err(error) => {
                    let keeps = if self.loaded.contains_key(&name) {
                        "; the previous version keeps serving"
                    } else {
                        ""
                    };
                    tracing::error!(file = %path.display(), "plugin not loaded: {error}{keeps}");
                    self.failed.insert(path.clone(), Some(fingerprint));
                    report.failed.push(path);
                }
            }
        }

        let gone: Vec<String> = self
            .loaded
            .keys()
            .filter(|name| !claimed.contains_key(*name))
            .cloned()
            .collect();
        for name in gone {
            if let Some(old) = self.loaded.remove(&name) {
                tracing::info!(plugin = %name, file = %old.path.display(), "plugin removed");
            }
            report.removed.push(name);
        }
        // `symlink_metadata`: a symlink loop is still there, and still reported.
        let labels: Vec<PathBuf> = self
            .references
            .iter()
            .map(|(name, reference)| reference_label(name, reference))
            .collect();
        let there =
            |path: &PathBuf| labels.contains(path) || std::fs::symlink_metadata(path).is_ok();
        self.failed.retain(|path, _| there(path));
        self.noted.retain(|path, _| there(path));
        Ok(report)
    }

    /// The component bytes behind `path`: the file's own, or for a `.oci`
    /// file the registry's, verified as the policy asks. `None`: not readable
    /// yet (gone or being replaced), try again later.
    async fn component_bytes(
        &mut self,
        path: &Path,
        given: Option<&Reference>,
    ) -> Result<Option<Vec<u8>>, FileError> {
        if let Some(reference) = given {
            return self.pull(path, reference).await.map(Some);
        }
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(error) => {
                // Gone or unreadable between listing and reading: try again later.
                tracing::debug!(file = %path.display(), "cannot read yet: {error}");
                return Ok(None);
            }
        };
        if !is_reference(path) {
            if let Some(policy) = &self.local_trust {
                let signature = signature_path(path);
                let text = std::fs::read_to_string(&signature).map_err(|error| {
                    FileError::Unsigned(format!("no signature at {}: {error}", signature.display()))
                })?;
                policy.verify_blob(&bytes, &text).map_err(|reason| {
                    FileError::Unsigned(format!("{}: {reason}", signature.display()))
                })?;
            }
            self.noted.remove(path);
            return Ok(Some(bytes));
        }
        let reference = Reference::parse(String::from_utf8_lossy(&bytes).trim())?;
        self.pull(path, &reference).await.map(Some)
    }

    /// The component `reference` names now, from the registry source.
    async fn pull(&mut self, path: &Path, reference: &Reference) -> Result<Vec<u8>, FileError> {
        let source = self.oci.clone().ok_or(FileError::NoRegistry)?;
        let fetched = source.fetch(reference).await.map_err(Box::new)?;
        match fetched.stale {
            Some(warning) => {
                if self.noted.get(path) != Some(&warning) {
                    tracing::warn!(file = %path.display(), "{warning}");
                    self.noted.insert(path.to_path_buf(), warning);
                }
            }
            None => {
                if self.noted.remove(path).is_some() {
                    tracing::info!(file = %path.display(), reference = %reference, "the registry answers again");
                }
                tracing::debug!(reference = %reference, digest = %fetched.digest, "resolved");
            }
        }
        Ok(fetched.component)
    }

    /// Logs why a file gave no bytes, once until the reason changes.
    fn note(&mut self, path: &Path, name: &str, error: &FileError) {
        let text = error.to_string();
        if self.noted.get(path) == Some(&text) {
            return;
        }
        let keeps = if self.loaded.contains_key(name) {
            "; the previous version keeps serving"
        } else {
            ""
        };
        tracing::error!(file = %path.display(), "plugin not loaded: {text}{keeps}");
        self.noted.insert(path.to_path_buf(), text);
    }

    /// Asks the plugin `name` again for the lists it said changed
    /// (`lists.changed`) and keeps the result as its current version, its
    /// file and manifest unchanged: whether it was replaced (the caller then
    /// swaps [`Self::tool_set`] into the registry, as after a scan). A plugin
    /// that is gone, or whose re-listing fails (logged), keeps what it had.
    pub async fn relist(&mut self, name: &str) -> bool {
        let Some(loaded) = self.loaded.get_mut(name) else {
            return false;
        };
        match loaded.plugin.relisted().await {
            Ok(Some(plugin)) => {
                tracing::info!(
                    plugin = name,
                    tools = plugin.tools().len(),
                    prompts = plugin.prompts().len(),
                    resources = plugin.resources().len() + plugin.templates().len(),
                    "plugin listed again: it said its lists changed"
                );
                loaded.plugin = Arc::new(plugin);
                true
            }
            Ok(None) => false,
            Err(error) => {
                tracing::error!(
                    plugin = name,
                    "listing the plugin again failed: {error}; it keeps its lists"
                );
                false
            }
        }
    }

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

    /// Logs a naming problem with a file unless it was logged already.
    fn report_once(&mut self, path: &Path, error: &FileError) {
        if self.failed.insert(path.to_path_buf(), None) != Some(None) {
            tracing::error!(file = %path.display(), "plugin not loaded: {error}");
        }
    }
}

/// The `.wasm` and `.oci` entries directly inside `dir`, sorted by file name so that load
/// order (and who wins a name clash) never depends on the file system.
pub fn component_files(dir: &Path) -> Result<Vec<PathBuf>, FolderError> {
    let entries = std::fs::read_dir(dir).map_err(|source| FolderError {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            path.extension()
                .is_some_and(|ext| ext == "wasm" || ext == "oci")
        })
        .collect();
    files.sort();
    Ok(files)
}

/// What a `--plugin` reference is called in log lines and reports, in place
/// of a file's path.
fn reference_label(name: &str, reference: &Reference) -> PathBuf {
    PathBuf::from(format!("--plugin {name}={reference}"))
}

/// Whether `path` is a registry reference (`NAME.oci`) rather than a component.
fn is_reference(path: &Path) -> bool {
    path.extension().is_some_and(|ext| ext == "oci")
}

/// Where the detached signature of a local component lives: `NAME.wasm.sig`.
pub fn signature_path(component: &Path) -> PathBuf {
    let mut name = component.as_os_str().to_os_string();
    name.push(".sig");
    PathBuf::from(name)
}

/// When the regular file at `path` (symlinks followed) was last modified;
/// `None` if nothing is there any more. A directory, a device or a pipe
/// (reading it could block for ever), a dangling symlink or a symlink loop is
/// an error.
fn regular_file(path: &Path) -> Result<Option<SystemTime>, FileError> {
    match std::fs::metadata(path) {
        Ok(metadata) if metadata.is_file() => {
            Ok(Some(metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH)))
        }
        Ok(_) => Err(FileError::NotAFile),
        Err(error) if std::fs::symlink_metadata(path).is_err() => {
            tracing::debug!(file = %path.display(), "gone since the folder was listed: {error}");
            Ok(None)
        }
        Err(error) => Err(FileError::BrokenSymlink(error)),
    }
}

/// Whether the manifest at `path`, if there is one, is complete enough to read.
fn manifest_settled(settled: &dyn Settled, path: &Path) -> bool {
    match std::fs::metadata(path).and_then(|m| m.modified()) {
        Ok(modified) => settled.settled(path, modified),
        // None (the plugin loads without one), or an error reading it reports.
        Err(_) => true,
    }
}

/// Identifies one version of a plugin: its component bytes and its manifest's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fingerprint {
    component: ContentHash,
    manifest: ManifestPrint,
}

/// What the manifest beside a component was when it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ManifestPrint {
    Absent,
    Bytes(ContentHash),
    /// There, but it could not be read (so the plugin did not load).
    Unreadable,
}

/// Loads one component with its manifest (`manifest`: the bytes read from
/// `manifest_path`, if there is one); a manifest that is present but invalid
/// keeps the plugin from loading.
async fn load_file(
    runtime: &Runtime,
    name: &str,
    manifest_path: &Path,
    manifest: Option<&[u8]>,
    bytes: Vec<u8>,
) -> Result<(Plugin, Naming, Scopes, Vec<String>), FileError> {
    let resolved = manifest::resolve_bytes(
        manifest_path,
        manifest,
        runtime.limits(),
        runtime.ceilings(),
    )?;
    let naming = if resolved.prefix_names {
        Naming::Prefixed
    } else {
        Naming::AsDeclared
    };
    let plugin = runtime
        .load_with(name, bytes, resolved.limits, resolved.grants)
        .await?;
    if let Some(tool) = resolved
        .scopes
        .named_tools()
        .find(|named| !plugin.tools().iter().any(|spec| spec.name == *named))
    {
        return Err(FileError::UnknownScopedTool {
            path: manifest_path.to_path_buf(),
            tool: tool.to_owned(),
        });
    }
    Ok((plugin, naming, resolved.scopes, resolved.secret_fields))
}
