//! Where compiled components are kept (`--cache-dir`, `--no-cache`), shared
//! by `serve`, `inspect` and `call`.

use std::path::{Path, PathBuf};

use clap::Args;
use wharf::runtime::CompiledCache;

/// Where compiled components are kept.
#[derive(Args)]
pub struct CacheArgs {
    /// Where compiled components are kept between runs [default: the user cache
    /// directory, e.g. ~/.cache/wharf].
    #[arg(long, env = "WHARF_CACHE_DIR")]
    cache_dir: Option<PathBuf>,

    /// Compile every component at every start; keep nothing on disk (overrides
    /// `--cache-dir`).
    #[arg(long)]
    no_cache: bool,
}

impl CacheArgs {
    /// The cache's folder, or `None` for no cache.
    pub fn root(self) -> Option<PathBuf> {
        match (self.no_cache, self.cache_dir) {
            (true, _) => None,
            (false, Some(dir)) => Some(dir),
            (false, None) => CompiledCache::default_root(),
        }
    }
}

/// Makes the cache's folder if it is missing, in a process that compiles
/// into it: the runtime makes only its engines' folders inside, so that it
/// never brings back a cache removed while it runs. A folder that cannot be
/// made is reported by the runtime's first write, which then compiles in
/// memory, as for any cache it cannot write.
pub fn make_root(root: Option<&Path>) {
    if let Some(root) = root
        && let Err(error) = std::fs::create_dir_all(root)
    {
        tracing::debug!(dir = %root.display(), "the compile cache's folder was not made: {error}");
    }
}
