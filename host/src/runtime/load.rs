//! The [`Runtime`]: the engines, the instance pool and the shared limits,
//! and how component bytes become a [`Plugin`].
//!
//! Loading, in order (`Runtime::load_with`):
//! 1. the bytes are checked to be a component (not a core module);
//! 2. its `package-docs` section is read (tool descriptions of plain components);
//! 3. the engines are picked: metered ones if the plugin has a fuel limit;
//! 4. it is compiled through the compile cache (`compile::compile`: cached
//!    optimised code, else Winch's quick compile, else Cranelift's);
//! 5. it is linked and its exports found (`code::CodeMaker::make`);
//! 6. the plugin is opened: it lists what it offers, or a plain one starts
//!    once (`Plugin::open`);
//! 7. quick code is queued for Cranelift's optimised compile (`tiers`).

use std::sync::Arc;

use wasmtime::Engine;

use super::admission::CallSlots;
use super::cache::ComponentBytes;
use super::code::{CodeMaker, Tier};
use super::compile::compile;
use super::engine::{Compilers, Metering};
use super::epoch::EpochTicker;
use super::failure::{LoadError, RuntimeError};
use super::function_cache::FunctionCache;
use super::grants::Grants;
use super::instances::InstanceSettings;
use super::limits::{CallLimits, Ceilings, RuntimeOptions};
use super::list_changes::ListChanges;
use super::plugin::{Plugin, PluginParts};
use super::retire::Retirer;
use super::state::Sandbox;
use super::tiers::{Optimizer, TierUp};

/// The most memory compiled functions kept for recompiling changed components
/// may take (see [`FunctionCache`]): a few rebuilds of a Rust plugin, or one of a
/// JavaScript or Python one, which are mostly their language's runtime.
const FUNCTION_CACHE_BYTES: usize = 64 << 20;

/// Compiles components and links them against WASI, `wasi:http` and the `host`
/// interface.
///
/// Strategy: one Cranelift engine and linker for the life of the process (and
/// a Winch one when new components are first served from a quick compile, see
/// `tiers`); each plugin is compiled into an `InstancePre`, and each call
/// instantiates it afresh in its own store, so calls share nothing. With the pooling allocator the memory,
/// tables and fiber stack of a call come from slots reserved at start-up, so an
/// instantiation is a few microseconds and a finished call's memory is returned
/// to the kernel (RSS goes back down).
///
/// Fuel metering costs a plugin's code a counter update in every block (about
/// a tenth of a compute-bound call), so only plugins with a fuel limit pay it:
/// they are compiled by a second set of engines with metering on, made when the
/// first such plugin loads. A manifest that adds or drops a fuel limit reloads
/// its plugin, which is then compiled by the other set.
pub struct Runtime {
    /// The engines of plugins without a fuel limit.
    pub(crate) unmetered: Arc<Compilers>,
    /// The engines of plugins with a fuel limit, once one has loaded.
    pub(crate) metered: tokio::sync::OnceCell<Arc<Compilers>>,
    /// Makes the optimised code of plugins served from a quick compile.
    pub(crate) optimizer: Option<Optimizer>,
    pub(crate) options: RuntimeOptions,
    pub(crate) slots: CallSlots,
    /// Places for plugins' spare instances (see `instances`); none if the
    /// options allow none.
    pub(crate) spares: Option<CallSlots>,
    pub(crate) retirer: Retirer,
    pub(crate) functions: Arc<FunctionCache>,
    pooled: bool,
    /// Advances the epoch while any store exists; shared with the plugins,
    /// whose stores hold it.
    pub(crate) epoch: Arc<EpochTicker>,
    /// Plugins that said their lists changed (see `list_changes`).
    pub(crate) list_changes: ListChanges,
}

impl Runtime {
    /// A runtime with these default limits and everything else as in
    /// [`RuntimeOptions::default`].
    pub fn new(limits: CallLimits) -> Result<Self, RuntimeError> {
        Self::with_options(RuntimeOptions {
            defaults: limits,
            ..RuntimeOptions::default()
        })
    }

    /// Creates the unmetered engines (async, epoch interruption, pooling if
    /// asked and possible), their linkers and the epoch clock.
    pub fn with_options(options: RuntimeOptions) -> Result<Self, RuntimeError> {
        let functions = Arc::new(FunctionCache::new(FUNCTION_CACHE_BYTES));
        let epoch = Arc::new(EpochTicker::start(Vec::new()));
        let (unmetered, pooled) = Compilers::new(
            &options,
            &functions,
            Metering::Off,
            options.quick_compile,
            &epoch,
        )?;
        let mut runtime = Self {
            unmetered: Arc::new(unmetered),
            metered: tokio::sync::OnceCell::new(),
            optimizer: None,
            functions,
            slots: CallSlots::new(options.max_concurrent_calls),
            spares: (options.spares > 0).then(|| CallSlots::new(options.spares)),
            retirer: Retirer::new(&options.placement),
            options,
            pooled,
            epoch,
            list_changes: ListChanges::default(),
        };
        if runtime.unmetered.quick_compiles() {
            runtime.optimizer = Some(Optimizer::new(runtime.functions.clone()));
        }
        Ok(runtime)
    }

    /// How many plugins still serve quick code that the optimiser has yet
    /// to replace (queued or under way).
    pub fn optimizing(&self) -> usize {
        self.optimizer.as_ref().map_or(0, Optimizer::outstanding)
    }

    /// Waits until every queued optimised compile is done (and cached).
    pub async fn finish_optimizing(&self) {
        while self.optimizing() > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    /// The engines for a plugin with `limits`: the metered ones (made now if
    /// this is the first plugin to need them) if it has a fuel limit.
    pub(crate) async fn compilers_for(
        &self,
        limits: &CallLimits,
    ) -> Result<Arc<Compilers>, RuntimeError> {
        if limits.fuel.is_none() {
            return Ok(self.unmetered.clone());
        }
        self.metered
            .get_or_try_init(|| async {
                let (metered, _) = Compilers::new(
                    &self.options,
                    &self.functions,
                    Metering::On,
                    self.optimizer.is_some(),
                    &self.epoch,
                )?;
                tracing::debug!("made the fuel-metered engines");
                Ok(Arc::new(metered))
            })
            .await
            .cloned()
    }

    /// The limits a plugin gets when its manifest does not set them.
    pub fn limits(&self) -> &CallLimits {
        &self.options.defaults
    }

    /// The most a manifest may ask for.
    pub fn ceilings(&self) -> &Ceilings {
        &self.options.ceilings
    }

    /// How many calls may run at once, across all plugins.
    pub fn max_concurrent_calls(&self) -> usize {
        self.options.max_concurrent_calls
    }

    /// Whether instances come from the pooling allocator (false after a fallback).
    pub fn is_pooled(&self) -> bool {
        self.pooled
    }
}

impl Runtime {
    /// Compiles `bytes` as a plugin with the default limits and no grants.
    pub async fn load(&self, name: &str, bytes: Vec<u8>) -> Result<Plugin, LoadError> {
        self.load_with(name, bytes.into(), self.limits().clone(), Grants::default())
            .await
    }

    /// Compiles `bytes`, links it, and asks it for its tools; its calls get
    /// `limits` and `grants` (already checked against the runtime's ceilings by
    /// the caller, which knows where they came from).
    ///
    /// Compilation runs on a blocking thread, off the async executor. Tools whose
    /// descriptions are invalid are left out with a warning; the rest load.
    pub async fn load_with(
        &self,
        name: &str,
        bytes: ComponentBytes,
        limits: CallLimits,
        grants: Grants,
    ) -> Result<Plugin, LoadError> {
        match bytes.get(4..8) {
            Some([0x0d, 0x00, 0x01, 0x00]) if bytes.starts_with(b"\0asm") => {}
            Some([0x01, 0x00, 0x00, 0x00]) if bytes.starts_with(b"\0asm") => {
                return Err(LoadError::CoreModule);
            }
            _ => return Err(LoadError::NotWasm),
        }
        // Read before compiling takes the bytes; a broken section costs only docs.
        let docs = crate::docs::PackageDocs::from_component(&bytes)
            .unwrap_or_else(|error| {
                tracing::warn!(
                    plugin = name,
                    "its package-docs section is ignored: {error}"
                );
                None
            })
            .unwrap_or_default();
        let compilers = self
            .compilers_for(&limits)
            .await
            .map_err(|e| LoadError::Compile(e.to_string()))?;
        let digest = bytes.hash();
        let mut compiled = compile(&compilers, &self.functions, bytes.into_bytes(), digest).await?;
        let tier = compiled.tier();
        let name: Arc<str> = name.into();
        let sandbox = Arc::new(
            Sandbox::new(limits, grants).with_lists(self.list_changes.signal(name.clone())),
        );
        let made =
            self.code_maker(&compilers, tier)
                .make(&compiled.component, &name, &sandbox, &docs)?;
        for skip in &made.skipped {
            tracing::warn!(
                plugin = %name,
                function = %skip.function,
                "function is not offered as a tool: {}",
                skip.reason
            );
        }
        let engine: &Engine = made.code.instances.engine();
        let imports = compiled
            .component
            .component_type()
            .imports(engine)
            .map(|(name, _)| name.to_string())
            .collect();
        let plugin = Plugin::open(PluginParts {
            name: name.clone(),
            digest,
            sandbox: sandbox.clone(),
            code: made.code,
            skipped: made.skipped,
            imports,
            placement: self.options.placement.clone(),
            all_calls: self.slots.clone(),
            retirer: self.retirer.clone(),
        })
        .await?;
        if let (Some(bytes), Some(optimizer)) = (compiled.quick_from.take(), &self.optimizer) {
            optimizer.submit(TierUp {
                bytes,
                docs,
                name,
                sandbox,
                maker: self.code_maker(&compilers, Tier::Optimized),
                compilers,
                code: Arc::downgrade(&plugin.code),
            });
        }
        Ok(plugin)
    }

    /// The maker of code compiled by `tier`'s engine of `compilers`.
    fn code_maker(&self, compilers: &Compilers, tier: Tier) -> CodeMaker {
        let (tier, engine, linker) = match (compilers.quick_if_made(), tier) {
            (Some(quick), Tier::Quick) => (Tier::Quick, &quick.engine, &quick.linker),
            _ => (
                Tier::Optimized,
                &compilers.optimized.engine,
                &compilers.optimized.linker,
            ),
        };
        CodeMaker {
            tier,
            linker: linker.clone(),
            settings: self.instance_settings(engine.clone()),
        }
    }

    /// How plugins' instances are made, for components compiled by `engine`.
    fn instance_settings(&self, engine: Engine) -> InstanceSettings {
        InstanceSettings {
            engine,
            epoch: self.epoch.clone(),
            placement: self.options.placement.clone(),
            budget: self.spares.clone(),
            idle: self.options.spare_idle,
        }
    }
}
