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

use crate::manifest::{self, ManifestError, Scopes, TaskPolicy};
use crate::naming;
use crate::oci::reference::{Reference, ReferenceError};
use crate::oci::signature::TrustPolicy;
use crate::oci::source::{OciError, OciSource};
use crate::registry::{Naming, PluginSetDigest, PluginVersion, ToolSet};
use crate::runtime::{ComponentBytes, ContentHash, LoadError, Plugin, Runtime};

mod audit;
mod load;
mod scan;
mod sources;

use load::{LoadedFile, load_file, manifest_settled, regular_file};

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
    /// `[tasks]` names a tool the plugin does not have: a typo would leave
    /// the tool answering without a task.
    #[error("invalid manifest {}, key `{key}`: the plugin has no tool `{tool}`", .path.display())]
    UnknownTaskTool {
        path: PathBuf,
        key: &'static str,
        tool: String,
    },
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
    /// Which of its tools answer with a task (`[tasks]`).
    tasks: TaskPolicy,
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
        .with_task_policies(
            self.loaded
                .values()
                .map(|l| (l.plugin.name().to_owned(), l.tasks.clone())),
        )
        .with_digest(digest)
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
