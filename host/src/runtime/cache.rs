//! Compiled components on disk, so a restart or a re-added file skips compilation.
//!
//! Entries are keyed by the SHA-256 of the component's bytes and live in a folder
//! named after the engine's compatibility hash (wasmtime version, target and the
//! settings that affect code), so an engine never sees artifacts it cannot run.
//! Writes go to a temporary file that is renamed into place, so a reader never sees
//! half an artifact and concurrent Wharf processes can share the folder.
//!
//! Loading compiled code trusts its bytes: wasmtime maps them and jumps into
//! them, so a flipped bit can crash the process rather than fail a check. Each
//! entry therefore ends with a check that names the source it was compiled
//! from, the engine that compiled it and the CRC-32 of the compiled bytes
//! before it; [`CompiledCache::get`] checks all three before wasmtime maps
//! the file, and removes an entry that fails (with a log line), so it is
//! compiled afresh. The check comes last so that wasmtime can map the file as
//! it is (its parser ignores what follows its object) instead of copying it.
//!
//! The compiled bytes' checksum guards against accidents (a torn write, a bad
//! sector, a flipped bit), not against someone who can write the folder (who
//! could write a matching checksum too), so it is a CRC rather than a
//! cryptographic digest: it is read at every start, over tens of MiB for a
//! JavaScript or Python component, and SHA-256 took a tenth of a small
//! server's start-up CPU.

use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};
use std::io::{Read, Seek, SeekFrom, Write};
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

    /// The hash in lower-case hexadecimal (the name of its cache entry, and
    /// the plugin digest in audit lines and trace attributes).
    pub fn hex(&self) -> String {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut hex = String::with_capacity(self.0.len() * 2);
        for byte in self.0 {
            hex.push(char::from(DIGITS[usize::from(byte >> 4)]));
            hex.push(char::from(DIGITS[usize::from(byte & 0xf)]));
        }
        hex
    }
}

/// A component's bytes with their [`ContentHash`], hashed once where they
/// are read: the folder's scan needs the hash to tell a changed file, and
/// loading needs it for the compile cache. SHA-256 of a 270 KB component
/// is about 0.15 ms, a tenth of a 1,000-plugin start when done twice.
#[derive(Debug, Clone)]
pub struct ComponentBytes {
    bytes: Vec<u8>,
    hash: ContentHash,
}

impl ComponentBytes {
    /// Hashes `bytes`.
    pub fn new(bytes: Vec<u8>) -> Self {
        let hash = ContentHash::of(&bytes);
        Self { bytes, hash }
    }

    /// The bytes' content hash.
    pub fn hash(&self) -> ContentHash {
        self.hash
    }

    /// The bytes, the hash dropped.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

impl From<Vec<u8>> for ComponentBytes {
    fn from(bytes: Vec<u8>) -> Self {
        Self::new(bytes)
    }
}

impl std::ops::Deref for ComponentBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.bytes
    }
}

/// The first bytes of every entry's check; a new layout gets a new value, so
/// entries of another layout are dropped like any other bad entry.
const MAGIC: &[u8; 8] = b"wharf\0c\x04";

/// An entry's check, its last bytes: [`MAGIC`], the source's SHA-256, the
/// engine's compatibility hash (little-endian), and the CRC-32 (IEEE,
/// little-endian) of the compiled bytes before it.
const CHECK_LEN: usize = MAGIC.len() + 32 + 8 + 4;

/// Why a cache entry was not used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum BadEntry {
    #[error("shorter than its check ({0} bytes)")]
    Truncated(usize),
    #[error("not a Wharf compile-cache entry of this version")]
    Foreign,
    #[error("compiled from other source bytes")]
    OtherSource,
    #[error("compiled by an engine with other settings")]
    OtherEngine,
    #[error("its compiled bytes do not match their checksum (corrupted)")]
    Corrupted,
    #[error("it cannot be read: {0}")]
    Unreadable(String),
    #[error("wasmtime refused it: {0}")]
    Refused(String),
}

/// Cache roots a write failed in, so a read-only or full cache is reported
/// once per process, not at every compile of every engine that shares it.
static UNWRITABLE: std::sync::Mutex<BTreeSet<PathBuf>> = std::sync::Mutex::new(BTreeSet::new());

/// A folder of precompiled components for one engine configuration.
#[derive(Debug, Clone)]
pub struct CompiledCache {
    dir: PathBuf,
    /// The engine's compatibility hash, recorded in and checked against every entry.
    engine: u64,
}

impl CompiledCache {
    /// The cache for `engine` under the folder `root`, which must exist by
    /// the first write (the engine's folder inside is made then).
    pub fn new(root: &Path, engine: &Engine) -> Self {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        let engine = hasher.finish();
        Self {
            dir: root.join(format!("engine-{engine:016x}-v4")),
            engine,
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
    /// An entry that fails its checks or does not load (truncated, corrupted, written
    /// for other source bytes or another build) is removed, with a log line.
    pub fn get(&self, engine: &Engine, hash: &ContentHash) -> Option<Component> {
        let path = self.entry(hash);
        let file = match std::fs::File::open(&path) {
            Ok(file) => file,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return None,
            Err(error) => {
                tracing::warn!(path = %path.display(), "could not read a compile-cache entry: {error}");
                return None;
            }
        };
        match self.open(engine, hash, file) {
            Ok(component) => Some(component),
            Err(bad) => {
                tracing::warn!(path = %path.display(), "dropping a bad compile-cache entry: {bad}");
                if let Err(error) = std::fs::remove_file(&path)
                    && error.kind() != std::io::ErrorKind::NotFound
                {
                    tracing::warn!(path = %path.display(), "could not remove it: {error}");
                }
                None
            }
        }
    }

    /// Checks the entry of `hash` (open as `file`) against its check, then
    /// has wasmtime map it.
    fn open(
        &self,
        engine: &Engine,
        hash: &ContentHash,
        file: std::fs::File,
    ) -> Result<Component, BadEntry> {
        self.verify(hash, file)
            .map_err(|e| BadEntry::Unreadable(e.to_string()))??;
        // SAFETY: the file holds, checksum for checksum, what `put` wrote from
        // `Component::serialize` for the source `hash` and an engine with this
        // compatibility hash (wasmtime checks its own header and version too);
        // a corrupted or swapped entry fails `verify` and never gets here.
        // Entries are only replaced whole, by rename, with a compile of the
        // same source by the same engine.
        unsafe { Component::deserialize_file(engine, self.entry(hash)) }
            .map_err(|e| BadEntry::Refused(format!("{e:#}")))
    }

    /// Whether an entry's check is of this layout, for the source `hash` and
    /// this engine, and its compiled bytes match the check's checksum. Reads
    /// the bytes in pieces: entries of JavaScript and Python components are
    /// tens of MiB.
    fn verify(
        &self,
        hash: &ContentHash,
        mut file: std::fs::File,
    ) -> std::io::Result<Result<(), BadEntry>> {
        let len = file.metadata()?.len();
        let Some(compiled_len) = len.checked_sub(CHECK_LEN as u64) else {
            return Ok(Err(BadEntry::Truncated(len as usize)));
        };
        let mut check = [0u8; CHECK_LEN];
        file.seek(SeekFrom::Start(compiled_len))?;
        file.read_exact(&mut check)?;
        let (magic, rest) = check.split_at(MAGIC.len());
        let (source, rest) = rest.split_at(32);
        let (engine, checksum) = rest.split_at(8);
        if magic != MAGIC {
            return Ok(Err(BadEntry::Foreign));
        }
        if source != hash.0 {
            return Ok(Err(BadEntry::OtherSource));
        }
        if engine != self.engine.to_le_bytes() {
            return Ok(Err(BadEntry::OtherEngine));
        }
        file.seek(SeekFrom::Start(0))?;
        if checksum_of(file.take(compiled_len))?.to_le_bytes() != checksum {
            return Ok(Err(BadEntry::Corrupted));
        }
        Ok(Ok(()))
    }

    /// Stores a compiled component. Failing to write (a read-only or full disk)
    /// only costs a later recompile, so errors are logged, not returned: once
    /// when the cache stops taking entries, once when it takes them again.
    pub fn put(&self, hash: &ContentHash, component: &Component) {
        let result = self.try_put(hash, component);
        let root = self.dir.parent().unwrap_or(&self.dir);
        let mut unwritable = UNWRITABLE.lock().unwrap_or_else(|e| e.into_inner());
        match result {
            Ok(()) => {
                if unwritable.remove(root) {
                    tracing::info!(dir = %root.display(), "the compile cache takes entries again");
                }
            }
            Err(error) if unwritable.insert(root.to_path_buf()) => tracing::warn!(
                dir = %root.display(),
                "the compile cache is not writable ({error}); compiling in memory, and not saying so again until it is"
            ),
            Err(error) => {
                tracing::debug!(dir = %root.display(), "the compile cache is still not writable: {error}")
            }
        }
    }

    /// Forgets the component with `hash` (a quick compile, once the optimised
    /// one is cached).
    pub fn remove(&self, hash: &ContentHash) {
        let _ = std::fs::remove_file(self.entry(hash));
    }

    fn try_put(&self, hash: &ContentHash, component: &Component) -> Result<(), String> {
        let compiled = component.serialize().map_err(|e| format!("{e:#}"))?;
        // The engine's folder only: a cache removed under a running process
        // stays removed (see `RuntimeOptions::cache_root`).
        match std::fs::create_dir(&self.dir) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(error) => return Err(error.to_string()),
        }
        let mut temp = tempfile::NamedTempFile::new_in(&self.dir).map_err(|e| e.to_string())?;
        temp.write_all(&compiled)
            .and_then(|()| temp.write_all(&self.check(hash, &compiled)))
            .map_err(|e| e.to_string())?;
        temp.persist(self.entry(hash)).map_err(|e| e.to_string())?;
        Ok(())
    }

    /// The check that ends the entry of `compiled`, the compile of `hash`.
    fn check(&self, hash: &ContentHash, compiled: &[u8]) -> Vec<u8> {
        let mut check = Vec::with_capacity(CHECK_LEN);
        check.extend_from_slice(MAGIC);
        check.extend_from_slice(&hash.0);
        check.extend_from_slice(&self.engine.to_le_bytes());
        check.extend_from_slice(&crc32fast::hash(compiled).to_le_bytes());
        check
    }
}

/// The CRC-32 of what `reader` holds, read in pieces.
fn checksum_of(mut reader: impl Read) -> std::io::Result<u32> {
    let mut hasher = crc32fast::Hasher::new();
    let mut piece = vec![0u8; 256 << 10];
    loop {
        match reader.read(&mut piece) {
            Ok(0) => return Ok(hasher.finalize()),
            Ok(read) => hasher.update(&piece[..read]),
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
}

#[cfg(test)]
mod tests;
