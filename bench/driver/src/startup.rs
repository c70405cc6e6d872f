//! Cold start (spawn to the first `tools/list` answer) and idle memory, with
//! 1, 20 and 100 plugins, an empty and a warm compile cache, and 1,000 with a
//! warm one.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde::Serialize;

use crate::load::list_body;
use crate::proc::{ServerCmd, StdioServer, fill_plugin_dir, rss_kib};

/// Start-up of one configuration.
#[derive(Debug, Clone, Serialize)]
pub struct StartupResult {
    pub plugins: usize,
    /// `empty` or `warm`.
    pub cache: &'static str,
    pub median_ms: f64,
    pub samples_ms: Vec<f64>,
    /// RSS once started and idle (warm cache only), KiB.
    pub idle_rss_kib: Option<u64>,
}

/// The plugin counts measured: 1,000 with a warm cache only.
pub const PLUGIN_COUNTS: [usize; 4] = [1, 20, 100, 1000];

/// How long a started server is left alone before its idle RSS is read.
const SETTLE: Duration = Duration::from_millis(500);

/// Time from spawn to the first `tools/list` response line, and the number of
/// tools listed. The request is written at once: the server reads it when it
/// is ready to serve.
pub fn time_to_list(server: &ServerCmd) -> Result<(Duration, usize, StdioServer)> {
    let started = Instant::now();
    let mut running = StdioServer::start(server, None)?;
    let mut request = list_body(1);
    request.push(b'\n');
    let reply: serde_json::Value = serde_json::from_str(running.round_trip(&request)?)?;
    let took = started.elapsed();
    let Some(tools) = reply["result"]["tools"].as_array() else {
        bail!("tools/list failed: {reply}");
    };
    Ok((took, tools.len(), running))
}

/// Wharf with `count` distinct copies of `component`, each configuration
/// `runs` times (empty cache: a fresh cache folder each run).
pub fn wharf_startup(
    wharf: &ServerCmd,
    component: &[u8],
    work: &Path,
    count: usize,
    runs_empty: usize,
    runs_warm: usize,
) -> Result<Vec<StartupResult>> {
    let plugins = work.join(format!("startup-{count}"));
    let _ = std::fs::remove_dir_all(&plugins);
    fill_plugin_dir(&plugins, component, "echo", count)?;
    let warm_cache = work.join(format!("startup-{count}-cache"));
    let _ = std::fs::remove_dir_all(&warm_cache);
    let with = |cache: &Path| ServerCmd {
        label: wharf.label,
        program: wharf.program.clone(),
        args: vec![
            "serve".into(),
            "--plugins".into(),
            plugins.display().to_string(),
            "--cache-dir".into(),
            cache.display().to_string(),
        ],
    };
    let mut out = Vec::new();

    let mut empty = Vec::new();
    for run in 0..runs_empty {
        let cache = work.join(format!("startup-{count}-empty-{run}"));
        let _ = std::fs::remove_dir_all(&cache);
        let (took, tools, _server) = time_to_list(&with(&cache))?;
        check_tools(tools, count)?;
        empty.push(took);
        drop(_server);
        let _ = std::fs::remove_dir_all(&cache);
    }
    if !empty.is_empty() {
        out.push(summarise(count, "empty", &empty, None));
    }

    // Fill the warm cache once with optimised code, then measure.
    with(&warm_cache)
        .precompile(&warm_cache)
        .context("filling the warm cache")?;
    let mut warm = Vec::new();
    let mut idle = Vec::new();
    for _ in 0..runs_warm {
        let (took, tools, server) = time_to_list(&with(&warm_cache))?;
        check_tools(tools, count)?;
        warm.push(took);
        std::thread::sleep(SETTLE);
        idle.push(rss_kib(server.pid())?);
    }
    idle.sort_unstable();
    out.push(summarise(
        count,
        "warm",
        &warm,
        idle.get(idle.len() / 2).copied(),
    ));
    let _ = std::fs::remove_dir_all(&plugins);
    let _ = std::fs::remove_dir_all(&warm_cache);
    Ok(out)
}

/// The baseline's start-up and idle RSS (it has no plugins to load).
pub fn baseline_startup(baseline: &ServerCmd, runs: usize) -> Result<StartupResult> {
    let mut times = Vec::new();
    let mut idle = Vec::new();
    for _ in 0..runs {
        let (took, tools, server) = time_to_list(baseline)?;
        check_tools(tools, 2)?;
        times.push(took);
        std::thread::sleep(SETTLE);
        idle.push(rss_kib(server.pid())?);
    }
    idle.sort_unstable();
    Ok(summarise(
        0,
        "none",
        &times,
        idle.get(idle.len() / 2).copied(),
    ))
}

fn check_tools(listed: usize, expected: usize) -> Result<()> {
    // Wharf pages at 100 tools by default: 100 plugins of one tool fill a page.
    if listed != expected.min(100) {
        bail!("expected {expected} tools, the server listed {listed}");
    }
    Ok(())
}

fn summarise(
    plugins: usize,
    cache: &'static str,
    times: &[Duration],
    idle_rss_kib: Option<u64>,
) -> StartupResult {
    let mut ms: Vec<f64> = times.iter().map(|t| t.as_secs_f64() * 1e3).collect();
    ms.sort_by(|a, b| a.total_cmp(b));
    StartupResult {
        plugins,
        cache,
        median_ms: ms.get(ms.len() / 2).copied().unwrap_or(f64::NAN),
        samples_ms: ms,
        idle_rss_kib,
    }
}
