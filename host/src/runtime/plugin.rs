//! A loaded plugin: a compiled, linked component and the tools it offers.

use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::component::Component;
use wasmtime::{Store, Trap, UpdateDeadline};

use super::CallLimits;
use super::bindings::exports::wharf::plugin::tools::ToolError;
use super::bindings::{ToolPlugin, ToolPluginPre};
use super::cache::ContentHash;
use super::engine::Runtime;
use super::state::{CallContext, HostState};
use super::types::{CallOutput, SpecError, ToolSpec};

/// Extra time past the deadline before a call stuck in a host call is abandoned.
/// Guest code is stopped at the deadline by the epoch; this only covers time spent
/// inside the host (a WASI sleep, say).
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

/// Why a call produced no result from the tool itself.
///
/// Every variant but `UnknownTool` is a tool execution error: the call ran (or
/// tried to) and the model should see the message.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CallFailure {
    #[error("the plugin has no tool named `{0}`")]
    UnknownTool(String),
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    #[error("{0}")]
    Failed(String),
    #[error("the call was stopped after its time limit of {} ms", .0.as_millis())]
    Timeout(Duration),
    #[error("the call was cancelled")]
    Cancelled,
    #[error("the plugin exceeded its memory limit of {0} MiB and was stopped")]
    OutOfMemory(usize),
    #[error("the plugin crashed: {0}")]
    Crashed(String),
}

/// Why the guest was interrupted, recorded by the epoch callback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Interrupt {
    Deadline,
    Cancelled,
}

/// A compiled plugin, ready to be instantiated for each call.
pub struct Plugin {
    name: Arc<str>,
    pre: ToolPluginPre<HostState>,
    tools: Vec<ToolSpec>,
    limits: CallLimits,
    config: Arc<[(String, String)]>,
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
    /// Compiles `bytes`, links it, and asks it for its tools.
    ///
    /// Compilation runs on a blocking thread, off the async executor. Tools whose
    /// descriptions are invalid are left out with a warning; the rest load.
    pub async fn load(&self, name: &str, bytes: Vec<u8>) -> Result<Plugin, LoadError> {
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
            limits: self.limits.clone(),
            config: Arc::new([]),
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

    /// Calls `tool` with `arguments` (a JSON object as text) in a fresh instance.
    pub async fn call(
        &self,
        tool: &str,
        arguments: &str,
        ctx: CallContext,
    ) -> Result<CallOutput, CallFailure> {
        let cancel = ctx.cancel.clone();
        // The bindings take the `json` type alias (`String`) by reference.
        let arguments = arguments.to_owned();
        let (mut store, instance) = self.instantiate(ctx).await?;
        let outcome = guarded(&cancel, self.limits.timeout, async {
            instance
                .wharf_plugin_tools()
                .call_call_tool(&mut store, tool, &arguments)
                .await
        })
        .await;
        let outcome = self.finish(&store, outcome)?;
        match outcome {
            Ok(result) => Ok(CallOutput::from_wit(result)),
            Err(ToolError::UnknownTool(name)) => Err(CallFailure::UnknownTool(name)),
            Err(ToolError::InvalidArguments(why)) => Err(CallFailure::InvalidArguments(why)),
            Err(ToolError::Failed(why)) => Err(CallFailure::Failed(why)),
        }
    }

    /// Asks a fresh instance for its tool list, with each description parsed.
    async fn list_tools(&self) -> Result<Vec<(String, Result<ToolSpec, SpecError>)>, CallFailure> {
        let ctx = CallContext::default();
        let cancel = ctx.cancel.clone();
        let (mut store, instance) = self.instantiate(ctx).await?;
        let outcome = guarded(&cancel, self.limits.timeout, async {
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

    /// A new store with this plugin's limits, and an instance in it.
    async fn instantiate(
        &self,
        ctx: CallContext,
    ) -> Result<(Store<HostState>, ToolPlugin), CallFailure> {
        let engine = self.pre.engine();
        let state = HostState::new(self.name.clone(), self.config.clone(), &self.limits, ctx);
        let mut store = Store::new(engine, state);
        store.limiter(|state| &mut state.limits);

        let deadline = Instant::now() + self.limits.timeout;
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
            Err(wasmtime::Error::new(interrupt_trap(interrupt)))
        });

        let cancel = store.data().call_cancel();
        let instance = guarded(&cancel, self.limits.timeout, async {
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
            Guarded::TimedOut => Err(CallFailure::Timeout(self.limits.timeout)),
            Guarded::Done(Ok(value)) => Ok(value),
            Guarded::Done(Err(error)) => Err(self.classify(state, error)),
        }
    }

    fn classify(&self, state: &HostState, error: wasmtime::Error) -> CallFailure {
        if let Some(interrupt) = error.downcast_ref::<InterruptTrap>() {
            return match interrupt.0 {
                Interrupt::Cancelled => CallFailure::Cancelled,
                Interrupt::Deadline => CallFailure::Timeout(self.limits.timeout),
            };
        }
        if state.memory_limit_hit() {
            return CallFailure::OutOfMemory(self.limits.memory_mib());
        }
        let what = match error.downcast_ref::<Trap>() {
            Some(Trap::UnreachableCodeReached) => {
                "it executed an `unreachable` instruction (a panic or abort)".to_string()
            }
            Some(Trap::StackOverflow) => "its call stack overflowed".to_string(),
            Some(trap) => format!("wasm trap: {trap}"),
            None => format!("{error:#}"),
        };
        let stderr = state.stderr_tail();
        if stderr.is_empty() {
            CallFailure::Crashed(what)
        } else {
            CallFailure::Crashed(format!("{what}; it wrote to stderr:\n{stderr}"))
        }
    }
}

/// The error an interrupted guest traps with, so the cause can be recovered.
#[derive(Debug)]
struct InterruptTrap(Interrupt);

impl std::fmt::Display for InterruptTrap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Interrupt::Deadline => f.write_str("deadline reached"),
            Interrupt::Cancelled => f.write_str("call cancelled"),
        }
    }
}

impl std::error::Error for InterruptTrap {}

fn interrupt_trap(interrupt: Interrupt) -> InterruptTrap {
    InterruptTrap(interrupt)
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
