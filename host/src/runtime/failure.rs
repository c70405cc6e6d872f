//! Why a call failed, and how a wasmtime error is turned into a message that says
//! what happened and which limit applied.

use std::time::Duration;

use wasmtime::Trap;

use super::engine::MAX_WASM_STACK;
use super::limits::CallLimits;
use super::state::HostState;

/// Why a call produced no result from the tool itself.
///
/// Every variant but `UnknownTool` is a tool execution error: the call ran (or
/// tried to) and the model should see the message.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CallFailure {
    #[error("the plugin has no tool named `{0}`")]
    UnknownTool(String),
    #[error("the plugin has no prompt named `{0}`")]
    UnknownPrompt(String),
    #[error("the plugin has no resource `{0}`")]
    UnknownResource(String),
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
    #[error("the plugin used up its fuel limit of {0} units and was stopped")]
    OutOfFuel(u64),
    #[error("the plugin crashed: {0}")]
    Crashed(String),
    #[error(
        "the result is {size} bytes, more than the output limit of {limit} bytes, \
         so it was discarded"
    )]
    OutputTooLarge { size: usize, limit: usize },
    #[error(
        "the plugin's HTTP request to `{0}` was refused: that host is not in its \
         allow-list (`[http] allow` in its manifest)"
    )]
    HostDenied(String),
    #[error(
        "the plugin tried to {0}, which was refused: plugins get no sockets \
         (outbound HTTP goes through wasi:http and its manifest's `[http] allow`)"
    )]
    SocketDenied(String),
    #[error(
        "the plugin is already running its limit of {0} concurrent calls \
         (max-concurrent-calls); retry when one has finished"
    )]
    PluginBusy(usize),
    #[error(
        "the server is already running its limit of {0} concurrent calls \
         (--max-concurrent-calls); retry shortly"
    )]
    ServerBusy(usize),
    #[error("the plugin could not be started: {0}")]
    Setup(String),
}

/// Why the guest was interrupted, recorded by the epoch callback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Interrupt {
    Deadline,
    Cancelled,
}

/// The error an interrupted guest traps with, so the cause can be recovered.
#[derive(Debug)]
pub(crate) struct InterruptTrap(pub(crate) Interrupt);

impl std::fmt::Display for InterruptTrap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Interrupt::Deadline => f.write_str("deadline reached"),
            Interrupt::Cancelled => f.write_str("call cancelled"),
        }
    }
}

impl std::error::Error for InterruptTrap {}

/// Names the cause of a failed guest execution: an interruption, a limit, or a
/// crash (with the tail of the guest's stderr, where a panic message lands).
pub(crate) fn classify(
    limits: &CallLimits,
    state: &HostState,
    error: wasmtime::Error,
) -> CallFailure {
    if let Some(interrupt) = error.downcast_ref::<InterruptTrap>() {
        return match interrupt.0 {
            Interrupt::Cancelled => CallFailure::Cancelled,
            Interrupt::Deadline => CallFailure::Timeout(limits.timeout),
        };
    }
    if state.memory_limit_hit() {
        return CallFailure::OutOfMemory(limits.memory_mib());
    }
    let trap = error.downcast_ref::<Trap>();
    if let (Some(Trap::OutOfFuel), Some(fuel)) = (trap, limits.fuel) {
        return CallFailure::OutOfFuel(fuel);
    }
    if let Some(refusal) = state.refusal() {
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
    let stderr = state.stderr_tail();
    if stderr.is_empty() {
        CallFailure::Crashed(what)
    } else {
        CallFailure::Crashed(format!("{what}; it wrote to stderr:\n{stderr}"))
    }
}
