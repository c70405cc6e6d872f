//! Where a plugin's component bytes come from: the file itself (with its
//! signature checked under `--require-signed`), or for a `NAME.oci` reference
//! (or `--plugin NAME=oci://`) the registry, through the OCI source. Problems
//! are logged once until they change.

use std::path::Path;

use super::{FileError, PluginFolder, is_reference, signature_path};
use crate::oci::reference::Reference;

impl PluginFolder {
    /// The component bytes behind `path`: the file's own, or for a `.oci`
    /// file the registry's, verified as the policy asks. `None`: not readable
    /// yet (gone or being replaced), try again later.
    pub(super) async fn component_bytes(
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
    pub(super) fn note(&mut self, path: &Path, name: &str, error: &FileError) {
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
}
