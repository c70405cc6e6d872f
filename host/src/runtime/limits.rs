//! Every limit a plugin call runs under: the values, their defaults, and
//! [`MemoryCap`], the store limiter that enforces the memory limit. Where each
//! limit is enforced (one place each):
//!
//! | limit | default | set by | enforced by |
//! | --- | --- | --- | --- |
//! | time per call ([`CallLimits::timeout`]) | 30 s | `--timeout-ms`, manifest `timeout-ms` | guest code: the epoch deadline callback installed by `store::call_store`; time spent in the host: `guard::guarded` / `guard::guarded_by_clock`, [`HOST_GRACE`] later |
//! | linear memory ([`CallLimits::memory_bytes`]) | 256 MiB | `--memory-mib`, manifest `memory-mib` | [`MemoryCap`], the store's limiter (installed by `store::call_store`); a pool slot's size is [`Ceilings::memory_bytes`] (`engine::pool_config`) |
//! | fuel ([`CallLimits::fuel`]) | none | `--fuel`, manifest `fuel` | the store's fuel (`store::call_store`), counted by the metered engines (`engine::Compilers`) |
//! | result size ([`CallLimits::max_output_bytes`]) | 4 MiB | `--max-output-bytes`, manifest `max-output-bytes` | `Plugin::check_output_size`, after every request (`plugin/invoke.rs`) |
//! | captured stdout/stderr ([`CallLimits::captured_output_bytes`]) | 64 KiB | fixed | `capture::CapturedOutput` |
//! | concurrent calls of one plugin ([`CallLimits::max_concurrent_calls`]) | 8 | `--plugin-concurrency`, manifest `max-concurrent-calls` | `Plugin::take_slots` (`admission::CallSlots`) |
//! | concurrent calls of the server ([`RuntimeOptions::max_concurrent_calls`]) | 32 | `--max-concurrent-calls` | `Plugin::take_slots`; also sizes the instance pool |
//! | what a manifest may ask for ([`Ceilings`]) | 4 GiB, 600 s | `--max-memory-mib`, `--max-timeout-ms` | `manifest::Manifest` checks, at load |
//! | native stack of a guest ([`MAX_WASM_STACK`]) | 512 KiB | fixed | the engine config (`engine::base_config`) |
//! | spare instances ([`MAX_SPARES`], [`SPARE_IDLE`]; per plugin `instances::MAX_SPARES_PER_PLUGIN` and `SPARE_BYTES_PER_PLUGIN`) | 24 in all, 16 and 16 MiB per plugin, 30 s | fixed (none for `wharf call`) | `instances::Instances::refill` and its idle check |
//! | stores waiting to be dropped ([`RETIRE_HEADROOM`]) | 24 | fixed | `retire::Retirer` |
//!
//! A limit that is hit ends that call with a [`CallFailure`](super::CallFailure)
//! naming the limit, never the server.

use std::path::PathBuf;
use std::time::Duration;

use wasmtime::{ResourceLimiter, StoreLimits};

use super::placement::Placement;

/// The native stack a guest may use; deeper recursion traps with a stack overflow.
pub(crate) const MAX_WASM_STACK: usize = 512 << 10;

/// Spares the runtime holds at once, across plugins, unless its options say
/// otherwise; the pool has a slot for each.
pub(crate) const MAX_SPARES: usize = 24;

/// How long a spare nobody takes is kept.
pub(crate) const SPARE_IDLE: Duration = Duration::from_secs(30);

/// Stores that may wait to be dropped at once (see `retire`), and the pool's
/// extra slots for them. A busy plugin's stores wait for the upkeep thread in
/// batches (see `upkeep`); with 8, a third of them found no room and were
/// dropped on the serving thread after all.
pub(crate) const RETIRE_HEADROOM: usize = 24;

/// Extra time past the deadline before a call stuck in a host call is abandoned.
/// Guest code is stopped at the deadline by the epoch; this only covers time spent
/// inside the host (a WASI sleep, an HTTP request, say).
pub(crate) const HOST_GRACE: Duration = Duration::from_millis(250);

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
    /// Where compiled components are kept across runs; `None` compiles every
    /// time. The folder is the caller's to make: the runtime makes only its
    /// engines' folders inside, so a cache removed while it runs is not
    /// brought back (its writes then fail, logged once, and it compiles in
    /// memory).
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
            spares: MAX_SPARES,
            spare_idle: SPARE_IDLE,
            quick_compile: false,
        }
    }
}

/// Store limits that remember whether the memory cap was what stopped the guest,
/// so the error can say so.
pub(crate) struct MemoryCap {
    inner: StoreLimits,
    max_bytes: usize,
    hit: bool,
    /// Linear memory of the store's instances now, all memories together.
    bytes: usize,
}

impl MemoryCap {
    pub(crate) fn new(max_bytes: usize) -> Self {
        Self {
            inner: wasmtime::StoreLimitsBuilder::new()
                .memory_size(max_bytes)
                .trap_on_grow_failure(true)
                .build(),
            max_bytes,
            hit: false,
            bytes: 0,
        }
    }

    /// The store's linear memory now, in bytes.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.bytes
    }

    /// True if the guest tried to grow its memory past the limit.
    pub(crate) fn hit(&self) -> bool {
        self.hit
    }
}

impl ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.max_bytes {
            self.hit = true;
        }
        let allowed = self.inner.memory_growing(current, desired, maximum)?;
        if allowed {
            self.bytes = self.bytes.saturating_add(desired.saturating_sub(current));
        }
        Ok(allowed)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.inner.table_growing(current, desired, maximum)
    }

    fn instances(&self) -> usize {
        self.inner.instances()
    }

    fn tables(&self) -> usize {
        self.inner.tables()
    }

    fn memories(&self) -> usize {
        self.inner.memories()
    }
}
