//! Where compiled components are kept (`--cache-dir`, `--no-cache`), shared
//! by `serve`, `inspect` and `call`.

use std::path::PathBuf;

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
