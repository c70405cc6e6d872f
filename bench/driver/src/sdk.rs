//! The trivial stdio case through a real client: the official MCP Python SDK
//! (`bench/sdk/stdio_calls.py`), one call at a time with a legacy `initialize`
//! session, as most agents and clients connect today.
//!
//! The driver's own stdio client costs a few microseconds per round trip, so
//! the ratio it measures is the servers' alone. A client written in Python
//! spends far more per call than either server; this case shows what a user
//! of such a client sees.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use serde_json::json;

use crate::load::{LoadResult, Phases, Workload};
use crate::proc::ServerCmd;

/// Times each server takes its turn; their samples are pooled, so that drift
/// on the machine during the run falls on both.
const TURNS: usize = 2;

/// What the script prints.
#[derive(Deserialize, Default)]
struct Measured {
    nanos: Vec<u64>,
    window_ns: u64,
    server_cpu_ns: u64,
}

/// Runs `workload` through the SDK's stdio client against each of `servers`,
/// in turns, with the `python` that has the SDK installed.
pub fn stdio_runs(
    python: &Path,
    script: &Path,
    servers: [&ServerCmd; 2],
    workload: &Workload,
    phases: Phases,
) -> Result<[LoadResult; 2]> {
    let mut pooled: [Measured; 2] = Default::default();
    // Each turn is half the phases of a driver case, so the case takes as long.
    let turn = Phases {
        warmup: phases.warmup / TURNS as u32,
        measure: phases.measure / TURNS as u32,
    };
    for _ in 0..TURNS {
        for (server, pool) in servers.iter().zip(pooled.iter_mut()) {
            let measured = run_once(python, script, server, workload, turn)
                .with_context(|| format!("{} through the Python SDK", server.label))?;
            pool.nanos.extend(measured.nanos);
            pool.window_ns += measured.window_ns;
            pool.server_cpu_ns += measured.server_cpu_ns;
        }
    }
    Ok(pooled.map(|m| {
        LoadResult::from_samples(
            m.nanos,
            0,
            Duration::from_nanos(m.window_ns),
            Duration::from_nanos(m.server_cpu_ns),
        )
    }))
}

fn run_once(
    python: &Path,
    script: &Path,
    server: &ServerCmd,
    workload: &Workload,
    phases: Phases,
) -> Result<Measured> {
    let spec = json!({
        "command": server.program,
        "args": server.args,
        "mode": "legacy",
        "tool": workload.tool,
        "arguments": workload.arguments,
        "warmup_s": phases.warmup.as_secs_f64(),
        "measure_s": phases.measure.as_secs_f64(),
    });
    let output = Command::new(python)
        .arg(script)
        .arg(spec.to_string())
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running {}", python.display()))?;
    if !output.status.success() {
        bail!(
            "{} failed ({}): {}",
            script.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let measured: Measured = serde_json::from_slice(&output.stdout)
        .with_context(|| format!("reading what {} printed", script.display()))?;
    if measured.nanos.is_empty() {
        bail!("no call finished in the measured window");
    }
    Ok(measured)
}
