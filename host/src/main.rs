//! The `wharf` command line: sets the allocator, parses the arguments and
//! hands them to [`cli`], which holds every subcommand.

/// mimalloc rather than glibc's malloc: a call allocates and frees many small
/// buffers on whichever worker thread runs it, and glibc's per-arena locks and
/// consolidation showed as a fifth of the CPU of a loaded HTTP server. It costs
/// idle memory (docs/performance.md: `MIMALLOC_ARENA_EAGER_COMMIT=0
/// MIMALLOC_PURGE_DELAY=0` trades it back).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod cli;

use clap::Parser;

fn main() -> anyhow::Result<()> {
    cli::Cli::parse().run()
}
