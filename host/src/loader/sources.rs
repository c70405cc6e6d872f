//! Where a plugin's component bytes come from: the file itself (with its
//! signature checked under `--require-signed`), or for a `NAME.oci` reference
//! (or `--plugin NAME=oci://`) the registry, through the OCI source. Problems
//! are logged once until they change.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::{FileError, PluginFolder, is_reference, signature_path};
use crate::oci::reference::Reference;
use crate::oci::signature::TrustPolicy;
use crate::runtime::ComponentBytes;

/// What reading a plugin's file found.
pub(super) enum Found {
    /// A component, hashed, its signature checked if the policy asks.
    Component(ComponentBytes),
    /// A reference to pull from the registry: a `--plugin` one (its file is
    /// not read) or what a `.oci` file holds.
    Reference(Reference),
    /// Gone or unreadable between listing and reading: try again later.
    NotYet,
}

/// Reads the files of `pending` (`None`: a `--plugin` reference, nothing to
/// read), several at once. On a first start every component in the folder
/// is read and hashed (SHA-256) before any loads: for 1,000 small plugins,
/// 270 MB and half a second of one core.
pub(super) fn read_all(
    pending: &[(&Path, Option<&Reference>)],
    trust: Option<&TrustPolicy>,
) -> Vec<Result<Found, FileError>> {
    let read = |(path, given): &(&Path, Option<&Reference>)| match given {
        Some(reference) => Ok(Found::Reference((*reference).clone())),
        None => read_file(path, trust),
    };
    let threads = crate::cores::cores().min(pending.len());
    if threads <= 1 {
        return pending.iter().map(read).collect();
    }
    let next = AtomicUsize::new(0);
    let mut found: Vec<(usize, Result<Found, FileError>)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let at = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = pending.get(at) else {
                            return mine;
                        };
                        mine.push((at, read(item)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| {
                worker
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    found.sort_unstable_by_key(|(at, _)| *at);
    found.into_iter().map(|(_, found)| found).collect()
}

/// The component behind the plugin file `path`, its signature checked
/// against `trust` if given, or the reference a `.oci` file holds.
fn read_file(path: &Path, trust: Option<&TrustPolicy>) -> Result<Found, FileError> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) => {
            tracing::debug!(file = %path.display(), "cannot read yet: {error}");
            return Ok(Found::NotYet);
        }
    };
    if is_reference(path) {
        return Ok(Found::Reference(Reference::parse(
            String::from_utf8_lossy(&bytes).trim(),
        )?));
    }
    if let Some(policy) = trust {
        let signature = signature_path(path);
        let text = std::fs::read_to_string(&signature).map_err(|error| {
            FileError::Unsigned(format!("no signature at {}: {error}", signature.display()))
        })?;
        policy
            .verify_blob(&bytes, &text)
            .map_err(|reason| FileError::Unsigned(format!("{}: {reason}", signature.display())))?;
    }
    Ok(Found::Component(ComponentBytes::new(bytes)))
}

impl PluginFolder {
    /// The component bytes `found` for `path`: its file's own, or for a
    /// reference the registry's, verified as the policy asks. `None`: not
    /// readable yet (gone or being replaced), try again later.
    pub(super) async fn component_bytes(
        &mut self,
        path: &Path,
        found: Found,
    ) -> Result<Option<ComponentBytes>, FileError> {
        match found {
            Found::Component(bytes) => {
                self.noted.remove(path);
                Ok(Some(bytes))
            }
            Found::Reference(reference) => {
                let bytes = self.pull(path, &reference).await?;
                Ok(Some(ComponentBytes::new(bytes)))
            }
            Found::NotYet => Ok(None),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// What a file read as `found` says, in words a test can compare.
    fn said(found: Result<Found, FileError>) -> String {
        match found {
            Ok(Found::Component(bytes)) => {
                format!("component {}", String::from_utf8_lossy(&bytes))
            }
            Ok(Found::Reference(reference)) => format!("reference {reference}"),
            Ok(Found::NotYet) => "not yet".to_string(),
            Err(error) => format!("error: {error}"),
        }
    }

    #[test]
    fn many_files_read_at_once_each_get_their_own_answer_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut paths = Vec::new();
        let mut expected = Vec::new();
        for i in 0..40 {
            let (path, says) = match i % 4 {
                0 => {
                    let path = dir.path().join(format!("c{i}.wasm"));
                    std::fs::write(&path, format!("bytes {i}")).unwrap();
                    (path, format!("component bytes {i}"))
                }
                1 => {
                    let path = dir.path().join(format!("r{i}.oci"));
                    std::fs::write(&path, format!("oci://h:1/r{i}:v1\n")).unwrap();
                    (path, format!("reference oci://h:1/r{i}:v1"))
                }
                2 => (
                    dir.path().join(format!("gone{i}.wasm")),
                    "not yet".to_string(),
                ),
                _ => {
                    let path = dir.path().join(format!("bad{i}.oci"));
                    std::fs::write(&path, "ftp://h/x").unwrap();
                    let error = Reference::parse("ftp://h/x").unwrap_err();
                    (path, format!("error: {error}"))
                }
            };
            paths.push(path);
            expected.push(says);
        }
        let given = Reference::parse("oci://h:1/given:v2").unwrap();
        let mut pending: Vec<(&Path, Option<&Reference>)> =
            paths.iter().map(|path| (path.as_path(), None)).collect();
        pending.insert(7, (Path::new("given"), Some(&given)));
        expected.insert(7, "reference oci://h:1/given:v2".to_string());

        let found: Vec<String> = read_all(&pending, None).into_iter().map(said).collect();
        assert_eq!(found, expected);
    }

    #[test]
    fn a_component_carries_the_hash_of_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.wasm");
        std::fs::write(&path, b"\0asm").unwrap();
        let Ok(Found::Component(bytes)) = read_file(&path, None) else {
            panic!("not read as a component");
        };
        assert_eq!(bytes.hash(), crate::runtime::ContentHash::of(b"\0asm"));
    }
}
