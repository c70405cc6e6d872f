//! Everything that can go wrong in the runtime, each as a type a caller can
//! match on: setting the runtime up ([`RuntimeError`]), loading a plugin
//! ([`LoadError`]), and a call ([`CallFailure`]). A leaf: the messages say which
//! limit applied; `state::HostState::failure` decides which failure a trapped
//! call gets.

use std::time::Duration;

/// Why a call produced no result from the tool itself.
///
/// Every variant but `UnknownTool` and `ArgumentsTooLarge` is a tool execution
/// error: the call ran (or tried to) and the model should see the message.
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
    /// A plain component's arguments would take more host memory once
    /// converted than the plugin's memory limit (a protocol error, -32602).
    #[error(
        "arguments too large: converted for the plugin they would take more than \
         {limit} bytes of host memory (its memory limit); send less"
    )]
    ArgumentsTooLarge { limit: usize },
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

impl CallFailure {
    /// The limit that stopped the call, if one did, by the name of its
    /// setting (`runtime/limits.rs`): `timeout`, `memory`, `fuel`,
    /// `output-size`, `arguments-size`, `plugin-concurrency`,
    /// `server-concurrency`. For audit lines and trace attributes.
    pub fn limit(&self) -> Option<&'static str> {
        match self {
            Self::Timeout(_) => Some("timeout"),
            Self::OutOfMemory(_) => Some("memory"),
            Self::OutOfFuel(_) => Some("fuel"),
            Self::OutputTooLarge { .. } => Some("output-size"),
            Self::ArgumentsTooLarge { .. } => Some("arguments-size"),
            Self::PluginBusy(_) => Some("plugin-concurrency"),
            Self::ServerBusy(_) => Some("server-concurrency"),
            Self::UnknownTool(_)
            | Self::UnknownPrompt(_)
            | Self::UnknownResource(_)
            | Self::InvalidArguments(_)
            | Self::Failed(_)
            | Self::Cancelled
            | Self::Crashed(_)
            | Self::HostDenied(_)
            | Self::SocketDenied(_)
            | Self::Setup(_) => None,
        }
    }
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

/// Failure to set up the runtime itself.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("could not create the WebAssembly engine: {0}")]
    Engine(String),
}

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

/// An exported function of a plain component that is not a tool, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedFunction {
    /// `f` or `ns:pkg/iface@1.0.0#f`.
    pub function: String,
    pub reason: String,
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::CallFailure;

    #[test]
    fn a_failure_names_the_limit_that_stopped_the_call() {
        let cases = [
            (
                CallFailure::Timeout(Duration::from_secs(1)),
                Some("timeout"),
            ),
            (CallFailure::OutOfMemory(1), Some("memory")),
            (CallFailure::OutOfFuel(1), Some("fuel")),
            (
                CallFailure::OutputTooLarge { size: 2, limit: 1 },
                Some("output-size"),
            ),
            (
                CallFailure::ArgumentsTooLarge { limit: 1 },
                Some("arguments-size"),
            ),
            (CallFailure::PluginBusy(1), Some("plugin-concurrency")),
            (CallFailure::ServerBusy(1), Some("server-concurrency")),
            (CallFailure::Crashed("trap".into()), None),
            (CallFailure::Cancelled, None),
        ];
        for (failure, limit) in cases {
            assert_eq!(failure.limit(), limit, "{failure}");
        }
    }
}
