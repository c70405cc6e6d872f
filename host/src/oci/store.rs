//! The content-addressed store of pulled manifests and blobs: one file per
//! digest under `CACHE/oci/sha256/`, written atomically and checked against
//! its name when read, so a damaged entry is refetched, never loaded.

use std::path::{Path, PathBuf};

use super::reference::Digest;

/// Blobs by digest, in the cache folder.
#[derive(Debug, Clone)]
pub struct BlobStore {
    dir: PathBuf,
}

impl BlobStore {
    /// The store under `cache_root` (`--cache-dir`).
    pub fn new(cache_root: &Path) -> Self {
        Self {
            dir: cache_root.join("oci").join("sha256"),
        }
    }

    fn path(&self, digest: &Digest) -> PathBuf {
        self.dir.join(digest.hex())
    }

    /// The bytes of `digest`, if stored and intact (a damaged entry is removed).
    pub fn get(&self, digest: &Digest) -> Option<Vec<u8>> {
        let path = self.path(digest);
        let bytes = std::fs::read(&path).ok()?;
        if Digest::of(&bytes) == *digest {
            return Some(bytes);
        }
        tracing::warn!(file = %path.display(), "a stored OCI blob does not match its digest; removed, it will be pulled again");
        let _ = std::fs::remove_file(&path);
        None
    }

    /// Stores `bytes` (whose digest the caller checked). A failure to write
    /// only costs a pull next time, so it is logged, not returned.
    pub fn put(&self, digest: &Digest, bytes: &[u8]) {
        let write = || -> std::io::Result<()> {
            std::fs::create_dir_all(&self.dir)?;
            let mut file = tempfile::NamedTempFile::new_in(&self.dir)?;
            std::io::Write::write_all(&mut file, bytes)?;
            file.persist(self.path(digest))?;
            Ok(())
        };
        if let Err(error) = write() {
            tracing::warn!(dir = %self.dir.display(), "cannot store a pulled OCI blob: {error}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blob_comes_back_and_a_damaged_one_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let store = BlobStore::new(dir.path());
        let digest = Digest::of(b"component");
        assert_eq!(store.get(&digest), None);
        store.put(&digest, b"component");
        assert_eq!(store.get(&digest).as_deref(), Some(&b"component"[..]));
        let path = dir.path().join("oci/sha256").join(digest.hex());
        std::fs::write(&path, b"componenT").unwrap();
        assert_eq!(store.get(&digest), None);
        assert!(!path.exists());
    }
}
