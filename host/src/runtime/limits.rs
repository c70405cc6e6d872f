//! Limits applied to every plugin call, and the runtime-wide settings that bound them.

use std::path::PathBuf;
use std::time::Duration;

use super::placement::Placement;

/// How much a single call may use before it is stopped.
///
/// Every call gets a fresh instance with these limits; exceeding one ends that
/// call with an error that names the limit, never the server. The command line
/// gives the defaults; a plugin's manifest may set its own values (see
/// [`Ceilings`] for how far).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallLimits {
    /// Wall-clock time from instantiation to the call's return.
    pub timeout: Duration,
    /// Linear memory, in bytes, across all memories of the instance.
    pub memory_bytes: usize,
    /// Bytes of stdout and stderr kept from one call (the rest is dropped).
    pub captured_output_bytes: usize,
    /// WebAssembly fuel one call may burn (roughly one unit per instruction);
    /// `None` means unmetered. A deterministic complement to the timeout.
    pub fuel: Option<u64>,
    /// Largest result one call may return: the bytes of all its content items
    /// plus its structured content as JSON text.
    pub max_output_bytes: usize,
    /// Calls of this plugin that may run at the same time; one more is refused.
    pub max_concurrent_calls: usize,
}

impl Default for CallLimits {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(30),
            memory_bytes: 256 << 20,
            captured_output_bytes: 64 << 10,
            fuel: None,
            max_output_bytes: 4 << 20,
            max_concurrent_calls: 8,
        }
    }
}

impl CallLimits {
    /// The memory limit in whole MiB, for messages.
    pub fn memory_mib(&self) -> usize {
        self.memory_bytes >> 20
    }
}

/// The most any plugin may ask for in its manifest; set by whoever runs Wharf.
///
/// A manifest that asks for more is refused (the plugin is not loaded), rather
/// than silently clamped, so the plugin author learns why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ceilings {
    /// Largest per-call memory limit; also the size of each pooled memory slot.
    pub memory_bytes: usize,
    /// Longest per-call time limit.
    pub timeout: Duration,
}

impl Default for Ceilings {
    fn default() -> Self {
        Self {
            memory_bytes: 4096 << 20,
            timeout: Duration::from_secs(600),
        }
    }
}

/// How the runtime is set up: default limits, ceilings, and the process-wide
/// concurrency that sizes the instance pool.
#[derive(Debug, Clone)]
pub struct RuntimeOptions {
    /// Limits of a plugin whose manifest does not set them.
    pub defaults: CallLimits,
    /// The most a manifest may ask for.
    pub ceilings: Ceilings,
    /// Calls (of all plugins together) that may run at once; one more is refused.
    /// Instance pools are sized from it.
    pub max_concurrent_calls: usize,
    /// Use wasmtime's pooling allocator (falls back to on-demand allocation with a
    /// warning when the pool cannot be reserved).
    pub pooling: bool,
    /// Where compiled components are kept across runs; `None` compiles every time.
    pub cache_root: Option<PathBuf>,
    /// Where calls run their guest code.
    pub placement: Placement,
    /// Plugins' spare instances (each made ready for its plugin's next call)
    /// that may exist at once; 0 makes every instance on its call's path.
    pub spares: usize,
    /// How long a spare no call takes is kept.
    pub spare_idle: Duration,
    /// Serve a component never compiled before from Winch's quick compile
    /// while Cranelift compiles it in the background (see `tiers`); where
    /// Winch cannot run, Cranelift alone compiles.
    pub quick_compile: bool,
}

impl Default for RuntimeOptions {
    fn default() -> Self {
        Self {
            defaults: CallLimits::default(),
            ceilings: Ceilings::default(),
            max_concurrent_calls: 32,
            pooling: true,
            cache_root: None,
            placement: Placement::Caller,
            spares: super::instances::MAX_SPARES,
            spare_idle: super::instances::SPARE_IDLE,
            quick_compile: false,
        }
    }
}
