//! The plugin manifest parser and resolver, on arbitrary TOML text.
//! Invariants: no panic; a refusal names the manifest's path; resolving never
//! grants a limit above its ceiling.
#![no_main]
use std::path::Path;

use libfuzzer_sys::fuzz_target;
use wharf::fuzzing::{CallLimits, Ceilings, parse_manifest, resolve_manifest};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("/nonexistent/plugins/p.toml");
    let manifest = match parse_manifest(path, text) {
        Ok(manifest) => manifest,
        Err(error) => {
            assert!(error.to_string().contains("p.toml"), "{error}");
            return;
        }
    };
    let ceilings = Ceilings::default();
    // The folder does not exist, so no directory grant can resolve.
    if let Ok(resolved) = resolve_manifest(
        &manifest,
        Path::new("/nonexistent/plugins"),
        &CallLimits::default(),
        &ceilings,
        |name| (name == "SET").then(|| "value".to_string()),
    ) {
        assert!(resolved.limits.memory_bytes <= ceilings.memory_bytes);
        assert!(resolved.limits.timeout <= ceilings.timeout);
        assert!(resolved.grants.dirs.is_empty());
    }
});
