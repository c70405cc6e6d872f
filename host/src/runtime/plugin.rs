//! A loaded plugin: a compiled, linked component and the tools it offers.

use std::sync::Arc;
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use futures::future::BoxFuture;

use wasmtime::component::Instance;
use wasmtime::{Engine, Store};

use super::admission::{CallSlots, Slot};
use super::bindings::exports::wharf::plugin::tools::ToolError;
use super::code::{Code, Exports, WharfExports};
use super::engine::Runtime;
use super::failure::{CallFailure, classify};
use super::grants::Grants;
use super::input::CallClock;
use super::instances::InstanceSettings;
use super::limits::CallLimits;
use super::placement::Placement;
use super::plain::{self, PlainExports, SkippedFunction};
use super::prompt::PromptSpec;
use super::resource::{ResourceSpec, TemplateSpec};
use super::retire::Retirer;
use super::state::{CallContext, HostState, Sandbox};
use super::tiers::{Tier, TierUp};
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
    #[error("it exports a `wharf:plugin` interface of the wrong shape: {0}")]
    BadExport(String),
    #[error("listing its prompts failed: {0}")]
    ListPrompts(CallFailure),
    #[error("listing its resources failed: {0}")]
    ListResources(CallFailure),
    #[error("starting an instance failed: {0}")]
    Start(CallFailure),
    #[error(
        "it exports neither `wharf:plugin/tools` nor any function usable as a tool{}",
        skipped_list(.0)
    )]
    NoTools(Vec<SkippedFunction>),
}

/// ` (skipped: f: why; g: why)`, or nothing.
fn skipped_list(skipped: &[SkippedFunction]) -> String {
    if skipped.is_empty() {
        return String::new();
    }
    let list: Vec<String> = skipped
        .iter()
        .map(|s| format!("`{}`: {}", s.function, s.reason))
        .collect();
    format!(" (skipped: {})", list.join("; "))
}

/// What kind of component a plugin is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PluginKind {
    /// Implements `wharf:plugin` (exports `wharf:plugin/tools`).
    Wharf,
    /// Exports ordinary functions, each a tool.
    Plain,
}

/// A compiled plugin, ready to be instantiated for each call.
pub struct Plugin {
    name: Arc<str>,
    pub(super) sandbox: Arc<Sandbox>,
    kind: PluginKind,
    /// Its compiled component and spare instance; replaced by the optimised
    /// compile if Winch's quick one came first (see `tiers`).
    pub(super) code: Arc<ArcSwap<Code>>,
    /// Where its calls run guest code.
    placement: Placement,
    tools: Vec<ToolSpec>,
    /// Prompts (`wharf:plugin` components that export `prompts` only).
    prompts: Vec<PromptSpec>,
    /// Resources and templates (components that export `resources` only).
    resources: Vec<ResourceSpec>,
    templates: Vec<TemplateSpec>,
    /// Exported functions that are not tools (plain components only).
    skipped: Vec<SkippedFunction>,
    /// The names of the component's imports (`wasi:filesystem/types@0.2.0`, ...).
    imports: Vec<String>,
    /// This plugin's own concurrency limit.
    calls: CallSlots,
    /// The runtime's, shared by every plugin.
    all_calls: CallSlots,
    /// Drops finished stores once the answer is out.
    retirer: Retirer,
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
        let mut compiled = self.compile(&compilers, bytes).await?;
        let tier = compiled.tier();
        let name: Arc<str> = name.into();
        let sandbox = Arc::new(Sandbox::new(limits, grants));
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
        let kind = match made.code.exports {
            Exports::Wharf(_) => PluginKind::Wharf,
            Exports::Plain(_) => PluginKind::Plain,
        };
        let tools = match &made.code.exports {
            Exports::Plain(plain) => plain.tools.iter().map(|t| t.spec.clone()).collect(),
            Exports::Wharf(_) => Vec::new(),
        };
        let max_concurrent_calls = sandbox.limits.max_concurrent_calls;
        let mut plugin = Plugin {
            name: name.clone(),
            sandbox: sandbox.clone(),
            kind,
            code: Arc::new(ArcSwap::from_pointee(made.code)),
            placement: self.options.placement.clone(),
            tools,
            prompts: Vec::new(),
            resources: Vec::new(),
            templates: Vec::new(),
            skipped: made.skipped,
            imports,
            calls: CallSlots::new(max_concurrent_calls),
            all_calls: self.slots.clone(),
            retirer: self.retirer.clone(),
        };
        if kind == PluginKind::Plain {
            // A component that cannot start (a trap in its initialisation, say)
            // is refused now rather than failing every call.
            plugin.start_once().await.map_err(LoadError::Start)?;
        } else {
            plugin.tools = plugin.listed_tools().await?;
            plugin.prompts = plugin
                .list_prompts()
                .await
                .map_err(LoadError::ListPrompts)?;
            (plugin.resources, plugin.templates) = plugin
                .list_resources()
                .await
                .map_err(LoadError::ListResources)?;
        }
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

    /// How plugins' instances are made, for components compiled by `engine`.
    pub(super) fn instance_settings(&self, engine: Engine) -> InstanceSettings {
        InstanceSettings {
            engine,
            epoch: self.epoch.clone(),
            placement: self.options.placement.clone(),
            budget: self.spares.clone(),
            idle: self.options.spare_idle,
        }
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

    /// The prompts it offers, in the order the plugin listed them.
    pub fn prompts(&self) -> &[PromptSpec] {
        &self.prompts
    }

    /// The resources it lists, in its order.
    pub fn resources(&self) -> &[ResourceSpec] {
        &self.resources
    }

    /// Its resource templates, in its order.
    pub fn templates(&self) -> &[TemplateSpec] {
        &self.templates
    }

    /// Whether it implements `wharf:plugin` or is a plain component.
    pub fn kind(&self) -> PluginKind {
        self.kind
    }

    /// Which compiler made the code its calls run now.
    pub fn tier(&self) -> Tier {
        self.code.load().tier
    }

    /// Exported functions of a plain component that are not tools, with the reason.
    pub fn skipped(&self) -> &[SkippedFunction] {
        &self.skipped
    }

    /// The names of everything the component imports.
    pub fn imports(&self) -> &[String] {
        &self.imports
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
        let slots = self.take_slots()?;
        let code = self.code.load_full();
        let output = match &code.exports {
            Exports::Wharf(pre) => self.call_wharf(&code, pre, tool, arguments, ctx).await?,
            Exports::Plain(plain) => self.call_plain(&code, plain, tool, arguments, ctx).await?,
        };
        drop(slots);
        let size = output.size_bytes();
        self.check_output_size(size)?;
        Ok(output)
    }

    /// A place in this plugin's and the server's concurrency limits, or the
    /// reason there is none (requests are refused, not queued).
    fn take_slots(&self) -> Result<(Slot, Slot), CallFailure> {
        let own = self
            .calls
            .try_take()
            .ok_or(CallFailure::PluginBusy(self.calls.limit()))?;
        let all = self
            .all_calls
            .try_take()
            .ok_or(CallFailure::ServerBusy(self.all_calls.limit()))?;
        Ok((own, all))
    }

    /// Runs `call-tool` of a `wharf:plugin` component.
    async fn call_wharf(
        &self,
        code: &Code,
        pre: &WharfExports,
        tool: &str,
        arguments: &str,
        ctx: CallContext,
    ) -> Result<CallOutput, CallFailure> {
        // The bindings take the `json` type alias (`String`) by reference.
        let arguments = arguments.to_owned();
        let (mut store, instance) = self.fresh_instance(code, ctx).await?;
        let tools = self.export(pre.tools.load(&mut store, &instance))?;
        let cancel = store.data().call_cancel();
        let clock = store.data().clock.clone();
        let tool = tool.to_owned();
        let (store, outcome) = self
            .placed(store, move |store| {
                Box::pin(async move {
                    guarded_by_clock(&cancel, &clock, async {
                        tools.call_call_tool(store, &tool, &arguments).await
                    })
                    .await
                })
            })
            .await;
        let outcome = self.conclude(store, outcome)?;
        match outcome {
            Ok(result) => Ok(CallOutput::from_wit(result)),
            Err(ToolError::UnknownTool(name)) => Err(CallFailure::UnknownTool(name)),
            Err(ToolError::InvalidArguments(why)) => Err(CallFailure::InvalidArguments(why)),
            Err(ToolError::Failed(why)) => Err(CallFailure::Failed(why)),
        }
    }

    /// Calls an exported function of a plain component with converted arguments.
    async fn call_plain(
        &self,
        code: &Code,
        plain: &PlainExports,
        tool: &str,
        arguments: &str,
        ctx: CallContext,
    ) -> Result<CallOutput, CallFailure> {
        let tool = plain
            .tools
            .iter()
            .find(|t| t.spec.name == tool)
            .ok_or_else(|| CallFailure::UnknownTool(tool.to_string()))?;
        // Converted before any instance exists: bad arguments cost nothing.
        let params = plain::arguments(&tool.signature, arguments)?;
        let mut results = plain::result_slots(&tool.signature);
        let (mut store, instance) = self.fresh_instance(code, ctx).await?;
        let cancel = store.data().call_cancel();
        let func = instance.get_func(&mut store, tool.export).ok_or_else(|| {
            CallFailure::Setup(format!("the export of `{}` is gone", tool.spec.name))
        })?;
        let timeout = self.limits().timeout;
        let (store, (results, outcome)) = self
            .placed(store, move |store| {
                Box::pin(async move {
                    let outcome = guarded(&cancel, timeout, async {
                        func.call_async(store, &params, &mut results).await
                    })
                    .await;
                    (results, outcome)
                })
            })
            .await;
        self.conclude(store, outcome)?;
        plain::output(&tool.signature, &results)
    }

    /// Instantiates a plain component once, to see that it starts. Waits for a
    /// free call slot, as loading does.
    async fn start_once(&self) -> Result<(), CallFailure> {
        let _slot: Slot = self.all_calls.take().await;
        self.new_instance(&self.code.load(), CallContext::default())
            .await
            .map(|_| ())
    }

    /// The tools a `wharf:plugin` component lists, less those whose
    /// description is invalid or whose name it lists twice (each with a
    /// warning).
    async fn listed_tools(&self) -> Result<Vec<ToolSpec>, LoadError> {
        let listed = self.list_tools().await.map_err(LoadError::ListTools)?;
        let mut tools: Vec<ToolSpec> = Vec::with_capacity(listed.len());
        for (tool_name, spec) in listed {
            match spec {
                Err(error) => {
                    tracing::warn!(plugin = %self.name, tool = %tool_name, "tool left out: {error}")
                }
                Ok(spec) if tools.iter().any(|t| t.name == spec.name) => {
                    tracing::warn!(plugin = %self.name, tool = %spec.name, "tool left out: its name is listed twice")
                }
                Ok(spec) => tools.push(spec),
            }
        }
        Ok(tools)
    }

    /// Asks a fresh instance for its tool list, with each description parsed.
    /// Waits for a free call slot rather than failing: loading must not depend
    /// on how busy the server is.
    async fn list_tools(&self) -> Result<Vec<(String, Result<ToolSpec, SpecError>)>, CallFailure> {
        let _slot: Slot = self.all_calls.take().await;
        let code = self.code.load_full();
        let Exports::Wharf(pre) = &code.exports else {
            return Ok(Vec::new());
        };
        let (mut store, instance) = self.new_instance(&code, CallContext::default()).await?;
        let tools = self.export(pre.tools.load(&mut store, &instance))?;
        let cancel = store.data().call_cancel();
        let outcome = guarded(&cancel, self.limits().timeout, async {
            tools.call_list_tools(&mut store).await
        })
        .await;
        let tools = self.finish(&store, outcome)?;
        Ok(tools
            .into_iter()
            .map(|tool| (tool.name.clone(), ToolSpec::from_wit(tool)))
            .collect())
    }

    /// Runs guest work on `store` where this plugin's [`Placement`] says (on
    /// the stdio server, a worker thread once it runs long), and gives the
    /// store back with the outcome.
    async fn placed<R, W>(&self, mut store: Store<HostState>, work: W) -> (Store<HostState>, R)
    where
        W: for<'s> FnOnce(&'s mut Store<HostState>) -> BoxFuture<'s, R> + Send + 'static,
        R: Send + 'static,
    {
        let ticks = store.data().epoch_ticks.clone();
        self.placement
            .run(&ticks, async move {
                let outcome = work(&mut store).await;
                (store, outcome)
            })
            .await
    }

    /// An instance for the call `ctx` that no other call has used: the
    /// plugin's spare if it has one (see [`Instances`]), else one made now.
    async fn fresh_instance(
        &self,
        code: &Code,
        ctx: CallContext,
    ) -> Result<(Store<HostState>, Instance), CallFailure> {
        match code.instances.take_spare(ctx) {
            Ok(spare) => Ok(spare),
            Err(ctx) => self.new_instance(code, ctx).await,
        }
    }

    /// An instance made now, in a new store for the call `ctx`.
    async fn new_instance(
        &self,
        code: &Code,
        ctx: CallContext,
    ) -> Result<(Store<HostState>, Instance), CallFailure> {
        let mut store = code.instances.new_store(ctx)?;
        let instance = code.instances.instantiate(&mut store).await;
        let instance = self.finish(&store, instance)?;
        Ok((store, instance))
    }

    /// An export's functions, found in an instance (a type check, no guest code).
    fn export<T>(&self, found: wasmtime::Result<T>) -> Result<T, CallFailure> {
        found.map_err(|e| CallFailure::Setup(format!("{e:#}")))
    }

    /// Ends a call: [`finish`](Self::finish), then any request the sandbox
    /// refused during the call (a refused request fails the call even if the
    /// plugin handled the refusal). The store is dropped once the answer is out
    /// (see [`Retirer`]), and the plugin's current code makes its next spare.
    fn conclude<T>(
        &self,
        store: Store<HostState>,
        outcome: Guarded<wasmtime::Result<T>>,
    ) -> Result<T, CallFailure> {
        let concluded =
            self.finish(&store, outcome)
                .and_then(|value| match store.data().refusal() {
                    Some(refusal) => Err(refusal),
                    None => Ok(value),
                });
        let refill = self.code.load().instances.refill();
        self.retirer
            .retire(store, refill.map(|refill| move || refill.run()));
        concluded
    }

    /// Fails a call whose output weighs `size` bytes, if that is over the limit.
    fn check_output_size(&self, size: usize) -> Result<(), CallFailure> {
        let limit = self.limits().max_output_bytes;
        if size > limit {
            Err(CallFailure::OutputTooLarge { size, limit })
        } else {
            Ok(())
        }
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
pub(super) enum Guarded<T> {
    Done(T),
    Cancelled,
    TimedOut,
}

/// Runs `work` until it finishes, `cancel` fires, or `timeout` (plus a grace
/// period for host calls) passes; dropping the future stops the guest.
pub(super) async fn guarded<T>(
    cancel: &tokio_util::sync::CancellationToken,
    timeout: Duration,
    work: impl Future<Output = T>,
) -> Guarded<T> {
    let deadline = tokio::time::Instant::now() + timeout + HOST_GRACE;
    let mut work = std::pin::pin!(work);
    if let Some(done) = first_poll(cancel, work.as_mut()).await {
        return done;
    }
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Guarded::Cancelled,
        result = tokio::time::timeout_at(deadline, work) => match result {
            Ok(value) => Guarded::Done(value),
            Err(_) => Guarded::TimedOut,
        },
    }
}

/// [`guarded`] for a call that may wait for the client: the time limit follows
/// the call's clock, which stands still during those waits.
async fn guarded_by_clock<T>(
    cancel: &tokio_util::sync::CancellationToken,
    clock: &CallClock,
    work: impl Future<Output = T>,
) -> Guarded<T> {
    let mut work = std::pin::pin!(work);
    if let Some(done) = first_poll(cancel, work.as_mut()).await {
        return done;
    }
    loop {
        let wake = tokio::time::Instant::from_std(clock.next_check() + HOST_GRACE);
        tokio::select! {
            biased;
            _ = cancel.cancelled() => return Guarded::Cancelled,
            value = &mut work => return Guarded::Done(value),
            _ = tokio::time::sleep_until(wake) => {
                let now = Instant::now();
                if clock.expired(now.checked_sub(HOST_GRACE).unwrap_or(now)) {
                    return Guarded::TimedOut;
                }
            }
        }
    }
}

/// The start of [`guarded`]: a call already cancelled does not start, and
/// `work` is polled once. Guest code that neither waits on the host nor runs
/// into an epoch tick (most calls) is done then, and never registers the timer
/// and the cancellation waiter the rest of the guard needs: a lock and a timer
/// wheel entry each, made and dropped again on every call.
async fn first_poll<F: Future>(
    cancel: &tokio_util::sync::CancellationToken,
    mut work: std::pin::Pin<&mut F>,
) -> Option<Guarded<F::Output>> {
    if cancel.is_cancelled() {
        return Some(Guarded::Cancelled);
    }
    std::future::poll_fn(|cx| {
        std::task::Poll::Ready(match work.as_mut().poll(cx) {
            std::task::Poll::Ready(value) => Some(Guarded::Done(value)),
            // The waker `work` was given is the task's own, so nothing is lost
            // when the guard goes on to poll it again.
            std::task::Poll::Pending => None,
        })
    })
    .await
}

#[cfg(test)]
mod tests;

mod prompts;
mod resources;
