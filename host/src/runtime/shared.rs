//! Compiled components shared by the plugins whose files are byte for byte the
//! same.
//!
//! Each load of a component maps its compiled code and builds its type tables
//! afresh, so 500 copies of one plugin held 500 mappings of the same code and
//! 500 sets of tables (575 MiB of RSS; 69 MiB shared, docs/performance.md). A plugin's code holds its component through
//! an `Arc`; [`SharedComponents`] remembers each one weakly by the hash of its
//! bytes, so a copy loaded while another is alive gets the same component,
//! and the last plugin to drop it frees it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use wasmtime::component::Component;

use super::cache::ContentHash;

/// The live components of one engine, by the hash of their bytes.
#[derive(Default)]
pub(crate) struct SharedComponents {
    live: Mutex<HashMap<ContentHash, Weak<Component>>>,
}

impl SharedComponents {
    /// The component of `hash`, if a plugin still holds it.
    pub(crate) fn get(&self, hash: &ContentHash) -> Option<Arc<Component>> {
        self.lock().get(hash).and_then(Weak::upgrade)
    }

    /// Shares `component`, compiled from the bytes of `hash`; if another load
    /// of the same bytes got there first, its component is returned instead
    /// (and this one dropped). Entries no plugin holds are forgotten here.
    pub(crate) fn share(&self, hash: ContentHash, component: Component) -> Arc<Component> {
        let mut live = self.lock();
        if let Some(shared) = live.get(&hash).and_then(Weak::upgrade) {
            return shared;
        }
        live.retain(|_, weak| weak.strong_count() > 0);
        let shared = Arc::new(component);
        live.insert(hash, Arc::downgrade(&shared));
        shared
    }

    /// How many components are remembered (live or not yet forgotten).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ContentHash, Weak<Component>>> {
        // The map stays consistent whatever panicked while it was held.
        self.live
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use wasmtime::{Config, Engine};

    use super::*;

    const EMPTY: &str = "(component)";
    const OTHER: &str = "(component (core module))";

    fn compile(engine: &Engine, wat: &str) -> (ContentHash, Component) {
        let bytes = wat::parse_str(wat).unwrap();
        (
            ContentHash::of(&bytes),
            Component::new(engine, &bytes).unwrap(),
        )
    }

    #[test]
    fn identical_bytes_share_one_component_while_it_is_held() {
        let engine = Engine::new(&Config::new()).unwrap();
        let shared = SharedComponents::default();
        let (hash, first) = compile(&engine, EMPTY);
        let first = shared.share(hash, first);
        assert!(Arc::ptr_eq(&shared.get(&hash).unwrap(), &first));
        let (again, second) = compile(&engine, EMPTY);
        assert_eq!(again, hash);
        assert!(Arc::ptr_eq(&shared.share(again, second), &first));

        let (other_hash, other) = compile(&engine, OTHER);
        let other = shared.share(other_hash, other);
        assert!(!Arc::ptr_eq(&other, &first));
        assert_eq!(shared.len(), 2);

        drop(first);
        assert!(shared.get(&hash).is_none(), "the last holder freed it");
        let (_, third) = compile(&engine, EMPTY);
        let third = shared.share(hash, third);
        assert_eq!(Arc::strong_count(&third), 1);
        drop(other);
        drop(third);
        let (_, fourth) = compile(&engine, EMPTY);
        drop(shared.share(hash, fourth));
        assert_eq!(shared.len(), 1, "a dropped component is forgotten");
    }
}
