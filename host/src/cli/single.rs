//! The runtime of the subcommands that load one component and leave
//! (`inspect`, `call`).

use std::path::PathBuf;

use wharf::runtime::{CallLimits, Runtime, RuntimeOptions};

/// A runtime for one component: no instance pool (one call needs none).
pub fn single_runtime(limits: CallLimits, cache_root: Option<PathBuf>) -> anyhow::Result<Runtime> {
    super::cache::make_root(cache_root.as_deref());
    Ok(Runtime::with_options(RuntimeOptions {
        defaults: limits,
        max_concurrent_calls: 1,
        pooling: false,
        cache_root,
        // The process ends after its call: a next instance would be waste.
        spares: 0,
        ..RuntimeOptions::default()
    })?)
}
