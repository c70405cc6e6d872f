//! Per-call store state: the WASI context, limits, and the `host` interface.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use wasmtime::Trap;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::sockets::SocketAddrUse;
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use super::bindings::wharf::plugin::host::CallerIdentity as WitCallerIdentity;
use super::bindings::wharf::plugin::{host, types::LogLevel};
use super::capture::CapturedOutput;
use super::epoch::EpochUse;
use super::failure::{CallFailure, Interrupt, InterruptTrap};
use super::grants::Grants;
use super::http::{HostAllowList, OutboundHttp};
use super::input::{CallClock, InputBroker, InputOutcome, InputRequest, MAX_KEY_BYTES};
use super::limits::{CallLimits, MAX_WASM_STACK, MemoryCap};
use super::list_changes::{self, ListSignal};
use super::placement::EpochTicks;
use crate::trace_context::SPAN_TARGET;

/// Something a plugin reported during a call, for the layer above to forward.
#[derive(Debug, Clone, PartialEq)]
pub enum CallEvent {
    Progress {
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    Log {
        level: LogLevel,
        message: String,
    },
}

/// The caller's side of one call: how it cancels and where events go.
#[derive(Clone, Default)]
pub struct CallContext {
    /// Cancelled when the client gives up on the call.
    pub cancel: CancellationToken,
    /// Receives progress and log events, if the caller wants them.
    pub events: Option<mpsc::UnboundedSender<CallEvent>>,
    /// Answers the plugin's questions to the client; without one, every
    /// question is `unsupported`.
    pub input: Option<Arc<dyn InputBroker>>,
    /// The call's place in a distributed trace, when traces are exported.
    pub trace: CallTrace,
    /// Who made the request, when an access token said so; the guest sees it
    /// only with the `caller` grant.
    pub caller: Option<Arc<CallerIdentity>>,
}

/// Who made a request, as an OAuth access token names them: what the
/// `host.caller` import gives a plugin (never the token).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CallerIdentity {
    /// The token's `sub`.
    pub subject: Option<String>,
    /// The scopes the token grants, sorted.
    pub scopes: Vec<String>,
}

/// Where a call sits in a distributed trace (OpenTelemetry export on):
/// its plugin's log lines become events of `span`, and its outbound HTTP
/// requests carry `traceparent`, so the trace goes on into the services the
/// plugin uses. Empty when export is off.
#[derive(Clone, Debug, Default)]
pub struct CallTrace {
    pub span: Option<tracing::Span>,
    /// A W3C `traceparent` header value.
    pub traceparent: Option<Arc<str>>,
}

impl std::fmt::Debug for CallContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallContext")
            .field("cancel", &self.cancel)
            .field("events", &self.events)
            .field("input", &self.input.is_some())
            .field("trace", &self.trace)
            .field("caller", &self.caller)
            .finish()
    }
}

/// The sandbox of one plugin, shared by all its calls.
#[derive(Debug)]
pub(crate) struct Sandbox {
    pub(crate) limits: CallLimits,
    pub(crate) grants: Grants,
    pub(crate) http: Arc<HostAllowList>,
    /// The lists the plugin said changed (`lists.changed`), not yet re-listed.
    pub(crate) lists: ListSignal,
}

impl Sandbox {
    pub(crate) fn new(limits: CallLimits, grants: Grants) -> Self {
        let http = Arc::new(grants.http.clone());
        Self {
            limits,
            grants,
            http,
            lists: ListSignal::default(),
        }
    }

    /// The sandbox, its `lists.changed` calls going to `lists`.
    pub(crate) fn with_lists(mut self, lists: ListSignal) -> Self {
        self.lists = lists;
        self
    }
}

/// Everything a store holds for one instance.
pub(crate) struct HostState {
    wasi: WasiCtx,
    table: ResourceTable,
    http: WasiHttpCtx,
    pub(crate) outbound: OutboundHttp,
    pub(crate) limits: MemoryCap,
    plugin: Arc<str>,
    sandbox: Arc<Sandbox>,
    call: CallContext,
    /// The call's deadline, which stands still while the client is asked.
    pub(crate) clock: Arc<CallClock>,
    pub(crate) stdout: CapturedOutput,
    pub(crate) stderr: CapturedOutput,
    /// Socket uses the address check refused (plugins get no sockets).
    socket_attempts: Arc<std::sync::Mutex<Vec<String>>>,
    /// The epoch ticks the guest has seen, which tell whether its call has run
    /// long enough to move to worker threads (see [`Placement`]).
    ///
    /// [`Placement`]: super::placement::Placement
    pub(crate) epoch_ticks: EpochTicks,
    /// Whether this store answers a listing (`list-tools`, ...), where a
    /// `lists.changed` would ask for the listing in progress again.
    listing: bool,
    /// Keeps the epoch clock ticking while this store exists.
    _epoch: EpochUse,
}

/// What a refused socket was for, in words.
fn socket_use(using: SocketAddrUse) -> &'static str {
    match using {
        SocketAddrUse::TcpBind | SocketAddrUse::UdpBind => "bind",
        SocketAddrUse::TcpListen => "listen on",
        SocketAddrUse::TcpAccept => "accept on",
        SocketAddrUse::TcpConnect => "connect to",
        SocketAddrUse::UdpSend => "send to",
        SocketAddrUse::UdpReceive => "receive from",
    }
}

impl HostState {
    /// Default-deny WASI: no files, network, environment or inherited stdio; the
    /// guest's stdout and stderr are kept in memory and logged after the call.
    /// Only what the sandbox grants is added: preopened directories, environment
    /// variables, and HTTP to allowed hosts (through `wasi:http`, never sockets).
    pub(crate) fn new(
        plugin: Arc<str>,
        sandbox: Arc<Sandbox>,
        call: CallContext,
        epoch: EpochUse,
    ) -> Result<Self, std::io::Error> {
        let limits = &sandbox.limits;
        let stdout = CapturedOutput::new(limits.captured_output_bytes);
        let stderr = CapturedOutput::new(limits.captured_output_bytes);
        let socket_attempts = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut builder = WasiCtx::builder();
        builder
            .stdout(stdout.clone())
            .stderr(stderr.clone())
            // Sockets exist so that an attempt reaches the address check, which
            // refuses every address and records the attempt: the call then fails
            // visibly instead of the plugin quietly swallowing the refusal.
            .allow_tcp(true)
            .allow_udp(true)
            .allow_ip_name_lookup(false)
            .socket_addr_check({
                let attempts = socket_attempts.clone();
                move |addr, using| {
                    // A TCP connect first binds an ephemeral port on any interface;
                    // that alone is inert, and letting it through means the refusal
                    // (and the message) is about the connect itself.
                    let implicit_bind = matches!(using, SocketAddrUse::TcpBind)
                        && addr.ip().is_unspecified()
                        && addr.port() == 0;
                    if !implicit_bind && let Ok(mut attempts) = attempts.lock() {
                        attempts.push(format!("{} {addr}", socket_use(using)));
                    }
                    Box::pin(async move { implicit_bind })
                }
            })
            .envs(&sandbox.grants.env);
        for dir in &sandbox.grants.dirs {
            let perms = if dir.writable {
                FsPerms::ReadWrite
            } else {
                FsPerms::ReadOnly
            };
            builder
                .preopened_dir(&dir.host, &dir.guest, perms)
                .map_err(|e| {
                    std::io::Error::other(format!(
                        "the granted directory {} cannot be opened: {e:#}",
                        dir.host.display()
                    ))
                })?;
        }
        let clock = Arc::new(CallClock::new(limits.timeout));
        Ok(Self {
            wasi: builder.build(),
            table: ResourceTable::new(),
            http: WasiHttpCtx::new(),
            outbound: OutboundHttp::new(
                plugin.clone(),
                sandbox.http.clone(),
                call.trace.traceparent.clone(),
            ),
            limits: MemoryCap::new(limits.memory_bytes),
            plugin,
            sandbox,
            call,
            clock,
            stdout,
            stderr,
            socket_attempts,
            epoch_ticks: EpochTicks::default(),
            listing: false,
            _epoch: epoch,
        })
    }

    /// The first network use the sandbox refused in this call: an HTTP request to a
    /// host outside the allow-list, or any socket.
    pub(crate) fn refusal(&self) -> Option<CallFailure> {
        if let Some(host) = self.outbound.denied.first() {
            return Some(CallFailure::HostDenied(host.clone()));
        }
        let socket = self.socket_attempts.lock().ok()?.first().cloned()?;
        Some(CallFailure::SocketDenied(socket))
    }

    /// Names the cause of a failed guest execution in this store: an
    /// interruption, a limit, or a crash (with the tail of the guest's
    /// stderr, where a panic message lands).
    pub(crate) fn failure(&self, error: wasmtime::Error) -> CallFailure {
        let limits = &self.sandbox.limits;
        if let Some(interrupt) = error.downcast_ref::<InterruptTrap>() {
            return match interrupt.0 {
                Interrupt::Cancelled => CallFailure::Cancelled,
                Interrupt::Deadline => CallFailure::Timeout(limits.timeout),
            };
        }
        if self.limits.hit() {
            return CallFailure::OutOfMemory(limits.memory_mib());
        }
        let trap = error.downcast_ref::<Trap>();
        if let (Some(Trap::OutOfFuel), Some(fuel)) = (trap, limits.fuel) {
            return CallFailure::OutOfFuel(fuel);
        }
        if let Some(refusal) = self.refusal() {
            return refusal;
        }
        let what = match trap {
            Some(Trap::UnreachableCodeReached) => {
                "it executed an `unreachable` instruction (a panic or abort)".to_string()
            }
            Some(Trap::StackOverflow) => format!(
                "its call stack overflowed (the WebAssembly stack limit is {} KiB)",
                MAX_WASM_STACK >> 10
            ),
            Some(trap) => format!("wasm trap: {trap}"),
            None => format!("{error:#}"),
        };
        let stderr = self.stderr_tail();
        if stderr.is_empty() {
            CallFailure::Crashed(what)
        } else {
            CallFailure::Crashed(format!("{what}; it wrote to stderr:\n{stderr}"))
        }
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.call.cancel.is_cancelled()
    }

    /// Gives an instance made before its call (a spare) to the call `call`:
    /// its context, a tick count from zero, and a clock from now that counts
    /// the `started_in` the instance's start-up took, as a call that made its
    /// own instance would.
    pub(crate) fn begin_call(&mut self, call: CallContext, started_in: Duration) {
        self.outbound.traceparent = call.trace.traceparent.clone();
        self.call = call;
        let timeout = self.sandbox.limits.timeout.saturating_sub(started_in);
        self.clock = Arc::new(CallClock::new(timeout));
        self.epoch_ticks = EpochTicks::default();
    }

    /// Lets go of the caller's side of the call (its event channel and input
    /// broker), so the caller sees the call end before the store is dropped.
    pub(crate) fn end_call(&mut self) {
        self.call = CallContext::default();
        self.outbound.traceparent = None;
    }

    /// The token that cancels this call.
    pub(crate) fn call_cancel(&self) -> tokio_util::sync::CancellationToken {
        self.call.cancel.clone()
    }

    /// The last lines the guest wrote to stderr (a panic message, typically).
    fn stderr_tail(&self) -> String {
        const KEEP: usize = 2048;
        let (bytes, _) = self.stderr.contents();
        let text = String::from_utf8_lossy(&bytes);
        let text = text.trim();
        let mut start = text.len().saturating_sub(KEEP);
        while !text.is_char_boundary(start) {
            start += 1;
        }
        text[start..].to_string()
    }

    /// Writes what the guest printed to the log, one line per event.
    pub(crate) fn flush_output(&self) {
        for (stream, pipe) in [("stdout", &self.stdout), ("stderr", &self.stderr)] {
            let (bytes, dropped) = pipe.contents();
            for line in String::from_utf8_lossy(&bytes).lines() {
                if line.trim().is_empty() {
                    continue;
                }
                tracing::info!(plugin = %self.plugin, stream, "{line}");
            }
            if dropped > 0 {
                tracing::info!(plugin = %self.plugin, stream, "({dropped} more bytes not logged)");
            }
        }
    }
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for HostState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.outbound,
        }
    }
}

impl HostState {
    /// Marks the store as answering a listing: `lists.changed` is ignored.
    pub(crate) fn mark_listing(&mut self) {
        self.listing = true;
    }
}

impl host::Host for HostState {
    fn log(&mut self, level: LogLevel, message: String) {
        let plugin = &*self.plugin;
        match level {
            LogLevel::Debug => tracing::debug!(plugin, "{message}"),
            LogLevel::Info | LogLevel::Notice => tracing::info!(plugin, "{message}"),
            LogLevel::Warning => tracing::warn!(plugin, "{message}"),
            _ => tracing::error!(plugin, "{message}"),
        }
        if let Some(span) = &self.call.trace.span {
            tracing::event!(
                target: SPAN_TARGET,
                parent: span,
                tracing::Level::INFO,
                { log.severity = level_name(level) },
                "{message}"
            );
        }
        if let Some(events) = &self.call.events {
            let _ = events.send(CallEvent::Log { level, message });
        }
    }

    fn progress(&mut self, progress: f64, total: Option<f64>, message: Option<String>) {
        if let Some(events) = &self.call.events {
            let _ = events.send(CallEvent::Progress {
                progress,
                total,
                message,
            });
        }
    }

    fn is_cancelled(&mut self) -> bool {
        HostState::is_cancelled(self)
    }

    async fn ask(&mut self, key: String, request: host::InputRequest) -> host::InputOutcome {
        let Some(broker) = self.call.input.clone() else {
            return host::InputOutcome::Unsupported;
        };
        if key.is_empty() || key.len() > MAX_KEY_BYTES {
            return host::InputOutcome::Failed(format!(
                "an input key must be 1 to {MAX_KEY_BYTES} bytes long"
            ));
        }
        let request = match InputRequest::from_wit(request) {
            Ok(request) => request,
            Err(why) => return InputOutcome::Failed(why).into_wit(),
        };
        let clock = self.clock.clone();
        let _pause = clock.pause();
        broker.ask(&key, request).await.into_wit()
    }

    fn request_state(&mut self) -> Option<String> {
        self.call.input.as_ref()?.request_state()
    }

    fn set_request_state(&mut self, state: String) {
        if let Some(broker) = &self.call.input {
            broker.set_request_state(state);
        }
    }

    fn config(&mut self, key: String) -> Option<String> {
        self.sandbox
            .grants
            .config
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.clone())
    }

    fn caller(&mut self) -> Option<WitCallerIdentity> {
        if !self.sandbox.grants.caller {
            return None;
        }
        let caller = self.call.caller.as_ref()?;
        Some(WitCallerIdentity {
            subject: caller.subject.clone(),
            scopes: caller.scopes.clone(),
        })
    }
}

impl super::bindings::wharf::plugin::types::Host for HostState {}

/// `lists.changed`: allowed to every plugin (it only makes Wharf ask again
/// what the plugin may say at load); merged and paced by whoever re-lists.
impl super::bindings::wharf::plugin::lists::Host for HostState {
    fn changed(&mut self, which: super::bindings::wharf::plugin::lists::ListKinds) {
        use super::bindings::wharf::plugin::lists::ListKinds;
        let mut bits = 0;
        for (flag, bit) in [
            (ListKinds::TOOLS, list_changes::TOOLS),
            (ListKinds::PROMPTS, list_changes::PROMPTS),
            (ListKinds::RESOURCES, list_changes::RESOURCES),
        ] {
            if which.contains(flag) {
                bits |= bit;
            }
        }
        if self.listing {
            // The listing being answered is the new one already; asking again
            // would loop.
            tracing::debug!(plugin = %self.plugin, "lists.changed ignored during a listing");
            return;
        }
        tracing::debug!(plugin = %self.plugin, which = bits, "the plugin says its lists changed");
        self.sandbox.lists.raise(bits);
    }
}

/// A plugin log level's name (as MCP and syslog spell it), for span events.
fn level_name(level: LogLevel) -> &'static str {
    match level {
        LogLevel::Debug => "debug",
        LogLevel::Info => "info",
        LogLevel::Notice => "notice",
        LogLevel::Warning => "warning",
        LogLevel::Error => "error",
        LogLevel::Critical => "critical",
        LogLevel::Alert => "alert",
        LogLevel::Emergency => "emergency",
    }
}
