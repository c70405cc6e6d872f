//! The wasmtime engines that compile plugins, their instance pool, and the
//! one linker every component is linked with.
//!
//! 1. [`base_config`]: what every engine shares (async, epoch interruption,
//!    the stack limit, the component model; fuel when metered).
//! 2. [`pool_config`]: the pooling allocator's slots, sized from the
//!    concurrency and the memory ceiling.
//! 3. [`new_linker`]: WASI, `wasi:http` and the `host` interface.
//! 4. [`Compilers`]: Cranelift's engine, and Winch's for quick compiles (see
//!    `tiers`), each with its linker and compile cache.

use std::sync::{Arc, OnceLock};

use wasmtime::component::{HasSelf, Linker};
use wasmtime::{
    Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Strategy,
};

use super::bindings::Plugin as PluginWorld;
use super::cache::CompiledCache;
use super::epoch::EpochTicker;
use super::failure::RuntimeError;
use super::function_cache::FunctionCache;
use super::limits::{Ceilings, MAX_WASM_STACK, RETIRE_HEADROOM, RuntimeOptions};
use super::shared::SharedComponents;
use super::state::HostState;

/// Core instances one component may contain (a Rust component has one to three; a
/// JavaScript one a few more).
const CORE_INSTANCES_PER_COMPONENT: u32 = 16;
/// Memories and tables one component may define.
const MEMORIES_PER_COMPONENT: u32 = 4;
const TABLES_PER_COMPONENT: u32 = 8;
/// Elements of one table (JavaScript engines compiled to wasm have large tables).
const TABLE_ELEMENTS: usize = 100_000;

/// Whether an engine's code counts fuel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Metering {
    Off,
    On,
}

/// The engines that compile plugins with one setting of fuel metering:
/// Cranelift's, and Winch's if new components are served from its quick
/// compile (see `tiers`).
pub(crate) struct Compilers {
    /// Cranelift's: the code every plugin ends up running.
    pub(crate) optimized: Backend,
    quick: QuickBackend,
}

/// Winch's backend, made when a component first needs a quick compile. Most
/// starts find every component's optimised code in the cache and never do;
/// making it anyway (its instance pool and its linker) was a tenth of a
/// small server's start-up.
struct QuickBackend {
    made: OnceLock<Option<Backend>>,
    /// What making it takes; `None` if new components are compiled by
    /// Cranelift only.
    recipe: Option<QuickRecipe>,
}

struct QuickRecipe {
    options: RuntimeOptions,
    metering: Metering,
    /// The clock its engine joins once made.
    epoch: Arc<EpochTicker>,
}

impl Compilers {
    /// Cranelift's engine, made now and added to `epoch`'s clock; Winch's
    /// only if `quick`, and only once needed (see [`Self::quick`]). Also
    /// whether Cranelift's got the instance pool.
    pub(crate) fn new(
        options: &RuntimeOptions,
        functions: &Arc<FunctionCache>,
        metering: Metering,
        quick: bool,
        epoch: &Arc<EpochTicker>,
    ) -> Result<(Self, bool), RuntimeError> {
        // Winch's architectures; elsewhere Cranelift alone compiles.
        let quick = quick && cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));
        let (engine, pooled) = pooled_engine(options, || {
            let mut config = base_config(metering);
            config
                .enable_incremental_compilation(functions.clone())
                .map_err(|e| RuntimeError::Engine(format!("{e:#}")))?;
            // Behind quick compiles, Cranelift works in the background on
            // one core, leaving the others to the server.
            config.parallel_compilation(!quick);
            Ok(config)
        })?;
        let optimized = Backend::new(engine, options)?;
        epoch.add([optimized.engine.clone()]);
        let recipe = quick.then(|| QuickRecipe {
            options: options.clone(),
            metering,
            epoch: epoch.clone(),
        });
        let quick = QuickBackend {
            made: OnceLock::new(),
            recipe,
        };
        Ok((Self { optimized, quick }, pooled))
    }

    /// Winch's backend, made now if this is its first use; `None` if quick
    /// compiles are off or Winch cannot run here (said once, in the log).
    pub(crate) fn quick(&self) -> Option<&Backend> {
        let recipe = self.quick.recipe.as_ref()?;
        self.quick
            .made
            .get_or_init(|| {
                let backend = quick_backend(&recipe.options, recipe.metering)?;
                recipe.epoch.add([backend.engine.clone()]);
                Some(backend)
            })
            .as_ref()
    }

    /// Winch's backend if it has been made.
    pub(crate) fn quick_if_made(&self) -> Option<&Backend> {
        self.quick.made.get()?.as_ref()
    }

    /// Whether new components are served from Winch's quick compile (where
    /// Winch can run).
    pub(crate) fn quick_compiles(&self) -> bool {
        self.quick.recipe.is_some()
    }

    /// Its engines made so far, for the pool gauges.
    pub(crate) fn engines(&self) -> Vec<Engine> {
        let mut engines = vec![self.optimized.engine.clone()];
        engines.extend(self.quick_if_made().map(|q| q.engine.clone()));
        engines
    }
}

/// An engine, the linker made for it, its compile cache, and the components
/// its plugins share.
pub(crate) struct Backend {
    pub(crate) engine: Engine,
    pub(crate) linker: Arc<Linker<HostState>>,
    pub(crate) cache: Option<CompiledCache>,
    pub(crate) shared: SharedComponents,
}

impl Backend {
    fn new(engine: Engine, options: &RuntimeOptions) -> Result<Self, RuntimeError> {
        let linker = new_linker(&engine)?;
        let cache = options
            .cache_root
            .as_deref()
            .map(|root| CompiledCache::new(root, &engine));
        Ok(Self {
            engine,
            linker: Arc::new(linker),
            cache,
            shared: SharedComponents::default(),
        })
    }
}

/// What every engine shares: async calls, epoch interruption, the stack limit
/// and the component model; fuel if `metering` is on.
pub(crate) fn base_config(metering: Metering) -> Config {
    let mut config = Config::new();
    config.epoch_interruption(true);
    config.consume_fuel(metering == Metering::On);
    config.max_wasm_stack(MAX_WASM_STACK);
    config.wasm_component_model(true);
    config
}

/// An engine from `config()`, with the instance pool if the options ask for
/// it and it can be reserved (else on-demand allocation, with a warning), and
/// whether it got the pool.
fn pooled_engine(
    options: &RuntimeOptions,
    config: impl Fn() -> Result<Config, RuntimeError>,
) -> Result<(Engine, bool), RuntimeError> {
    if !options.pooling {
        return Ok((new_engine(&config()?)?, false));
    }
    let mut pooled = config()?;
    pooled.allocation_strategy(InstanceAllocationStrategy::Pooling(pool_config(
        options.max_concurrent_calls.saturating_add(options.spares),
        &options.ceilings,
    )));
    match Engine::new(&pooled) {
        Ok(engine) => Ok((engine, true)),
        Err(error) => {
            tracing::warn!(
                "could not reserve the instance pool, using on-demand allocation \
                 (each call costs more): {error:#}"
            );
            Ok((new_engine(&config()?)?, false))
        }
    }
}

/// Winch's engine and linker, or `None` (with the reason in the log) where
/// Winch cannot run: new components are then compiled by Cranelift only.
fn quick_backend(options: &RuntimeOptions, metering: Metering) -> Option<Backend> {
    let made = pooled_engine(options, || {
        let mut config = base_config(metering);
        config.strategy(Strategy::Winch);
        Ok(config)
    })
    .and_then(|(engine, _)| Backend::new(engine, options));
    match made {
        Ok(backend) => Some(backend),
        Err(error) => {
            tracing::info!("new components are compiled by Cranelift only: {error}");
            None
        }
    }
}

fn new_engine(config: &Config) -> Result<Engine, RuntimeError> {
    Engine::new(config).map_err(|e| RuntimeError::Engine(format!("{e:#}")))
}

/// A linker with WASI, `wasi:http` and the `host` interface.
pub(crate) fn new_linker(engine: &Engine) -> Result<Linker<HostState>, RuntimeError> {
    let mut linker = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)
        .map_err(|e| RuntimeError::Engine(format!("linking WASI: {e:#}")))?;
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)
        .map_err(|e| RuntimeError::Engine(format!("linking wasi:http: {e:#}")))?;
    PluginWorld::add_to_linker::<_, HasSelf<_>>(&mut linker, |state| state)
        .map_err(|e| RuntimeError::Engine(format!("linking the host interface: {e:#}")))?;
    Ok(linker)
}

/// A pool with one slot per instance that may exist at once (a running call's
/// or a spare, see `instances`), and one per store that may wait to be dropped
/// after its call (see `retire`). Slots reserve address space, not
/// memory: pages are committed as a guest touches them and decommitted when its
/// call ends.
pub(crate) fn pool_config(instances: usize, ceilings: &Ceilings) -> PoolingAllocationConfig {
    let slots = u32::try_from(instances.saturating_add(RETIRE_HEADROOM))
        .unwrap_or(u32::MAX)
        .max(1);
    let mut pool = PoolingAllocationConfig::default();
    pool.total_component_instances(slots)
        .total_core_instances(slots * CORE_INSTANCES_PER_COMPONENT)
        .max_core_instances_per_component(CORE_INSTANCES_PER_COMPONENT)
        .total_memories(slots * 2)
        .max_memories_per_component(MEMORIES_PER_COMPONENT)
        .total_tables(slots * 2)
        .max_tables_per_component(TABLES_PER_COMPONENT)
        .table_elements(TABLE_ELEMENTS)
        .total_stacks(slots)
        .total_gc_heaps(slots)
        .max_memory_size(ceilings.memory_bytes)
        // A finished call's dirty pages, up to these sizes, are zeroed in place
        // (found with PAGEMAP_SCAN on Linux 6.7+) rather than dropped with
        // madvise: the next call on the slot then takes no page faults and the
        // process no TLB-shootdown IPIs. Beyond them, and on older kernels
        // (memset of the whole prefix), memory goes back to the kernel as before.
        .linear_memory_keep_resident(KEEP_RESIDENT)
        .table_keep_resident(KEEP_RESIDENT)
        .pagemap_scan(Enabled::Auto)
        .max_unused_warm_slots(slots.min(8));
    pool
}

/// How much of a pooled memory or table stays resident between calls (see
/// [`pool_config`]); a Rust guest's stack, data and first heap pages fit.
const KEEP_RESIDENT: usize = 2 << 20;

#[cfg(test)]
mod tests;
