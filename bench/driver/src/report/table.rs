//! The printed table of a run.

use std::fmt::Write as _;

use super::Report;

impl Report {
    pub fn table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "\n{}", self.heading());
        let _ = writeln!(
            out,
            "\ntools/call (trivial = echo_echo; compute = compute_nth_prime n={})",
            self.prime
        );
        let _ = writeln!(
            out,
            "{:<12} {:<8} | {:>9} {:>9} {:>9} {:>7} | {:>9} {:>9} {:>9} {:>7} | {:>6} {:>6} {:>6}",
            "transport",
            "tool",
            "wharf p50",
            "p99",
            "req/s",
            "cpu/req",
            "base p50",
            "p99",
            "req/s",
            "cpu/req",
            "p50 x",
            "rps x",
            "cpu x"
        );
        for case in self.latency.iter().filter(|c| c.server == "wharf") {
            let Some(base) = self.find(case.transport, case.clients, case.tool, "baseline") else {
                continue;
            };
            let w = &case.result;
            let transport = case.label();
            let _ = writeln!(
                out,
                "{:<12} {:<8} | {:>7.0}us {:>7.0}us {:>9.0} {:>5.0}us | {:>7.0}us {:>7.0}us {:>9.0} {:>5.0}us | {:>6.2} {:>6.2} {:>6.2}{}",
                transport,
                case.tool,
                w.p50_us,
                w.p99_us,
                w.throughput_rps,
                w.server_cpu_us,
                base.p50_us,
                base.p99_us,
                base.throughput_rps,
                base.server_cpu_us,
                w.p50_us / base.p50_us,
                w.throughput_rps / base.throughput_rps,
                w.server_cpu_us / base.server_cpu_us,
                if w.errors + base.errors > 0 {
                    format!("  ({} / {} errors)", w.errors, base.errors)
                } else {
                    String::new()
                }
            );
        }
        if self
            .latency
            .iter()
            .any(|c| matches!(c.transport, "stdio-1core" | "stdio-2cores"))
        {
            let _ = writeln!(
                out,
                "stdio-1core: driver and servers pinned to CPU 0; \
                 stdio-2cores: servers on CPU 0, driver on CPU 1"
            );
        }
        if self.latency.iter().any(|c| c.transport == "stdio-pysdk") {
            let _ = writeln!(
                out,
                "stdio-pysdk: the official MCP Python SDK's stdio client, one call at a time, \
                 legacy session"
            );
        }

        let _ = writeln!(
            out,
            "\ncold start to first tools/list (median ms) and idle RSS"
        );
        let _ = writeln!(
            out,
            "{:<8} {:>12} {:>12} {:>14}",
            "plugins", "empty cache", "warm cache", "idle RSS"
        );
        for count in crate::startup::PLUGIN_COUNTS {
            let get = |cache: &str| {
                self.startup
                    .iter()
                    .find(|s| s.plugins == count && s.cache == cache)
            };
            let Some(warm) = get("warm") else {
                continue;
            };
            let empty =
                get("empty").map_or_else(|| "-".to_string(), |e| format!("{:.0} ms", e.median_ms));
            let _ = writeln!(
                out,
                "{:<8} {:>12} {:>9.0} ms {:>10.1} MiB",
                count,
                empty,
                warm.median_ms,
                warm.idle_rss_kib.unwrap_or(0) as f64 / 1024.0
            );
        }
        if let Some(base) = &self.baseline_startup {
            let _ = writeln!(
                out,
                "{:<8} {:>12} {:>9.0} ms {:>10.1} MiB",
                "baseline",
                "-",
                base.median_ms,
                base.idle_rss_kib.unwrap_or(0) as f64 / 1024.0
            );
        }
        if let Some(slope) = self.rss_per_plugin_kib() {
            let _ = writeln!(
                out,
                "RSS per loaded plugin (1 -> 100 plugins): {slope:.0} KiB"
            );
        }
        for (server, kib) in &self.load_rss_kib {
            let _ = writeln!(
                out,
                "peak RSS under 64-client HTTP load, {server}: {:.1} MiB",
                *kib as f64 / 1024.0
            );
        }

        out.push_str(&crate::pipelined::table(|transport, server| {
            self.find(transport, 1, "trivial", server).cloned()
        }));
        out.push_str(&crate::heavy::table(&self.heavy));
        if let Some(tracing) = &self.tracing {
            out.push_str(&tracing.table());
        }

        if let Some(reload) = &self.reload {
            let _ = writeln!(
                out,
                "\nreload (rename-in to ..., ms; host/benches/reload.rs)"
            );
            if let Some(map) = reload.as_object() {
                for (case, v) in map {
                    let _ = writeln!(
                        out,
                        "{:<40} p50 {:>6.1}  p95 {:>6.1}",
                        case,
                        v["p50_ms"].as_f64().unwrap_or(f64::NAN),
                        v["p95_ms"].as_f64().unwrap_or(f64::NAN)
                    );
                }
            }
        }

        if !self.overhead.is_empty() {
            let _ = writeln!(
                out,
                "\noverhead split (criterion medians, host/benches/overhead.rs)"
            );
            for (id, what, ns) in &self.overhead {
                let _ = writeln!(out, "{:<52} {:>9.2} us   ({id})", what, ns / 1e3);
            }
            if let Some(guest) = self.guest_execution_ns() {
                let _ = writeln!(
                    out,
                    "{:<52} {:>9.2} us   (call_echo - call_unknown_tool)",
                    "guest execution of echo (derived)",
                    guest / 1e3
                );
            }
        }

        let _ = writeln!(out, "\ngoals (ratios from this run)");
        for goal in &self.goals {
            let _ = writeln!(
                out,
                "{:<56} {:>8.2} {} {:<6} {}",
                goal.goal,
                goal.measured,
                goal.unit,
                goal.target,
                if goal.met { "MET" } else { "NOT MET" }
            );
        }
        out
    }
}
