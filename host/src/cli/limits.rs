//! The limits of one call (`--timeout-ms`, `--memory-mib`, `--fuel`,
//! `--max-output-bytes`), shared by `serve` and `call`.

use std::time::Duration;

use clap::Args;
use wharf::runtime::CallLimits;

/// The limits of one call (defaults for plugins whose manifest sets none).
#[derive(Args)]
pub struct LimitArgs {
    /// Wall-clock limit of one tool call, in milliseconds (default for plugins
    /// whose manifest sets no `timeout-ms`).
    #[arg(long, default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(1..))]
    timeout_ms: u64,

    /// Memory limit of one tool call, in MiB (default for plugins whose manifest
    /// sets no `memory-mib`).
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=4096))]
    memory_mib: u32,

    /// Fuel (about one unit per WebAssembly instruction) of one tool call; default
    /// for plugins whose manifest sets no `fuel`. Unmetered if not given.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    fuel: Option<u64>,

    /// Largest result of one tool call, in bytes (content plus structured content).
    #[arg(long, default_value_t = 4 << 20, value_parser = clap::value_parser!(u64).range(1..))]
    max_output_bytes: u64,
}

impl LimitArgs {
    /// The limits as the runtime takes them; the rest as [`CallLimits::default`].
    pub fn call_limits(&self) -> CallLimits {
        CallLimits {
            timeout: Duration::from_millis(self.timeout_ms),
            memory_bytes: (self.memory_mib as usize) << 20,
            fuel: self.fuel,
            max_output_bytes: usize::try_from(self.max_output_bytes).unwrap_or(usize::MAX),
            ..CallLimits::default()
        }
    }
}
