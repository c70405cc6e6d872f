//! Reads the plugin folder and turns its components into loaded plugins, each with
//! the limits and grants of its manifest (`NAME.toml` beside `NAME.wasm`), if any.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::manifest::{self, ManifestError};
use crate::naming;
use crate::runtime::{LoadError, Plugin, Runtime};

/// Why one file in the folder did not become a plugin.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error(transparent)]
    Name(#[from] naming::NameError),
    #[error("plugin name `{name}` is already taken by {}", .taken_by.display())]
    DuplicateName { name: String, taken_by: PathBuf },
    #[error("reading the file failed: {0}")]
    Read(#[from] std::io::Error),
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error(transparent)]
    Load(#[from] LoadError),
}

/// Why the folder itself could not be read.
#[derive(Debug, thiserror::Error)]
#[error("cannot read the plugin folder {}: {source}", .path.display())]
pub struct FolderError {
    path: PathBuf,
    source: std::io::Error,
}

/// The `.wasm` files directly inside `dir`, sorted by file name so that load order
/// (and who wins a name clash) never depends on the file system.
pub fn component_files(dir: &Path) -> Result<Vec<PathBuf>, FolderError> {
    let entries = std::fs::read_dir(dir).map_err(|source| FolderError {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "wasm") && path.is_file())
        .collect();
    files.sort();
    Ok(files)
}

/// Loads every component in `dir`. A file that fails is logged and skipped; the
/// others load. Compilation of the files runs concurrently.
pub async fn load_folder(runtime: &Runtime, dir: &Path) -> Result<Vec<Arc<Plugin>>, FolderError> {
    let files = component_files(dir)?;
    let mut claimed: Vec<(String, PathBuf)> = Vec::new();
    let mut jobs = Vec::new();
    for path in files {
        let stem = path.file_stem().unwrap_or_default().to_string_lossy();
        let name = match naming::plugin_name(&stem) {
            Ok(name) => name,
            Err(error) => {
                report(&path, &FileError::from(error));
                continue;
            }
        };
        if let Some((_, taken_by)) = claimed.iter().find(|(n, _)| *n == name) {
            let error = FileError::DuplicateName {
                name,
                taken_by: taken_by.clone(),
            };
            report(&path, &error);
            continue;
        }
        claimed.push((name.clone(), path.clone()));
        jobs.push(async move {
            let result = load_file(runtime, &name, &path).await;
            (path, result)
        });
    }

    let mut plugins = Vec::new();
    let mut seen = HashSet::new();
    for (path, result) in futures::future::join_all(jobs).await {
        match result {
            Ok(plugin) => {
                tracing::info!(
                    plugin = plugin.name(),
                    tools = plugin.tools().len(),
                    file = %path.display(),
                    "plugin loaded"
                );
                seen.insert(plugin.name().to_string());
                plugins.push(Arc::new(plugin));
            }
            Err(error) => report(&path, &error),
        }
    }
    Ok(plugins)
}

/// Loads one component with its manifest; a manifest that is present but invalid
/// keeps the plugin from loading.
pub async fn load_file(runtime: &Runtime, name: &str, path: &Path) -> Result<Plugin, FileError> {
    let manifest_path = manifest::manifest_path(path);
    let resolved = manifest::load(&manifest_path, runtime.limits(), runtime.ceilings())?;
    let bytes = tokio::fs::read(path).await?;
    let plugin = runtime
        .load_with(name, bytes, resolved.limits, resolved.grants)
        .await?;
    Ok(plugin)
}

fn report(path: &Path, error: &FileError) {
    tracing::error!(file = %path.display(), "plugin not loaded: {error}");
}
