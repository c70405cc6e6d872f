//! Operational counters: tool calls, errors, latency, loaded plugins, reloads.
//!
//! The server records each tool call, the loader records plugin counts and
//! reloads, and a transport renders the lot in the Prometheus text exposition
//! format (`GET /metrics` over HTTP). Hand-written with atomics rather than a
//! metrics crate: the set is small and fixed, recording must cost a few atomic
//! adds on the call path, and the exposition format is a dozen lines of text.
//!
//! Strategy: per-tool series live in a map behind a read-write lock; the call
//! path takes the read lock to find its tool's [`ToolStats`] and only the first
//! call of a tool takes the write lock. Series are created only for tools that
//! exist (the server records after the lookup), so clients cannot inflate the
//! map with made-up names.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock};
use std::time::{Duration, Instant};

/// Upper bounds (seconds) of the latency histogram buckets: from a trivial
/// call (sub-millisecond) to the default call timeout (30 s).
const LATENCY_BUCKETS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0, 30.0,
];

/// How a tool call ended, as far as metrics care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallOutcome {
    /// A result without `isError`.
    Success,
    /// A tool execution error (`isError: true`) or a protocol error.
    Error,
}

/// Counters of one tool.
#[derive(Debug)]
pub struct ToolStats {
    calls: AtomicU64,
    errors: AtomicU64,
    /// Cumulative count per bucket is computed at render time; each slot holds
    /// the calls that fell into exactly that bucket (the last slot is `+Inf`).
    buckets: [AtomicU64; LATENCY_BUCKETS.len() + 1],
    /// Total latency in nanoseconds.
    sum_nanos: AtomicU64,
    /// The tool's name, for the OTLP duration histogram's attribute.
    name: Arc<str>,
}

impl ToolStats {
    fn new(name: &str) -> Self {
        Self {
            calls: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            buckets: Default::default(),
            sum_nanos: AtomicU64::new(0),
            name: name.into(),
        }
    }

    fn record(&self, elapsed: Duration, outcome: CallOutcome) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        if outcome == CallOutcome::Error {
            self.errors.fetch_add(1, Ordering::Relaxed);
        }
        let seconds = elapsed.as_secs_f64();
        let slot = LATENCY_BUCKETS
            .iter()
            .position(|bound| seconds <= *bound)
            .unwrap_or(LATENCY_BUCKETS.len());
        self.buckets[slot].fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        self.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
    }
}

/// Wharf's metrics registry; share it as `Arc<Metrics>`.
#[derive(Debug, Default)]
pub struct Metrics {
    tools: RwLock<BTreeMap<String, Arc<ToolStats>>>,
    in_flight: AtomicI64,
    plugins: AtomicU64,
    reloads: AtomicU64,
    /// The OTLP histogram each call's duration also goes to, once OTLP
    /// export is on (`telemetry::metrics`); unset, recording skips it.
    otlp_duration: OnceLock<opentelemetry::metrics::Histogram<f64>>,
    /// Gauges read when rendered, from parts this module does not know (the
    /// runtime's instance pool): registered by whoever wires the server.
    gauges: RwLock<Vec<ReadGauge>>,
}

/// A gauge whose value is read at render time.
struct ReadGauge {
    name: &'static str,
    help: &'static str,
    read: Box<dyn Fn() -> Option<f64> + Send + Sync>,
}

impl std::fmt::Debug for ReadGauge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadGauge")
            .field("name", &self.name)
            .finish()
    }
}

impl Metrics {
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts timing a call of `tool`; finish it with [`CallTimer::finish`].
    /// A timer dropped unfinished (the request was abandoned) counts as an error.
    pub fn start_call(self: &Arc<Self>, tool: &str) -> CallTimer {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        CallTimer {
            metrics: self.clone(),
            stats: self.stats(tool),
            started: Instant::now(),
            done: false,
        }
    }

    /// Calls running right now (graceful shutdown waits for this to reach 0).
    pub fn calls_in_flight(&self) -> i64 {
        self.in_flight.load(Ordering::Relaxed)
    }

    /// Sets how many plugins are loaded.
    pub fn set_plugins_loaded(&self, count: usize) {
        self.plugins.store(count as u64, Ordering::Relaxed);
    }

    /// Counts one reload of the plugin folder (hot reload).
    pub fn record_reload(&self) {
        self.reloads.fetch_add(1, Ordering::Relaxed);
    }

    /// How many plugins are loaded.
    pub fn plugins_loaded(&self) -> u64 {
        self.plugins.load(Ordering::Relaxed)
    }

    /// Reloads of the plugin folder so far.
    pub fn reloads(&self) -> u64 {
        self.reloads.load(Ordering::Relaxed)
    }

    /// Each tool's calls and errors so far: `(tool, calls, errors)`.
    pub fn tool_counts(&self) -> Vec<(String, u64, u64)> {
        let tools = self.tools.read().expect("metrics lock");
        tools
            .iter()
            .map(|(tool, stats)| {
                (
                    tool.clone(),
                    stats.calls.load(Ordering::Relaxed),
                    stats.errors.load(Ordering::Relaxed),
                )
            })
            .collect()
    }

    /// Sends each call's duration to `histogram` too (OTLP export).
    pub fn export_durations(&self, histogram: opentelemetry::metrics::Histogram<f64>) {
        let _ = self.otlp_duration.set(histogram);
    }

    /// Adds a gauge whose value `read` gives when the metrics are rendered
    /// (left out of a rendering where it gives `None`).
    pub fn register_gauge(
        &self,
        name: &'static str,
        help: &'static str,
        read: impl Fn() -> Option<f64> + Send + Sync + 'static,
    ) {
        self.gauges.write().expect("metrics lock").push(ReadGauge {
            name,
            help,
            read: Box::new(read),
        });
    }

    fn stats(&self, tool: &str) -> Arc<ToolStats> {
        if let Some(stats) = self.tools.read().expect("metrics lock").get(tool) {
            return stats.clone();
        }
        self.tools
            .write()
            .expect("metrics lock")
            .entry(tool.to_string())
            .or_insert_with(|| Arc::new(ToolStats::new(tool)))
            .clone()
    }

    /// Everything in the Prometheus text exposition format (version 0.0.4).
    pub fn render(&self) -> String {
        let mut out = String::new();
        let tools = self.tools.read().expect("metrics lock").clone();
        family(
            &mut out,
            "wharf_tool_calls_total",
            "counter",
            "Tool calls handled, by tool.",
        );
        for (tool, stats) in &tools {
            let n = stats.calls.load(Ordering::Relaxed);
            let _ = writeln!(
                out,
                "wharf_tool_calls_total{{tool=\"{}\"}} {n}",
                escape(tool)
            );
        }
        family(
            &mut out,
            "wharf_tool_errors_total",
            "counter",
            "Tool calls that ended in an error (isError or protocol error), by tool.",
        );
        for (tool, stats) in &tools {
            let n = stats.errors.load(Ordering::Relaxed);
            let _ = writeln!(
                out,
                "wharf_tool_errors_total{{tool=\"{}\"}} {n}",
                escape(tool)
            );
        }
        family(
            &mut out,
            "wharf_tool_call_duration_seconds",
            "histogram",
            "Wall-clock time of tool calls, by tool.",
        );
        for (tool, stats) in &tools {
            let tool = escape(tool);
            let mut cumulative = 0;
            for (slot, count) in stats.buckets.iter().enumerate() {
                cumulative += count.load(Ordering::Relaxed);
                let le = LATENCY_BUCKETS
                    .get(slot)
                    .map_or_else(|| "+Inf".to_string(), |b| b.to_string());
                let _ = writeln!(
                    out,
                    "wharf_tool_call_duration_seconds_bucket{{tool=\"{tool}\",le=\"{le}\"}} {cumulative}"
                );
            }
            let sum = stats.sum_nanos.load(Ordering::Relaxed) as f64 / 1e9;
            let _ = writeln!(
                out,
                "wharf_tool_call_duration_seconds_sum{{tool=\"{tool}\"}} {sum}\n\
                 wharf_tool_call_duration_seconds_count{{tool=\"{tool}\"}} {cumulative}"
            );
        }
        family(
            &mut out,
            "wharf_tool_calls_in_flight",
            "gauge",
            "Tool calls running now.",
        );
        let _ = writeln!(out, "wharf_tool_calls_in_flight {}", self.calls_in_flight());
        family(
            &mut out,
            "wharf_plugins_loaded",
            "gauge",
            "Plugins currently loaded.",
        );
        let _ = writeln!(
            out,
            "wharf_plugins_loaded {}",
            self.plugins.load(Ordering::Relaxed)
        );
        family(
            &mut out,
            "wharf_reloads_total",
            "counter",
            "Reloads of the plugin folder.",
        );
        let _ = writeln!(
            out,
            "wharf_reloads_total {}",
            self.reloads.load(Ordering::Relaxed)
        );
        for gauge in self.gauges.read().expect("metrics lock").iter() {
            if let Some(value) = (gauge.read)() {
                family(&mut out, gauge.name, "gauge", gauge.help);
                let _ = writeln!(out, "{} {value}", gauge.name);
            }
        }
        out
    }
}

/// Writes the `# HELP` and `# TYPE` lines of a metric family.
fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

/// Times one tool call and records it when finished (or dropped).
#[derive(Debug)]
pub struct CallTimer {
    metrics: Arc<Metrics>,
    stats: Arc<ToolStats>,
    started: Instant,
    done: bool,
}

impl CallTimer {
    /// Records the call with its outcome.
    pub fn finish(mut self, outcome: CallOutcome) {
        self.record(outcome);
    }

    fn record(&mut self, outcome: CallOutcome) {
        if !std::mem::replace(&mut self.done, true) {
            let elapsed = self.started.elapsed();
            self.stats.record(elapsed, outcome);
            if let Some(histogram) = self.metrics.otlp_duration.get() {
                let mut attributes = vec![
                    opentelemetry::KeyValue::new("mcp.method.name", "tools/call"),
                    opentelemetry::KeyValue::new("gen_ai.tool.name", self.stats.name.clone()),
                ];
                if outcome == CallOutcome::Error {
                    attributes.push(opentelemetry::KeyValue::new("error.type", "error"));
                }
                histogram.record(elapsed.as_secs_f64(), &attributes);
            }
            self.metrics.in_flight.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl Drop for CallTimer {
    fn drop(&mut self) {
        self.record(CallOutcome::Error);
    }
}

/// Escapes a label value (`\`, `"` and newlines) for the text format.
fn escape(value: &str) -> String {
    value
        .replace('\\', r"\\")
        .replace('"', "\\\"")
        .replace('\n', r"\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_counted_with_a_cumulative_histogram() {
        let metrics = Arc::new(Metrics::new());
        metrics
            .stats("calc_add")
            .record(Duration::from_micros(300), CallOutcome::Success);
        metrics
            .stats("calc_add")
            .record(Duration::from_millis(30), CallOutcome::Error);
        metrics
            .stats("calc_add")
            .record(Duration::from_secs(60), CallOutcome::Success);
        metrics.set_plugins_loaded(3);
        metrics.record_reload();
        let text = metrics.render();
        for line in [
            "wharf_tool_calls_total{tool=\"calc_add\"} 3",
            "wharf_tool_errors_total{tool=\"calc_add\"} 1",
            "wharf_tool_call_duration_seconds_bucket{tool=\"calc_add\",le=\"0.0005\"} 1",
            "wharf_tool_call_duration_seconds_bucket{tool=\"calc_add\",le=\"0.025\"} 1",
            "wharf_tool_call_duration_seconds_bucket{tool=\"calc_add\",le=\"0.05\"} 2",
            "wharf_tool_call_duration_seconds_bucket{tool=\"calc_add\",le=\"30\"} 2",
            "wharf_tool_call_duration_seconds_bucket{tool=\"calc_add\",le=\"+Inf\"} 3",
            "wharf_tool_call_duration_seconds_count{tool=\"calc_add\"} 3",
            "wharf_tool_call_duration_seconds_sum{tool=\"calc_add\"} 60.0303",
            "wharf_plugins_loaded 3",
            "wharf_reloads_total 1",
            "wharf_tool_calls_in_flight 0",
            "# TYPE wharf_tool_call_duration_seconds histogram",
        ] {
            assert!(text.lines().any(|l| l == line), "{line:?} missing:\n{text}");
        }
    }

    #[test]
    fn a_dropped_timer_counts_as_an_error_and_leaves_flight() {
        let metrics = Arc::new(Metrics::new());
        let timer = metrics.start_call("echo_echo");
        assert_eq!(metrics.calls_in_flight(), 1);
        drop(timer);
        metrics.start_call("echo_echo").finish(CallOutcome::Success);
        assert_eq!(metrics.calls_in_flight(), 0);
        let text = metrics.render();
        assert!(
            text.contains("wharf_tool_calls_total{tool=\"echo_echo\"} 2"),
            "{text}"
        );
        assert!(
            text.contains("wharf_tool_errors_total{tool=\"echo_echo\"} 1"),
            "{text}"
        );
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }

    #[test]
    fn registered_gauges_are_read_when_rendered() {
        let metrics = Metrics::new();
        let level = Arc::new(AtomicU64::new(3));
        let read = level.clone();
        metrics.register_gauge("wharf_test_level", "A level.", move || {
            Some(read.load(Ordering::Relaxed) as f64)
        });
        metrics.register_gauge("wharf_test_absent", "Never there.", || None);
        assert!(metrics.render().ends_with(
            "# HELP wharf_test_level A level.\n# TYPE wharf_test_level gauge\nwharf_test_level 3\n"
        ));
        level.store(5, Ordering::Relaxed);
        let text = metrics.render();
        assert!(text.contains("wharf_test_level 5\n"), "{text}");
        assert!(!text.contains("wharf_test_absent"), "{text}");
    }
}
