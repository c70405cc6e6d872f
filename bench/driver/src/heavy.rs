//! Heavy components (a JavaScript and a Python example, megabytes of
//! language runtime each): call latency over stdio with their optimised code
//! cached, and on Winch's quick code in the first seconds after a start with
//! an empty cache (before the optimiser has replaced it). Wharf only: the
//! native baseline has no such plugins.

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::json;

use crate::load::{self, LoadResult, Phases, Workload};
use crate::proc::{ServerCmd, StdioServer};

/// A component and the call it is measured with.
pub struct Heavy<'a> {
    /// `js-strings` or `py-stats`.
    pub label: &'static str,
    pub component: &'a Path,
}

impl Heavy<'_> {
    fn workload(&self) -> Workload {
        match self.label {
            "js-strings" => Workload {
                label: "js-strings",
                tool: "js-strings_slugify",
                arguments: json!({"text": "Hello, Wharf: heavy components!"}),
                traceparent: None,
            },
            _ => Workload {
                label: "py-stats",
                tool: "py-stats_summarize",
                arguments: json!({"values": [4, 1, 3, 2, 5, 9]}),
                traceparent: None,
            },
        }
    }
}

/// What one heavy component measured: optimised, then quick.
pub struct HeavyResult {
    pub label: &'static str,
    pub optimized: LoadResult,
    pub quick: LoadResult,
}

/// Measures `heavy` with `wharf` (its binary and flags), in `work`.
pub fn measure(
    wharf: &ServerCmd,
    heavy: &Heavy,
    work: &Path,
    phases: Phases,
) -> Result<HeavyResult> {
    let folder = work.join(format!("heavy-{}", heavy.label));
    let _ = std::fs::remove_dir_all(&folder);
    let plugins = folder.join("plugins");
    std::fs::create_dir_all(&plugins)?;
    std::fs::copy(
        heavy.component,
        plugins.join(format!("{}.wasm", heavy.label)),
    )
    .with_context(|| format!("copying {}", heavy.component.display()))?;
    let server = |cache: &Path| ServerCmd {
        label: "wharf",
        program: wharf.program.clone(),
        args: vec![
            "serve".into(),
            "--plugins".into(),
            plugins.display().to_string(),
            "--cache-dir".into(),
            cache.display().to_string(),
        ],
    };
    let workload = heavy.workload();

    // Quick code: an empty cache, measured at once (the optimiser waits in
    // the idle class; a short window stays on the quick code).
    let quick_cache = folder.join("quick-cache");
    let mut quick_server = StdioServer::start(&server(&quick_cache), None)?;
    let short = Phases {
        warmup: phases.warmup.min(std::time::Duration::from_millis(300)),
        measure: phases.measure.min(std::time::Duration::from_secs(2)),
    };
    let [quick] = load::stdio_run([&mut quick_server], &workload, short)
        .with_context(|| format!("{} on quick code", heavy.label))?;
    drop(quick_server);

    // Optimised code: compiled into the cache first.
    let cache = folder.join("cache");
    server(&cache)
        .precompile(&cache)
        .with_context(|| format!("precompiling {}", heavy.label))?;
    let mut optimized_server = StdioServer::start(&server(&cache), None)?;
    let [optimized] = load::stdio_run([&mut optimized_server], &workload, phases)
        .with_context(|| format!("{} on optimised code", heavy.label))?;
    Ok(HeavyResult {
        label: heavy.label,
        optimized,
        quick,
    })
}

impl HeavyResult {
    pub fn to_json(&self) -> serde_json::Value {
        json!({"component": self.label, "optimized": self.optimized, "quick": self.quick})
    }
}

/// The heavy components' part of the table.
pub fn table(results: &[HeavyResult]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    if results.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "\nheavy components over stdio (Wharf only): optimised code cached | quick code, empty cache"
    );
    let _ = writeln!(
        out,
        "{:<11} | {:>8} {:>8} {:>8} {:>8} | {:>8} {:>8} {:>8}",
        "component", "p50", "p99", "cpu/call", "cpu/wall", "p50", "cpu/call", "cpu/wall"
    );
    for r in results {
        let (o, q) = (&r.optimized, &r.quick);
        let _ = writeln!(
            out,
            "{:<11} | {:>6.0}us {:>6.0}us {:>6.0}us {:>8.2} | {:>6.0}us {:>6.0}us {:>8.2}",
            r.label,
            o.p50_us,
            o.p99_us,
            o.server_cpu_us,
            o.server_cpu_us / o.mean_us,
            q.p50_us,
            q.server_cpu_us,
            q.server_cpu_us / q.mean_us,
        );
    }
    out
}

/// The goals of issue 35 for heavy components: p50 at most 0.75 ms with
/// optimised code, server CPU per call at most 1.2x the call's wall time.
pub fn goals(results: &[HeavyResult]) -> Vec<crate::report::Goal> {
    let mut goals = Vec::new();
    for r in results {
        let (p50_goal, cpu_goal) = match r.label {
            "js-strings" => (
                "JavaScript component p50, optimised (ms)",
                "JavaScript component CPU per call / wall",
            ),
            _ => (
                "Python component p50, optimised (ms)",
                "Python component CPU per call / wall",
            ),
        };
        let p50_ms = r.optimized.p50_us / 1000.0;
        goals.push(crate::report::Goal {
            goal: p50_goal,
            measured: p50_ms,
            target: 0.75,
            unit: "ms (at most)",
            met: p50_ms <= 0.75,
        });
        let ratio = r.optimized.server_cpu_us / r.optimized.mean_us;
        goals.push(crate::report::Goal {
            goal: cpu_goal,
            measured: ratio,
            target: 1.2,
            unit: "x (at most)",
            met: ratio <= 1.2,
        });
    }
    goals
}
