//! The results of one run: the printed table, `results.json`, the plot's data,
//! and the issue's goals checked against ratios measured in the same run.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;
use serde_json::{Value, json};

use crate::load::LoadResult;
use crate::otlp::TracingCost;
use crate::plot::Panel;
use crate::startup::StartupResult;

mod table;

/// One latency/throughput measurement.
#[derive(Debug, Clone, Serialize)]
pub struct Case {
    pub transport: &'static str,
    pub clients: usize,
    pub tool: &'static str,
    pub server: &'static str,
    #[serde(flatten)]
    pub result: LoadResult,
}

impl Case {
    /// How the table names the transport: `stdio`, `http/64`, `legacy/64`.
    pub fn label(&self) -> String {
        match self.transport {
            "http" => format!("http/{}", self.clients),
            "http-legacy" => format!("legacy/{}", self.clients),
            other => other.to_string(),
        }
    }

    pub fn new(
        transport: &'static str,
        clients: usize,
        tool: &'static str,
        server: &'static str,
        result: LoadResult,
    ) -> Self {
        Self {
            transport,
            clients,
            tool,
            server,
            result,
        }
    }
}

/// The criterion benchmarks of the overhead split (`host/benches/overhead.rs`),
/// by id, with what each measures.
const OVERHEAD: &[(&str, &str, &str)] = &[
    (
        "json_parse_request",
        "parse",
        "JSON: parse a tools/call request (Wharf's screen)",
    ),
    (
        "json_parse_request_rmcp",
        "parse rmcp",
        "JSON: rmcp's own parse of the same line",
    ),
    (
        "dispatch",
        "dispatch",
        "dispatch: snapshot, lookup, argument schema check",
    ),
    (
        "instantiate_bare",
        "inst. bare",
        "instance creation: wasmtime alone (pooling)",
    ),
    (
        "call_unknown_tool",
        "inst.+setup",
        "instance + Wharf store/WASI + guest entry",
    ),
    (
        "call_echo",
        "call echo",
        "Plugin::call of echo (instance + guest)",
    ),
    (
        "result_conversion",
        "convert",
        "serialisation: CallOutput to MCP result",
    ),
    (
        "json_serialise_result",
        "serialise",
        "JSON: serialise the tools/call response",
    ),
];

/// A goal of issue 9 and whether this run met it.
#[derive(Debug, Clone, Serialize)]
pub struct Goal {
    pub goal: &'static str,
    pub measured: f64,
    pub target: f64,
    pub unit: &'static str,
    pub met: bool,
}

pub struct Report {
    quick: bool,
    prime: u32,
    pub latency: Vec<Case>,
    pub load_rss_kib: BTreeMap<String, u64>,
    pub startup: Vec<StartupResult>,
    pub baseline_startup: Option<StartupResult>,
    overhead: Vec<(&'static str, &'static str, f64)>,
    reload: Option<Value>,
    /// Export off against on (`otlp.rs`), if it ran.
    pub tracing: Option<TracingCost>,
    /// The heavy components (`heavy.rs`), if they ran.
    pub heavy: Vec<crate::heavy::HeavyResult>,
    goals: Vec<Goal>,
    meta: BTreeMap<&'static str, Value>,
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn command_output(program: &str, args: &[&str]) -> String {
    std::process::Command::new(program)
        .args(args)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

impl Report {
    pub fn new(quick: bool, prime: u32) -> Self {
        let mut meta = BTreeMap::new();
        meta.insert(
            "date",
            json!(command_output("date", &["-u", "+%Y-%m-%d %H:%M UTC"])),
        );
        meta.insert(
            "cpus",
            json!(std::thread::available_parallelism().map_or(0, |n| n.get())),
        );
        meta.insert(
            "cpu_model",
            json!(
                std::fs::read_to_string("/proc/cpuinfo")
                    .ok()
                    .and_then(|s| s.lines().find_map(|l| l
                        .strip_prefix("model name")
                        .map(|v| v.trim_start_matches([' ', '\t', ':']).to_string())))
                    .unwrap_or_default()
            ),
        );
        meta.insert("kernel", json!(command_output("uname", &["-r"])));
        meta.insert(
            "git_rev",
            json!(command_output("git", &["rev-parse", "--short", "HEAD"])),
        );
        meta.insert("loadavg_start", json!(loadavg()));
        meta.insert("quick", json!(quick));
        meta.insert("prime_n", json!(prime));
        Self {
            quick,
            prime,
            latency: Vec::new(),
            load_rss_kib: BTreeMap::new(),
            startup: Vec::new(),
            baseline_startup: None,
            overhead: Vec::new(),
            reload: None,
            tracing: None,
            heavy: Vec::new(),
            goals: Vec::new(),
            meta,
        }
    }

    /// Reads criterion's median estimate of each overhead benchmark, if it ran.
    pub fn read_overhead(&mut self, criterion: &Path) {
        for (id, _, what) in OVERHEAD {
            let path = criterion
                .join("overhead")
                .join(id)
                .join("new/estimates.json");
            let median = std::fs::read_to_string(&path)
                .ok()
                .and_then(|text| serde_json::from_str::<Value>(&text).ok())
                .and_then(|v| v["median"]["point_estimate"].as_f64());
            match median {
                Some(ns) => self.overhead.push((id, what, ns)),
                None => eprintln!("no criterion result at {}", path.display()),
            }
        }
    }

    /// Reads `reload.json` written by `host/benches/reload.rs`, if it ran.
    pub fn read_reload(&mut self, path: &Path) {
        self.reload = std::fs::read_to_string(path)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok());
        if self.reload.is_none() {
            eprintln!("no reload results at {}", path.display());
        }
    }

    fn find(
        &self,
        transport: &str,
        clients: usize,
        tool: &str,
        server: &str,
    ) -> Option<&LoadResult> {
        self.latency
            .iter()
            .find(|c| {
                c.transport == transport
                    && c.clients == clients
                    && c.tool == tool
                    && c.server == server
            })
            .map(|c| &c.result)
    }

    fn reload_p50(&self, case: &str) -> Option<f64> {
        self.reload.as_ref()?.get(case)?.get("p50_ms")?.as_f64()
    }

    /// Closes the run: the load average at the end and the goals.
    pub fn finish(&mut self) {
        self.meta.insert("loadavg_end", json!(loadavg()));
        let mut goals = crate::heavy::goals(&self.heavy);
        goals.extend(crate::pipelined::goals(|transport, server| {
            self.find(transport, 1, "trivial", server).cloned()
        }));
        if let (Some(w), Some(b)) = (
            self.find("stdio", 1, "trivial", "wharf"),
            self.find("stdio", 1, "trivial", "baseline"),
        ) {
            let ratio = w.p50_us / b.p50_us;
            goals.push(Goal {
                goal: "trivial tool p50 over stdio vs baseline",
                measured: ratio,
                target: 1.3,
                unit: "x (at most)",
                met: ratio <= 1.3,
            });
        }
        if let (Some(w), Some(b)) = (
            self.find("http", 64, "trivial", "wharf"),
            self.find("http", 64, "trivial", "baseline"),
        ) {
            let ratio = w.throughput_rps / b.throughput_rps;
            goals.push(Goal {
                goal: "HTTP throughput at 64 clients vs baseline (trivial tool)",
                measured: ratio,
                target: 0.8,
                unit: "x (at least)",
                met: ratio >= 0.8,
            });
        }
        if let Some(warm) = self
            .startup
            .iter()
            .find(|s| s.plugins == 100 && s.cache == "warm")
        {
            goals.push(Goal {
                goal: "cold start, 100 plugins, warm cache",
                measured: warm.median_ms,
                target: 300.0,
                unit: "ms (under)",
                met: warm.median_ms < 300.0,
            });
        }
        goals.extend(self.startup_goals());
        for (case, goal) in [
            (
                "new component (compile): callable",
                "reload, new bytes (compiled), to first call",
            ),
            (
                "known component (cache): callable",
                "reload, known bytes (cache hit), to first call",
            ),
        ] {
            if let Some(ms) = self.reload_p50(case) {
                goals.push(Goal {
                    goal,
                    measured: ms,
                    target: 250.0,
                    unit: "ms (under)",
                    met: ms < 250.0,
                });
            }
        }
        self.goals = goals;
    }

    pub fn heading(&self) -> String {
        format!(
            "Wharf vs native rmcp baseline, {} ({} CPUs, load {} -> {}){}",
            self.meta["date"].as_str().unwrap_or(""),
            self.meta["cpus"],
            self.meta["loadavg_start"].as_str().unwrap_or(""),
            self.meta["loadavg_end"].as_str().unwrap_or(""),
            if self.quick { ", quick run" } else { "" }
        )
    }

    fn overhead_ns(&self, id: &str) -> Option<f64> {
        self.overhead
            .iter()
            .find(|(i, _, _)| *i == id)
            .map(|(_, _, ns)| *ns)
    }

    fn guest_execution_ns(&self) -> Option<f64> {
        Some(self.overhead_ns("call_echo")? - self.overhead_ns("call_unknown_tool")?)
    }

    /// Issue 35's start-up and memory goals: one cached plugin within 3x the
    /// baseline's start, idle RSS at most 12 MB with one plugin and at most
    /// 1 MiB more per plugin, and 1,000 cached plugins listed within a second.
    fn startup_goals(&self) -> Vec<Goal> {
        let warm = |n: usize| {
            self.startup
                .iter()
                .find(|s| s.plugins == n && s.cache == "warm")
        };
        let mut goals = Vec::new();
        if let (Some(one), Some(base)) = (warm(1), &self.baseline_startup) {
            let ratio = one.median_ms / base.median_ms;
            goals.push(Goal {
                goal: "start to first tools/list, 1 cached plugin vs baseline",
                measured: ratio,
                target: 3.0,
                unit: "x (at most)",
                met: ratio <= 3.0,
            });
        }
        if let Some(kib) = warm(1).and_then(|s| s.idle_rss_kib) {
            let mb = kib as f64 * 1024.0 / 1e6;
            goals.push(Goal {
                goal: "idle RSS, 1 small plugin",
                measured: mb,
                target: 12.0,
                unit: "MB (at most)",
                met: mb <= 12.0,
            });
        }
        if let Some(slope) = self.rss_per_plugin_kib() {
            goals.push(Goal {
                goal: "RSS per further small plugin (1 -> 100)",
                measured: slope,
                target: 1024.0,
                unit: "KiB (at most)",
                met: slope <= 1024.0,
            });
        }
        if let Some(thousand) = warm(1000) {
            goals.push(Goal {
                goal: "start to first tools/list, 1,000 cached plugins",
                measured: thousand.median_ms,
                target: 1000.0,
                unit: "ms (under)",
                met: thousand.median_ms < 1000.0,
            });
        }
        goals
    }

    fn rss_per_plugin_kib(&self) -> Option<f64> {
        let rss = |n: usize| {
            self.startup
                .iter()
                .find(|s| s.plugins == n && s.cache == "warm")?
                .idle_rss_kib
        };
        Some((rss(100)? as f64 - rss(1)? as f64) / 99.0)
    }

    pub fn to_json(&self) -> Value {
        json!({
            "meta": self.meta,
            "latency": self.latency,
            "startup": self.startup,
            "baseline_startup": self.baseline_startup,
            "memory": {
                "idle_rss_kib": self.startup.iter().filter(|s| s.cache == "warm")
                    .map(|s| (s.plugins.to_string(), s.idle_rss_kib)).collect::<BTreeMap<_, _>>(),
                "baseline_idle_rss_kib": self.baseline_startup.as_ref().and_then(|s| s.idle_rss_kib),
                "rss_per_plugin_kib": self.rss_per_plugin_kib(),
                "peak_rss_under_load_kib": self.load_rss_kib,
            },
            "reload": self.reload,
            "tracing": self.tracing,
            "heavy": self.heavy.iter().map(crate::heavy::HeavyResult::to_json).collect::<Vec<_>>(),
            "overhead_ns": self.overhead.iter().map(|(id, what, ns)| (id.to_string(), json!({"median_ns": ns, "what": what}))).collect::<BTreeMap<_, _>>(),
            "guest_execution_echo_ns": self.guest_execution_ns(),
            "goals": self.goals,
        })
    }

    pub fn panels(&self) -> Vec<Panel> {
        let cases: Vec<&Case> = self
            .latency
            .iter()
            .filter(|c| c.server == "wharf")
            .collect();
        let name = |c: &Case| {
            let t = c.label().replace('/', "");
            format!("{t} {}", if c.tool == "trivial" { "echo" } else { "prime" })
        };
        let pair = |pick: fn(&LoadResult) -> f64| -> (Vec<f64>, Vec<f64>) {
            cases
                .iter()
                .map(|c| {
                    let b = self.find(c.transport, c.clients, c.tool, "baseline");
                    (pick(&c.result), b.map_or(f64::NAN, pick))
                })
                .unzip()
        };
        let (w50, b50) = pair(|r| r.p50_us);
        let (wrps, brps) = pair(|r| r.throughput_rps);
        let categories: Vec<String> = cases.iter().map(|c| name(c)).collect();
        let counts = [1usize, 20, 100];
        let startup = |cache: &str| -> Vec<f64> {
            counts
                .iter()
                .map(|&n| {
                    self.startup
                        .iter()
                        .find(|s| s.plugins == n && s.cache == cache)
                        .map_or(f64::NAN, |s| s.median_ms)
                })
                .collect()
        };
        let mut overhead: Vec<(String, f64)> = self
            .overhead
            .iter()
            .map(|(id, _, ns)| {
                let short = OVERHEAD
                    .iter()
                    .find(|(i, _, _)| i == id)
                    .map_or(*id, |o| o.1);
                (short.to_string(), ns / 1e3)
            })
            .collect();
        if let Some(guest) = self.guest_execution_ns() {
            overhead.push(("guest".into(), guest / 1e3));
        }
        vec![
            Panel {
                title: "tools/call p50 latency (lower is better)".into(),
                unit: "microseconds (log)".into(),
                log: true,
                categories: categories.clone(),
                wharf: w50,
                baseline: b50,
                series: ("Wharf", "rmcp baseline"),
            },
            Panel {
                title: "tools/call throughput (higher is better)".into(),
                unit: "requests/s (log)".into(),
                log: true,
                categories,
                wharf: wrps,
                baseline: brps,
                series: ("Wharf", "rmcp baseline"),
            },
            Panel {
                title: "Wharf cold start to first tools/list".into(),
                unit: "ms (log)".into(),
                log: true,
                categories: counts.iter().map(|n| format!("{n} plugins")).collect(),
                wharf: startup("empty"),
                baseline: startup("warm"),
                series: ("empty cache", "warm cache"),
            },
            Panel {
                title: "Wharf overhead split (criterion medians)".into(),
                unit: "microseconds (log)".into(),
                log: true,
                categories: overhead.iter().map(|(n, _)| n.clone()).collect(),
                baseline: vec![f64::NAN; overhead.len()],
                wharf: overhead.into_iter().map(|(_, us)| us).collect(),
                series: ("Wharf", ""),
            },
        ]
    }
}
