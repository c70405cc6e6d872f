use super::*;

#[test]
fn component_bytes_carry_the_hash_of_their_bytes() {
    let bytes = ComponentBytes::new(b"\0asm".to_vec());
    assert_eq!(bytes.hash(), ContentHash::of(b"\0asm"));
    assert_eq!(&*bytes, b"\0asm");
    assert_eq!(bytes.into_bytes(), b"\0asm");
}

#[test]
fn hashes_are_hex_sha256() {
    assert_eq!(
        ContentHash::of(b"").hex(),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
}

/// A cache under a fresh folder holding one entry, for source `source`.
fn cache_with(source: &str) -> (tempfile::TempDir, Engine, CompiledCache, ContentHash) {
    let root = tempfile::tempdir().unwrap();
    let engine = Engine::default();
    let cache = CompiledCache::new(root.path(), &engine);
    let component = Component::new(&engine, source).unwrap();
    let hash = ContentHash::of(source.as_bytes());
    assert!(cache.get(&engine, &hash).is_none());
    cache.put(&hash, &component);
    (root, engine, cache, hash)
}

/// What the checks say of the entry of `hash` as it is on disk.
fn checked(cache: &CompiledCache, engine: &Engine, hash: &ContentHash) -> Result<(), BadEntry> {
    let file = std::fs::File::open(cache.entry(hash)).unwrap();
    cache.open(engine, hash, file).map(drop)
}

/// What `get` says of the entry after `damage`, and whether the entry is gone.
fn after(
    damage: impl FnOnce(&CompiledCache, &ContentHash, &mut Vec<u8>),
) -> (Result<(), BadEntry>, bool) {
    let (_root, engine, cache, hash) = cache_with("(component)");
    let mut bytes = std::fs::read(cache.entry(&hash)).unwrap();
    damage(&cache, &hash, &mut bytes);
    std::fs::write(cache.entry(&hash), &bytes).unwrap();
    let checked = checked(&cache, &engine, &hash);
    assert_eq!(cache.get(&engine, &hash).is_some(), checked.is_ok());
    (checked, cache.entry(&hash).exists())
}

#[test]
fn round_trips() {
    let (_root, engine, cache, hash) = cache_with("(component)");
    assert!(cache.get(&engine, &hash).is_some());
    assert!(cache.entry(&hash).exists());
}

#[test]
fn every_flipped_byte_of_the_compiled_code_is_caught_before_loading() {
    let (_root, engine, cache, hash) = cache_with("(component (core module))");
    let good = std::fs::read(cache.entry(&hash)).unwrap();
    for at in (0..good.len() - CHECK_LEN).step_by(7) {
        let mut bad = good.clone();
        bad[at] ^= 0x5a;
        std::fs::write(cache.entry(&hash), &bad).unwrap();
        assert_eq!(
            checked(&cache, &engine, &hash),
            Err(BadEntry::Corrupted),
            "byte {at}"
        );
    }
}

#[test]
fn a_corrupted_entry_is_dropped() {
    let (checked, exists) = after(|_, _, bytes| {
        let at = bytes.len() - CHECK_LEN - 3;
        bytes[at] ^= 1;
    });
    assert_eq!(checked, Err(BadEntry::Corrupted));
    assert!(!exists, "a bad entry is removed");
}

#[test]
fn a_truncated_entry_is_dropped() {
    let (checked, exists) = after(|_, _, bytes| bytes.truncate(CHECK_LEN - 1));
    assert_eq!(checked, Err(BadEntry::Truncated(CHECK_LEN - 1)));
    assert!(!exists);
    // Compiled bytes lost before an intact check.
    let (checked, _) = after(|_, _, bytes| {
        bytes.drain(..10);
    });
    assert_eq!(checked, Err(BadEntry::Corrupted));
}

#[test]
fn garbage_and_entries_of_an_older_layout_are_dropped() {
    let (checked, exists) = after(|_, _, bytes| {
        *bytes = b"not an artifact at all, but longer than a header. ".repeat(4)
    });
    assert_eq!(checked, Err(BadEntry::Foreign));
    assert!(!exists);
    // The layouts before this one: wasmtime's serialized bytes alone, or
    // with the check in front.
    let (checked, _) = after(|_, _, bytes| {
        bytes.truncate(bytes.len() - CHECK_LEN);
    });
    assert_eq!(checked, Err(BadEntry::Foreign));
    let (checked, _) = after(|_, _, bytes| {
        let check = bytes.split_off(bytes.len() - CHECK_LEN);
        bytes.splice(0..0, check);
    });
    assert_eq!(checked, Err(BadEntry::Foreign));
    // The layout before the CRC (a SHA-256 of the compiled bytes), whose
    // magic ended in 3.
    let (checked, _) = after(|_, _, bytes| {
        let at = bytes.len() - CHECK_LEN + MAGIC.len() - 1;
        bytes[at] = 3;
    });
    assert_eq!(checked, Err(BadEntry::Foreign));
}

#[test]
fn an_entry_of_another_component_is_not_served_for_this_one() {
    let (_root, engine, cache, echo) = cache_with("(component)");
    let calc = ContentHash::of(b"(component (core module))");
    cache.put(
        &calc,
        &Component::new(&engine, "(component (core module))").unwrap(),
    );
    // Swap the two files: each now holds the other's code.
    let (echo_path, calc_path) = (cache.entry(&echo), cache.entry(&calc));
    let (a, b) = (
        std::fs::read(&echo_path).unwrap(),
        std::fs::read(&calc_path).unwrap(),
    );
    std::fs::write(&echo_path, &b).unwrap();
    std::fs::write(&calc_path, &a).unwrap();
    assert_eq!(checked(&cache, &engine, &echo), Err(BadEntry::OtherSource));
    assert!(cache.get(&engine, &echo).is_none());
    assert!(cache.get(&engine, &calc).is_none());
    assert!(!echo_path.exists() && !calc_path.exists());
}

#[test]
fn an_entry_of_another_engine_is_not_loaded() {
    let (checked, exists) = after(|_, _, bytes| {
        let at = bytes.len() - CHECK_LEN + MAGIC.len() + 32;
        bytes[at] ^= 0xff;
    });
    assert_eq!(checked, Err(BadEntry::OtherEngine));
    assert!(!exists);
}

#[test]
fn an_unwritable_cache_is_reported_once_until_it_works_again() {
    let root = tempfile::tempdir().unwrap();
    let engine = Engine::default();
    let cache = CompiledCache::new(root.path(), &engine);
    let component = Component::new(&engine, "(component)").unwrap();
    let hash = ContentHash::of(b"(component)");
    let reported = || UNWRITABLE.lock().unwrap().contains(root.path());
    // Where the cache's folder should be, a file: nothing can be written.
    std::fs::write(&cache.dir, b"in the way").unwrap();
    cache.put(&hash, &component);
    assert!(reported());
    cache.put(&hash, &component);
    assert!(cache.get(&engine, &hash).is_none());
    std::fs::remove_file(&cache.dir).unwrap();
    cache.put(&hash, &component);
    assert!(!reported(), "a write that works again ends the report");
    assert!(cache.get(&engine, &hash).is_some());
}

#[test]
fn a_removed_cache_is_not_made_again() {
    let (root, engine, cache, hash) = cache_with("(component)");
    let gone = root.path().to_path_buf();
    root.close().unwrap();
    let component = Component::new(&engine, "(component)").unwrap();
    cache.put(&hash, &component);
    assert!(!gone.exists(), "a write brought the removed cache back");
    assert!(UNWRITABLE.lock().unwrap().contains(&gone));
}

#[test]
fn an_unreadable_entry_is_a_miss() {
    let (_root, engine, cache, hash) = cache_with("(component)");
    std::fs::remove_file(cache.entry(&hash)).unwrap();
    std::fs::create_dir(cache.entry(&hash)).unwrap();
    assert!(cache.get(&engine, &hash).is_none());
}
