//! The wasmtime engine shared by all plugins, and its epoch clock.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use wasmtime::component::{HasSelf, Linker};
use wasmtime::{Config, Engine};

use super::bindings::ToolPlugin;
use super::cache::CompiledCache;
use super::state::HostState;
use super::{CallLimits, RuntimeError};

/// How often the epoch advances. Deadlines and cancellation are checked at this
/// granularity, and a running guest yields to other tasks once per tick.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(5);

/// Compiles components and links them against WASI and the `host` interface.
///
/// Strategy: one engine and one linker for the life of the process; each plugin
/// is compiled once into an `InstancePre`, and each call instantiates it afresh in
/// its own store, so calls share nothing.
pub struct Runtime {
    pub(crate) engine: Engine,
    pub(crate) linker: Arc<Linker<HostState>>,
    pub(crate) limits: CallLimits,
    pub(crate) cache: Option<CompiledCache>,
    ticker: EpochTicker,
}

impl Runtime {
    /// Creates the engine with async support, epoch interruption and the linker.
    /// With `cache_root`, compiled components are kept there across runs.
    pub fn new(limits: CallLimits, cache_root: Option<&Path>) -> Result<Self, RuntimeError> {
        let mut config = Config::new();
        config.epoch_interruption(true);
        config.wasm_component_model(true);
        let engine = Engine::new(&config).map_err(|e| RuntimeError::Engine(format!("{e:#}")))?;

        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)
            .map_err(|e| RuntimeError::Engine(format!("linking WASI: {e:#}")))?;
        ToolPlugin::add_to_linker::<_, HasSelf<_>>(&mut linker, |state| state)
            .map_err(|e| RuntimeError::Engine(format!("linking the host interface: {e:#}")))?;

        let ticker = EpochTicker::start(engine.clone());
        let cache = cache_root.map(|root| CompiledCache::new(root, &engine));
        Ok(Self {
            engine,
            linker: Arc::new(linker),
            limits,
            cache,
            ticker,
        })
    }

    /// The limits every call of every plugin gets.
    pub fn limits(&self) -> &CallLimits {
        &self.limits
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.ticker.stop.store(true, Ordering::Relaxed);
    }
}

/// A thread that advances the engine's epoch every [`EPOCH_TICK`].
struct EpochTicker {
    stop: Arc<AtomicBool>,
}

impl EpochTicker {
    fn start(engine: Engine) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        std::thread::Builder::new()
            .name("wharf-epoch".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    std::thread::sleep(EPOCH_TICK);
                    engine.increment_epoch();
                }
            })
            .expect("spawning the epoch thread");
        Self { stop }
    }
}
