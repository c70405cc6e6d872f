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

/// Transparent huge pages go off before `main`, ahead of the allocator's
/// first arena (`cli::no_transparent_huge_pages`). Entries of
/// `.init_array.NNNNN` run in priority order before the unnumbered ones,
/// where mimalloc's constructor is; Rust's standard library takes 99.
#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".init_array.00101")]
static BEFORE_THE_ALLOCATOR: extern "C" fn() = cli::no_transparent_huge_pages;

use clap::Parser;

fn main() -> anyhow::Result<()> {
    cli::Cli::parse().run()
}
