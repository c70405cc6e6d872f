//! Compiled components on disk, so a restart or a re-added file skips compilation.
//!
//! Entries are keyed by the SHA-256 of the component's bytes and live in a folder
//! named after the engine's compatibility hash (wasmtime version, target and the
//! settings that affect code), so an engine never sees artifacts it cannot run.
//! Writes go to a temporary file that is renamed into place, so a reader never sees
//! half an artifact and concurrent Wharf processes can share the folder.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

/// The content hash that identifies a component.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ContentHash([u8; 32]);

impl ContentHash {
    /// Hashes component bytes.
    pub fn of(bytes: &[u8]) -> Self {
        Self(Sha256::digest(bytes).into())
    }

    fn hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// A folder of precompiled components for one engine configuration.
#[derive(Debug, Clone)]
pub struct CompiledCache {
    dir: PathBuf,
}

impl CompiledCache {
    /// The cache for `engine` under `root` (created on first write).
    pub fn new(root: &Path, engine: &Engine) -> Self {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        Self {
            dir: root.join(format!("engine-{:016x}", hasher.finish())),
        }
    }

    /// The default location: `$XDG_CACHE_HOME/wharf` (or the platform's equivalent).
    pub fn default_root() -> Option<PathBuf> {
        dirs::cache_dir().map(|dir| dir.join("wharf"))
    }

    fn entry(&self, hash: &ContentHash) -> PathBuf {
        self.dir.join(format!("{}.cwasm", hash.hex()))
    }

    /// The cached compilation of the component with `hash`, if there is a usable one.
    /// An entry that fails to load (truncated, from another build) is removed.
    pub fn get(&self, engine: &Engine, hash: &ContentHash) -> Option<Component> {
        let path = self.entry(hash);
        if !path.is_file() {
            return None;
        }
        // SAFETY: the file was written by `put` from `Component::serialize` for an
        // engine with the same compatibility hash; wasmtime still checks its header
        // and version. The cache folder is trusted like the binary itself.
        match unsafe { Component::deserialize_file(engine, &path) } {
            Ok(component) => Some(component),
            Err(error) => {
                tracing::warn!(path = %path.display(), "dropping an unusable cache entry: {error:#}");
                let _ = std::fs::remove_file(&path);
                None
            }
        }
    }

    /// Stores a compiled component. Failing to write only costs a later recompile,
    /// so errors are logged, not returned.
    pub fn put(&self, hash: &ContentHash, component: &Component) {
        if let Err(error) = self.try_put(hash, component) {
            tracing::warn!(dir = %self.dir.display(), "could not write the compile cache: {error}");
        }
    }

    /// Forgets the component with `hash` (a quick compile, once the optimised
    /// one is cached).
    pub fn remove(&self, hash: &ContentHash) {
        let _ = std::fs::remove_file(self.entry(hash));
    }

    fn try_put(&self, hash: &ContentHash, component: &Component) -> Result<(), String> {
        let bytes = component.serialize().map_err(|e| format!("{e:#}"))?;
        std::fs::create_dir_all(&self.dir).map_err(|e| e.to_string())?;
        let mut temp = tempfile::NamedTempFile::new_in(&self.dir).map_err(|e| e.to_string())?;
        temp.write_all(&bytes).map_err(|e| e.to_string())?;
        temp.persist(self.entry(hash)).map_err(|e| e.to_string())?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_hex_sha256() {
        assert_eq!(
            ContentHash::of(b"").hex(),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn round_trips_and_drops_garbage() {
        let root = tempfile::tempdir().unwrap();
        let engine = Engine::default();
        let cache = CompiledCache::new(root.path(), &engine);
        let component = Component::new(&engine, "(component)").unwrap();
        let hash = ContentHash::of(b"(component)");
        assert!(cache.get(&engine, &hash).is_none());
        cache.put(&hash, &component);
        assert!(cache.get(&engine, &hash).is_some());

        std::fs::write(cache.entry(&hash), b"not an artifact").unwrap();
        assert!(cache.get(&engine, &hash).is_none());
        assert!(!cache.entry(&hash).exists(), "a bad entry is removed");
    }
}
