//! A loaded plugin: a compiled, linked component and the tools it offers.

use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::component::Component;
use wasmtime::{Store, UpdateDeadline};

use super::admission::{CallSlots, Slot};
use super::bindings::exports::wharf::plugin::tools::ToolError;
use super::bindings::{ToolPlugin, ToolPluginPre};
use super::cache::ContentHash;
use super::engine::Runtime;
use super::failure::{CallFailure, Interrupt, InterruptTrap, classify};
use super::grants::Grants;
use super::limits::CallLimits;
use super::state::{CallContext, HostState, Sandbox};
use super::types::{CallOutput, SpecError, ToolSpec};

/// Extra time past the deadline before a call stuck in a host call is abandoned.
/// Guest code is stopped at the deadline by the epoch; this only covers time spent
/// inside the host (a WASI sleep, an HTTP request, say).
const HOST_GRACE: Duration = Duration::from_millis(250);

/// Why a component could not be loaded as a plugin.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(
        "this is a core WebAssembly module, not a component; build it for wasm32-wasip2 \
         or wrap it with `wasm-tools component new`"
    )]
    CoreModule,
    #[error("this is not a WebAssembly file")]
    NotWasm,
    #[error("compiling the component failed: {0}")]
    Compile(String),
    #[error("linking failed (the component imports something Wharf does not provide): {0}")]
    Link(String),
    #[error("the component does not export the `wharf:plugin/tools` interface: {0}")]
    NotAToolPlugin(String),
    #[error("listing its tools failed: {0}")]
    ListTools(CallFailure),
}

/// A compiled plugin, ready to be instantiated for each call.
pub struct Plugin {
    name: Arc<str>,
    pre: ToolPluginPre<HostState>,
    tools: Vec<ToolSpec>,
    sandbox: Arc<Sandbox>,
    /// This plugin's own concurrency limit.
    calls: CallSlots,
    /// The runtime's, shared by every plugin.
    all_calls: CallSlots,
}

impl std::fmt::Debug for Plugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plugin")
            .field("name", &self.name)
            .field("tools", &self.tools.len())
            .finish_non_exhaustive()
    }
}

impl Runtime {
    /// Compiles `bytes` as a plugin with the default limits and no grants.
    pub async fn load(&self, name: &str, bytes: Vec<u8>) -> Result<Plugin, LoadError> {
        self.load_with(name, bytes, self.limits().clone(), Grants::default())
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
        bytes: Vec<u8>,
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
        let component = self.compile(bytes).await?;
        let instance_pre = self
            .linker
            .instantiate_pre(&component)
            .map_err(|e| LoadError::Link(format!("{e:#}")))?;
        let pre = ToolPluginPre::new(instance_pre)
            .map_err(|e| LoadError::NotAToolPlugin(format!("{e:#}")))?;

        let mut plugin = Plugin {
            name: name.into(),
            pre,
            tools: Vec::new(),
            calls: CallSlots::new(limits.max_concurrent_calls),
            sandbox: Arc::new(Sandbox::new(limits, grants)),
            all_calls: self.slots.clone(),
        };
        let listed = plugin.list_tools().await.map_err(LoadError::ListTools)?;
        let mut tools: Vec<ToolSpec> = Vec::with_capacity(listed.len());
        for (tool_name, spec) in listed {
            match spec {
                Err(error) => {
                    tracing::warn!(plugin = name, tool = %tool_name, "tool left out: {error}")
                }
                Ok(spec) if tools.iter().any(|t| t.name == spec.name) => {
                    tracing::warn!(plugin = name, tool = %spec.name, "tool left out: its name is listed twice")
                }
                Ok(spec) => tools.push(spec),
            }
        }
        plugin.tools = tools;
        Ok(plugin)
    }
}

impl Runtime {
    /// Compiles on a blocking thread (off the async executor), or takes the
    /// artifact from the cache when these exact bytes were compiled before.
    async fn compile(&self, bytes: Vec<u8>) -> Result<Component, LoadError> {
        let engine = self.engine.clone();
        let cache = self.cache.clone();
        tokio::task::spawn_blocking(move || {
            let hash = ContentHash::of(&bytes);
            if let Some(component) = cache.as_ref().and_then(|c| c.get(&engine, &hash)) {
                tracing::debug!("compiled component taken from the cache");
                return Ok(component);
            }
            let component = Component::new(&engine, &bytes)
                .map_err(|e| LoadError::Compile(format!("{e:#}")))?;
            if let Some(cache) = &cache {
                cache.put(&hash, &component);
            }
            Ok(component)
        })
        .await
        .map_err(|e| LoadError::Compile(e.to_string()))?
    }
}

impl Plugin {
    /// The plugin's name (from its file name).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tools it offers, in the order the plugin listed them.
    pub fn tools(&self) -> &[ToolSpec] {
        &self.tools
    }

    /// The limits each of its calls gets.
    pub fn limits(&self) -> &CallLimits {
        &self.sandbox.limits
    }

    /// What it was granted beyond the default sandbox.
    pub fn grants(&self) -> &Grants {
        &self.sandbox.grants
    }

    /// Calls `tool` with `arguments` (a JSON object as text) in a fresh instance.
    ///
    /// Refused at once if this plugin or the whole server is at its concurrency
    /// limit. A result larger than the output limit, or any HTTP request to a host
    /// outside the allow-list, turns the call into a failure.
    pub async fn call(
        &self,
        tool: &str,
        arguments: &str,
        ctx: CallContext,
    ) -> Result<CallOutput, CallFailure> {
        let own = self
            .calls
            .try_take()
            .ok_or(CallFailure::PluginBusy(self.calls.limit()))?;
        let all = self
            .all_calls
            .try_take()
            .ok_or(CallFailure::ServerBusy(self.all_calls.limit()))?;
        let cancel = ctx.cancel.clone();
        // The bindings take the `json` type alias (`String`) by reference.
        let arguments = arguments.to_owned();
        let (mut store, instance) = self.instantiate(ctx).await?;
        let outcome = guarded(&cancel, self.limits().timeout, async {
            instance
                .wharf_plugin_tools()
                .call_call_tool(&mut store, tool, &arguments)
                .await
        })
        .await;
        let outcome = self.finish(&store, outcome)?;
        // A refused request fails the call even if the plugin handled the refusal.
        if let Some(refusal) = store.data().refusal() {
            return Err(refusal);
        }
        // The store (and its pooled slot) goes before the permits do.
        drop(store);
        drop((all, own));
        let output = match outcome {
            Ok(result) => CallOutput::from_wit(result),
            Err(ToolError::UnknownTool(name)) => return Err(CallFailure::UnknownTool(name)),
            Err(ToolError::InvalidArguments(why)) => {
                return Err(CallFailure::InvalidArguments(why));
            }
            Err(ToolError::Failed(why)) => return Err(CallFailure::Failed(why)),
        };
        let size = output.size_bytes();
        let limit = self.limits().max_output_bytes;
        if size > limit {
            return Err(CallFailure::OutputTooLarge { size, limit });
        }
        Ok(output)
    }

    /// Asks a fresh instance for its tool list, with each description parsed.
    /// Waits for a free call slot rather than failing: loading must not depend
    /// on how busy the server is.
    async fn list_tools(&self) -> Result<Vec<(String, Result<ToolSpec, SpecError>)>, CallFailure> {
        let _slot: Slot = self.all_calls.take().await;
        let ctx = CallContext::default();
        let cancel = ctx.cancel.clone();
        let (mut store, instance) = self.instantiate(ctx).await?;
        let outcome = guarded(&cancel, self.limits().timeout, async {
            instance
                .wharf_plugin_tools()
                .call_list_tools(&mut store)
                .await
        })
        .await;
        let tools = self.finish(&store, outcome)?;
        Ok(tools
            .into_iter()
            .map(|tool| (tool.name.clone(), ToolSpec::from_wit(tool)))
            .collect())
    }

    /// A new store with this plugin's limits and grants, and an instance in it.
    async fn instantiate(
        &self,
        ctx: CallContext,
    ) -> Result<(Store<HostState>, ToolPlugin), CallFailure> {
        let engine = self.pre.engine();
        let state = HostState::new(self.name.clone(), self.sandbox.clone(), ctx)
            .map_err(|e| CallFailure::Setup(e.to_string()))?;
        let mut store = Store::new(engine, state);
        store.limiter(|state| &mut state.limits);
        store
            .set_fuel(self.limits().fuel.unwrap_or(u64::MAX))
            .map_err(|e| CallFailure::Setup(format!("{e:#}")))?;

        let deadline = Instant::now() + self.limits().timeout;
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(move |mut store| {
            let state = store.data_mut();
            let interrupt = if state.is_cancelled() {
                Interrupt::Cancelled
            } else if Instant::now() >= deadline {
                Interrupt::Deadline
            } else {
                // tokio's yield puts the task behind the others; a plain waker
                // would land in the LIFO slot and starve them.
                return Ok(UpdateDeadline::YieldCustom(
                    1,
                    Box::pin(tokio::task::yield_now()),
                ));
            };
            Err(wasmtime::Error::new(InterruptTrap(interrupt)))
        });

        let cancel = store.data().call_cancel();
        let instance = guarded(&cancel, self.limits().timeout, async {
            self.pre.instantiate_async(&mut store).await
        })
        .await;
        let instance = self.finish(&store, instance)?;
        Ok((store, instance))
    }

    /// Turns the outcome of guest code into a value or the failure that stopped it,
    /// and logs what the guest printed.
    fn finish<T>(
        &self,
        store: &Store<HostState>,
        outcome: Guarded<wasmtime::Result<T>>,
    ) -> Result<T, CallFailure> {
        let state = store.data();
        state.flush_output();
        match outcome {
            Guarded::Cancelled => Err(CallFailure::Cancelled),
            Guarded::TimedOut => Err(CallFailure::Timeout(self.limits().timeout)),
            Guarded::Done(Ok(value)) => Ok(value),
            Guarded::Done(Err(error)) => Err(classify(self.limits(), state, error)),
        }
    }
}

/// The outcome of guest work raced against cancellation and a hard time limit.
enum Guarded<T> {
    Done(T),
    Cancelled,
    TimedOut,
}

/// Runs `work` until it finishes, `cancel` fires, or `timeout` (plus a grace
/// period for host calls) passes; dropping the future stops the guest.
async fn guarded<T>(
    cancel: &tokio_util::sync::CancellationToken,
    timeout: Duration,
    work: impl Future<Output = T>,
) -> Guarded<T> {
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Guarded::Cancelled,
        result = tokio::time::timeout(timeout + HOST_GRACE, work) => match result {
            Ok(value) => Guarded::Done(value),
            Err(_) => Guarded::TimedOut,
        },
    }
}
