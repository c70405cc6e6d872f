//! Once a second, what each server holds: resident memory, open descriptors
//! and threads (from /proc), and over HTTP the calls in flight, plugins
//! loaded, reloads and instance-pool slots in use (from `/metrics`). After the warm-up, a least-squares
//! line through RSS and descriptors says whether they grow.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wharf_wire::http::Connection;
use wharf_wire::process::{open_fds, rss_kib, threads};

use crate::ledger::Ledger;

/// One reading of one server.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sample {
    /// Seconds since the soak began.
    pub at: f64,
    pub rss_kib: u64,
    pub fds: u64,
    pub threads: u64,
    /// From `/metrics` (HTTP only).
    pub in_flight: Option<f64>,
    pub plugins: Option<f64>,
    pub reloads: Option<f64>,
    /// Component instances holding a pool slot.
    pub pool_instances: Option<f64>,
}

/// The readings of one server.
#[derive(Debug, Clone)]
pub struct Series {
    pub label: &'static str,
    pub pid: u32,
    pub metrics: Option<SocketAddr>,
    pub samples: Vec<Sample>,
}

impl Series {
    pub fn new(label: &'static str, pid: u32, metrics: Option<SocketAddr>) -> Self {
        Self {
            label,
            pid,
            metrics,
            samples: Vec::new(),
        }
    }

    /// The fitted growth after `warmup` seconds: MiB of RSS and descriptors
    /// per minute.
    pub fn slopes(&self, warmup: f64) -> Slopes {
        let after: Vec<&Sample> = self.samples.iter().filter(|s| s.at >= warmup).collect();
        let line = |value: fn(&Sample) -> f64| {
            let points: Vec<(f64, f64)> = after.iter().map(|s| (s.at / 60.0, value(s))).collect();
            least_squares_slope(&points)
        };
        Slopes {
            rss_mib_per_min: line(|s| s.rss_kib as f64 / 1024.0),
            fds_per_min: line(|s| s.fds as f64),
            samples: after.len(),
        }
    }

    /// The largest value of `value` over all samples.
    pub fn peak(&self, value: fn(&Sample) -> f64) -> f64 {
        self.samples.iter().map(value).fold(0.0, f64::max)
    }

    pub fn to_json(&self, warmup: f64) -> Value {
        let slopes = self.slopes(warmup);
        json!({
            "pid": self.pid,
            "rss_mib_per_min": slopes.rss_mib_per_min,
            "fds_per_min": slopes.fds_per_min,
            "fitted_samples": slopes.samples,
            "samples": self.samples.iter().map(|s| json!({
                "at": s.at, "rss_kib": s.rss_kib, "fds": s.fds, "threads": s.threads,
                "in_flight": s.in_flight, "plugins": s.plugins, "reloads": s.reloads,
                "pool_instances": s.pool_instances,
            })).collect::<Vec<_>>(),
        })
    }
}

/// Growth after the warm-up.
#[derive(Debug, Clone, Copy)]
pub struct Slopes {
    pub rss_mib_per_min: Option<f64>,
    pub fds_per_min: Option<f64>,
    /// How many samples the lines were fitted to.
    pub samples: usize,
}

/// The slope of the least-squares line through `points`; `None` for fewer
/// than two distinct x.
pub fn least_squares_slope(points: &[(f64, f64)]) -> Option<f64> {
    let n = points.len() as f64;
    if points.len() < 2 {
        return None;
    }
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

/// The value of an unlabelled metric in a Prometheus text exposition.
fn metric(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .find_map(|line| {
            line.strip_prefix(name)?
                .strip_prefix(' ')?
                .trim()
                .parse()
                .ok()
        })
}

/// Samples every series once a second until `stopping`; a process that is
/// gone is a failure (once).
pub async fn sample(
    mut series: Vec<Series>,
    started: Instant,
    stopping: Arc<AtomicBool>,
    ledger: Arc<Ledger>,
) -> Vec<Series> {
    let mut connections: Vec<Option<Connection>> = series.iter().map(|_| None).collect();
    let mut gone = vec![false; series.len()];
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    while !stopping.load(Ordering::Relaxed) {
        tick.tick().await;
        for ((one, connection), gone) in series.iter_mut().zip(&mut connections).zip(&mut gone) {
            let read = (rss_kib(one.pid), open_fds(one.pid), threads(one.pid));
            let (Ok(rss_kib), Ok(fds), Ok(threads)) = read else {
                if !std::mem::replace(gone, true) {
                    let detail = format!("pid {} is gone", one.pid);
                    ledger.failure(one.label, "server exited", detail);
                }
                continue;
            };
            let mut sample = Sample {
                at: started.elapsed().as_secs_f64(),
                rss_kib,
                fds,
                threads,
                ..Sample::default()
            };
            if let Some(addr) = one.metrics
                && let Some(text) = scrape(addr, connection).await
            {
                sample.in_flight = metric(&text, "wharf_tool_calls_in_flight");
                sample.plugins = metric(&text, "wharf_plugins_loaded");
                sample.reloads = metric(&text, "wharf_reloads_total");
                sample.pool_instances = metric(&text, "wharf_pool_component_instances");
            }
            one.samples.push(sample);
        }
    }
    series
}

/// `GET /metrics` on a kept connection (reopened if it failed).
async fn scrape(addr: SocketAddr, connection: &mut Option<Connection>) -> Option<String> {
    if connection.is_none() {
        *connection = Connection::open(addr).await.ok();
    }
    let reply =
        tokio::time::timeout(Duration::from_secs(5), connection.as_mut()?.get("/metrics")).await;
    match reply {
        Ok(Ok(reply)) if reply.status == 200 => Some(String::from_utf8_lossy(&reply.body).into()),
        _ => {
            *connection = None;
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slope_of_a_line_and_of_noise_around_it() {
        let line: Vec<(f64, f64)> = (0..10).map(|x| (x as f64, 3.0 * x as f64 + 7.0)).collect();
        assert_eq!(least_squares_slope(&line), Some(3.0));
        let flat = [(0.0, 5.0), (1.0, 6.0), (2.0, 4.0), (3.0, 5.0)];
        assert_eq!(least_squares_slope(&flat), Some(-0.2));
        assert_eq!(least_squares_slope(&[(1.0, 1.0)]), None);
        assert_eq!(least_squares_slope(&[(1.0, 1.0), (1.0, 2.0)]), None);
    }

    #[test]
    fn slopes_are_per_minute_and_skip_the_warm_up() {
        let mut series = Series::new("x", 1, None);
        for second in 0..120 {
            // A jump during the warm-up, then 1 MiB and 2 descriptors a minute.
            let base = if second < 30 { 0.0 } else { 100.0 };
            let minutes = second as f64 / 60.0;
            series.samples.push(Sample {
                at: second as f64,
                rss_kib: ((base + minutes) * 1024.0) as u64,
                fds: (10.0 + 2.0 * minutes).round() as u64,
                ..Sample::default()
            });
        }
        let slopes = series.slopes(30.0);
        assert_eq!(slopes.samples, 90);
        assert!(
            (slopes.rss_mib_per_min.unwrap() - 1.0).abs() < 0.01,
            "{slopes:?}"
        );
        // Whole descriptors make a staircase: near the line, not on it.
        assert!(
            (slopes.fds_per_min.unwrap() - 2.0).abs() < 0.2,
            "{slopes:?}"
        );
    }

    #[test]
    fn reads_unlabelled_metrics() {
        let text = "# HELP wharf_tool_calls_in_flight Tool calls running now.\n\
                    # TYPE wharf_tool_calls_in_flight gauge\n\
                    wharf_tool_calls_in_flight 3\n\
                    wharf_plugins_loaded 6\nwharf_reloads_total 41\n";
        assert_eq!(metric(text, "wharf_tool_calls_in_flight"), Some(3.0));
        assert_eq!(metric(text, "wharf_plugins_loaded"), Some(6.0));
        assert_eq!(metric(text, "wharf_reloads_total"), Some(41.0));
        assert_eq!(metric(text, "wharf_reloads"), None);
    }
}
