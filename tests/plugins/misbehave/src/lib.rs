//! A deliberately badly behaved plugin, for Wharf's sandbox tests. Not an example.
//!
//! Each tool misbehaves in one precise way (traps, panics, spins, allocates, pokes at
//! the filesystem and environment) so that the host's tests can check that a call
//! fails cleanly, that limits hold and that nothing leaks through the sandbox. Never
//! load it in a real deployment.

use std::hint::black_box;

use schemars::JsonSchema;
use serde::Deserialize;
use wharf_sdk::{Tool, ToolError, ToolOutput, Toolbox, host};

/// Arguments of `alloc`.
#[derive(Deserialize, JsonSchema)]
struct AllocArgs {
    /// How many MiB to allocate and touch.
    mib: u32,
}

/// Arguments of `config`.
#[derive(Deserialize, JsonSchema)]
struct ConfigArgs {
    /// The configuration key to look up.
    key: String,
}

/// Arguments of `read_file`.
#[derive(Deserialize, JsonSchema)]
struct ReadFileArgs {
    /// The path to read.
    path: String,
}

/// Arguments of `env`.
#[derive(Deserialize, JsonSchema)]
struct EnvArgs {
    /// The environment variable to read.
    name: String,
}

/// Executes the WebAssembly `unreachable` instruction.
fn trap() -> ! {
    #[cfg(target_arch = "wasm32")]
    core::arch::wasm32::unreachable();
    #[cfg(not(target_arch = "wasm32"))]
    std::process::abort();
}

/// Loops forever without calling the host, so only the host's interruption stops it.
fn spin() -> ! {
    let mut turns: u64 = 0;
    loop {
        turns = black_box(turns.wrapping_add(1));
    }
}

/// Loops until the host says the call is cancelled.
fn wait_cancelled() -> Result<ToolOutput, ToolError> {
    let mut turns: u64 = 0;
    while !host::is_cancelled() {
        turns = black_box(turns.wrapping_add(1));
    }
    Ok(ToolOutput::text(format!("cancelled after {turns} checks")))
}

/// Allocates `mib` MiB and writes to every page of it. An allocation the host refuses
/// aborts the instance (a trap), as in any Rust program.
fn alloc(args: AllocArgs) -> Result<ToolOutput, ToolError> {
    const PAGE: usize = 4096;
    let bytes = (args.mib as usize)
        .checked_mul(1 << 20)
        .expect("the size overflows the address space");
    let mut block = vec![0u8; bytes];
    for at in (0..bytes).step_by(PAGE) {
        block[at] = 1;
    }
    let touched = black_box(&block).iter().step_by(PAGE).count();
    Ok(ToolOutput::text(format!(
        "allocated {} MiB ({touched} pages touched)",
        args.mib
    )))
}

/// Logs at every level and reports progress three times.
fn log() -> Result<ToolOutput, ToolError> {
    use host::Level;
    for level in [
        Level::Debug,
        Level::Info,
        Level::Notice,
        Level::Warning,
        Level::Error,
        Level::Critical,
        Level::Alert,
        Level::Emergency,
    ] {
        host::log(level, &format!("misbehave logs at {level}"));
    }
    for step in 1..=3 {
        host::progress(
            f64::from(step),
            Some(3.0),
            Some(&format!("step {step} of 3")),
        );
    }
    Ok(ToolOutput::text("logged"))
}

fn toolbox() -> Toolbox {
    Toolbox::new()
        .with(
            Tool::new("trap", |()| trap())
                .description("Executes the WebAssembly `unreachable` instruction."),
        )
        .with(Tool::new("panic", |()| panic!("deliberate panic")).description("Panics."))
        .with(
            Tool::new("fail", |()| Err(ToolError::failed("deliberate failure")))
                .description("Returns the tool error `failed`."),
        )
        .with(
            Tool::new("error_result", |()| {
                Ok(ToolOutput::error("deliberate tool error"))
            })
            .description("Returns a result with is-error set."),
        )
        .with(Tool::new("spin", |()| spin()).description("Loops forever, checking nothing."))
        .with(
            Tool::new("wait_cancelled", |()| wait_cancelled())
                .description("Loops until the host reports the call cancelled."),
        )
        .with(Tool::new("alloc", alloc).description("Allocates and touches `mib` MiB."))
        .with(
            Tool::new("log", |()| log())
                .description("Logs at every level and reports progress 3 times."),
        )
        .with(
            Tool::new("config", |args: ConfigArgs| {
                Ok(ToolOutput::text(
                    host::config(&args.key).unwrap_or_else(|| "(none)".into()),
                ))
            })
            .description("Returns the configuration value `key`, or `(none)`."),
        )
        .with(
            Tool::new("read_file", |args: ReadFileArgs| {
                Ok(ToolOutput::text(
                    std::fs::read_to_string(&args.path).unwrap_or_else(|error| error.to_string()),
                ))
            })
            .description("Returns the content of the file `path`, or the error text."),
        )
        .with(
            Tool::new("env", |args: EnvArgs| {
                Ok(ToolOutput::text(
                    std::env::var(&args.name).unwrap_or_else(|error| error.to_string()),
                ))
            })
            .description("Returns the environment variable `name`, or the error text."),
        )
}

wharf_sdk::export_plugin!(toolbox);
