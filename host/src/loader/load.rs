//! One plugin file loaded: its manifest resolved, its component compiled or
//! taken from the cache, and the manifest checked against the tools it has.

use super::*;

/// Loads one component with its manifest (`manifest`: the bytes read from
/// `manifest_path`, if there is one); a manifest that is present but invalid
/// keeps the plugin from loading.
pub(super) async fn load_file(
    runtime: &Runtime,
    name: &str,
    manifest_path: &Path,
    manifest: Option<&[u8]>,
    bytes: ComponentBytes,
) -> Result<LoadedFile, FileError> {
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
    if let Some((key, tool)) = resolved
        .tasks
        .named_tools()
        .find(|(_, named)| !plugin.tools().iter().any(|spec| spec.name == *named))
    {
        return Err(FileError::UnknownTaskTool {
            path: manifest_path.to_path_buf(),
            key,
            tool: tool.to_owned(),
        });
    }
    Ok(LoadedFile {
        plugin,
        naming,
        scopes: resolved.scopes,
        secret_fields: resolved.secret_fields,
        tasks: resolved.tasks,
    })
}

/// A plugin file loaded, with what its manifest says.
pub(super) struct LoadedFile {
    pub(super) plugin: Plugin,
    pub(super) naming: Naming,
    pub(super) scopes: Scopes,
    pub(super) secret_fields: Vec<String>,
    pub(super) tasks: TaskPolicy,
}

/// When the regular file at `path` (symlinks followed) was last modified;
/// `None` if nothing is there any more. A directory, a device or a pipe
/// (reading it could block for ever), a dangling symlink or a symlink loop is
/// an error.
pub(super) fn regular_file(path: &Path) -> Result<Option<SystemTime>, FileError> {
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
pub(super) fn manifest_settled(settled: &dyn Settled, path: &Path) -> bool {
    match std::fs::metadata(path).and_then(|m| m.modified()) {
        Ok(modified) => settled.settled(path, modified),
        // None (the plugin loads without one), or an error reading it reports.
        Err(_) => true,
    }
}
