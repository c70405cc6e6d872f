//! Compiled functions kept in memory, so a changed component recompiles only
//! the functions that changed.
//!
//! A plugin under development is rebuilt and dropped into the folder again and
//! again, and between two builds most function bodies (the standard library,
//! serde, the SDK) are the same. Cranelift's incremental cache keys each function
//! by a hash of its IR and the compiler settings, so those come from here instead
//! of being compiled again; a changed function has a new key. The on-disk
//! [`CompiledCache`](super::cache::CompiledCache) covers identical bytes; this
//! covers the near-identical ones.
//!
//! Bounded: once the entries pass [`FunctionCache::capacity`] bytes, the store is
//! emptied and refills with what is compiled next, so a long-running server that
//! reloads many different plugins keeps the recent ones.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Mutex;

use wasmtime::CacheStore;

/// The in-memory store behind Cranelift's incremental compilation cache.
#[derive(Debug)]
pub(crate) struct FunctionCache {
    capacity: usize,
    entries: Mutex<Entries>,
}

#[derive(Debug, Default)]
struct Entries {
    by_key: HashMap<Vec<u8>, Vec<u8>>,
    bytes: usize,
}

impl FunctionCache {
    /// An empty store that holds at most about `capacity` bytes.
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            capacity,
            entries: Mutex::default(),
        }
    }

    /// The most it holds before it starts over.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// How many bytes of keys and compiled functions it holds now.
    pub(crate) fn bytes(&self) -> usize {
        self.entries.lock().map(|e| e.bytes).unwrap_or(0)
    }
}

impl CacheStore for FunctionCache {
    fn get(&self, key: &[u8]) -> Option<Cow<'_, [u8]>> {
        let entries = self.entries.lock().ok()?;
        entries
            .by_key
            .get(key)
            .map(|value| Cow::Owned(value.clone()))
    }

    fn insert(&self, key: &[u8], value: Vec<u8>) -> bool {
        let Ok(mut entries) = self.entries.lock() else {
            return false;
        };
        let size = key.len() + value.len();
        if size > self.capacity {
            return false;
        }
        if entries.bytes + size > self.capacity {
            tracing::debug!(
                bytes = entries.bytes,
                "the compiled-function cache is full; starting it over"
            );
            *entries = Entries::default();
        }
        if let Some(old) = entries.by_key.insert(key.to_vec(), value) {
            entries.bytes -= key.len() + old.len();
        }
        entries.bytes += size;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_come_back_and_the_size_is_counted() {
        let cache = FunctionCache::new(100);
        assert!(cache.insert(b"k1", vec![1; 10]));
        assert_eq!(cache.get(b"k1").as_deref(), Some(&[1u8; 10][..]));
        assert_eq!(cache.get(b"k2"), None);
        assert_eq!(cache.bytes(), 12);
        // Replacing an entry counts only the new value.
        assert!(cache.insert(b"k1", vec![2; 20]));
        assert_eq!(cache.bytes(), 22);
    }

    #[test]
    fn a_full_cache_starts_over_and_oversized_entries_are_refused() {
        let cache = FunctionCache::new(50);
        assert!(cache.insert(b"a", vec![0; 30]));
        assert!(cache.insert(b"b", vec![0; 30]));
        assert_eq!(cache.get(b"a"), None, "emptied to make room");
        assert!(cache.get(b"b").is_some());
        assert_eq!(cache.bytes(), 31);
        assert!(!cache.insert(b"c", vec![0; 60]));
        assert!(cache.get(b"b").is_some(), "a refused entry evicts nothing");
    }
}
