//! Per-call store state: the WASI context, limits, and the `host` interface.

use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use wasmtime::component::ResourceTable;
use wasmtime::{ResourceLimiter, StoreLimits};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use super::bindings::wharf::plugin::{host, types::LogLevel};
use super::limits::CallLimits;

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
#[derive(Debug, Clone, Default)]
pub struct CallContext {
    /// Cancelled when the client gives up on the call.
    pub cancel: CancellationToken,
    /// Receives progress and log events, if the caller wants them.
    pub events: Option<mpsc::UnboundedSender<CallEvent>>,
}

/// Everything a store holds for one instance.
pub(crate) struct HostState {
    wasi: WasiCtx,
    table: ResourceTable,
    pub(crate) limits: MemoryCap,
    plugin: Arc<str>,
    config: Arc<[(String, String)]>,
    call: CallContext,
    pub(crate) stdout: MemoryOutputPipe,
    pub(crate) stderr: MemoryOutputPipe,
}

impl HostState {
    /// Default-deny WASI: no files, network, environment or inherited stdio; the
    /// guest's stdout and stderr are kept in memory and logged after the call.
    pub(crate) fn new(
        plugin: Arc<str>,
        config: Arc<[(String, String)]>,
        limits: &CallLimits,
        call: CallContext,
    ) -> Self {
        let stdout = MemoryOutputPipe::new(limits.captured_output_bytes);
        let stderr = MemoryOutputPipe::new(limits.captured_output_bytes);
        let wasi = WasiCtx::builder()
            .stdout(stdout.clone())
            .stderr(stderr.clone())
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .build();
        Self {
            wasi,
            table: ResourceTable::new(),
            limits: MemoryCap::new(limits.memory_bytes),
            plugin,
            config,
            call,
            stdout,
            stderr,
        }
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.call.cancel.is_cancelled()
    }

    /// The token that cancels this call.
    pub(crate) fn call_cancel(&self) -> tokio_util::sync::CancellationToken {
        self.call.cancel.clone()
    }

    /// True if the guest tried to grow its memory past the limit.
    pub(crate) fn memory_limit_hit(&self) -> bool {
        self.limits.hit
    }

    /// The last lines the guest wrote to stderr (a panic message, typically).
    pub(crate) fn stderr_tail(&self) -> String {
        const KEEP: usize = 2048;
        let bytes = self.stderr.contents();
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
            let bytes = pipe.contents();
            for line in String::from_utf8_lossy(&bytes).lines() {
                if line.trim().is_empty() {
                    continue;
                }
                tracing::info!(plugin = %self.plugin, stream, "{line}");
            }
        }
    }
}

/// Store limits that remember whether the memory cap was what stopped the guest,
/// so the error can say so.
pub(crate) struct MemoryCap {
    inner: StoreLimits,
    max_bytes: usize,
    hit: bool,
}

impl MemoryCap {
    fn new(max_bytes: usize) -> Self {
        Self {
            inner: wasmtime::StoreLimitsBuilder::new()
                .memory_size(max_bytes)
                .trap_on_grow_failure(true)
                .build(),
            max_bytes,
            hit: false,
        }
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
        self.inner.memory_growing(current, desired, maximum)
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

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
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

    fn config(&mut self, key: String) -> Option<String> {
        self.config
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.clone())
    }
}

impl super::bindings::wharf::plugin::types::Host for HostState {}
