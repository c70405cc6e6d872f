//! The goals of a soak, checked against what was counted and sampled; the
//! printed summary; `report.json`.

use std::fmt::Write as _;
use std::time::Duration;

use serde_json::{Value, json};

use crate::churn::ChurnTally;
use crate::ledger::Ledger;
use crate::listeners::Listener;
use crate::samples::Series;

/// Runs at least this long have their growth judged; shorter ones report it.
pub const JUDGED_GROWTH_FROM: Duration = Duration::from_secs(5 * 60);
/// The most RSS may grow after the warm-up, per server, in a judged run.
pub const MAX_RSS_MIB_PER_MIN: f64 = 1.0;
/// The most open descriptors may grow after the warm-up, per server.
pub const MAX_FDS_PER_MIN: f64 = 0.5;

/// One goal and whether it was met.
#[derive(Debug, Clone)]
pub struct Goal {
    pub name: String,
    pub met: bool,
    pub detail: String,
}

/// Everything a run produced.
pub struct Run<'a> {
    pub duration: Duration,
    pub warmup: Duration,
    pub ledger: &'a Ledger,
    pub listeners: &'a [std::sync::Arc<Listener>],
    /// Per listener: what it had seen, and whether it was open, at the end
    /// of the load (before the servers stopped).
    pub listened: &'a [(u64, bool)],
    pub churn: &'a ChurnTally,
    pub series: &'a [Series],
    /// Per server: how it exited, and the host panics in its log.
    pub exits: Vec<(&'static str, String, bool)>,
    pub panics: Vec<String>,
}

impl Run<'_> {
    /// Whether growth counts against the goals in this run.
    pub fn judges_growth(&self) -> bool {
        self.duration >= JUDGED_GROWTH_FROM
    }

    pub fn goals(&self) -> Vec<Goal> {
        let mut goals = Vec::new();
        let mut goal = |name: &str, met: bool, detail: String| {
            goals.push(Goal {
                name: name.to_string(),
                met,
                detail,
            })
        };
        let requests = self.ledger.requests();
        let (sent, answered, unanswered, doubled) =
            requests.values().fold((0, 0, 0, 0), |acc, r| {
                (
                    acc.0 + r.sent,
                    acc.1 + r.answered,
                    acc.2 + r.unanswered,
                    acc.3 + r.doubled,
                )
            });
        goal(
            "every request answered exactly once",
            unanswered == 0 && doubled == 0 && sent == answered,
            format!("{sent} sent, {answered} answered, {unanswered} unanswered, {doubled} doubled"),
        );
        let outcomes = self.ledger.outcomes();
        let failed: u64 = outcomes.values().map(|o| o.failed).sum();
        goal(
            "no failed call of a tool that existed before and after",
            failed == 0,
            format!("{failed} failed"),
        );
        let expected = self.churn.changes;
        let wrong: Vec<String> = self
            .listeners
            .iter()
            .zip(self.listened)
            .filter(|(_, (seen, open))| *seen != expected || !open)
            .map(|(l, (seen, open))| {
                format!(
                    "{} saw {seen}{}",
                    l.name,
                    if *open { "" } else { " (closed)" }
                )
            })
            .collect();
        goal(
            "every list_changed seen once by every listener",
            wrong.is_empty() && expected > 0,
            if wrong.is_empty() {
                format!("{expected} expected, seen by all {}", self.listeners.len())
            } else {
                format!("{expected} expected; {}", wrong.join(", "))
            },
        );
        let other = self.ledger.failure_count();
        goal(
            "no failure of any kind (streams, progress, churn included)",
            other == 0,
            format!("{other} failures in all"),
        );
        let bad_exits: Vec<String> = self
            .exits
            .iter()
            .filter(|(_, _, ok)| !ok)
            .map(|(label, how, _)| format!("{label}: {how}"))
            .collect();
        goal(
            "servers ran to the end and stopped cleanly",
            bad_exits.is_empty() && self.panics.is_empty(),
            if bad_exits.is_empty() && self.panics.is_empty() {
                "all exited 0, no host panic logged".into()
            } else {
                format!("{bad_exits:?} {:?}", self.panics)
            },
        );
        let warmup = self.warmup.as_secs_f64();
        for series in self.series {
            let slopes = series.slopes(warmup);
            let judged = self.judges_growth();
            let rss = slopes.rss_mib_per_min.unwrap_or(f64::NAN);
            let fds = slopes.fds_per_min.unwrap_or(f64::NAN);
            let flat = rss <= MAX_RSS_MIB_PER_MIN && fds <= MAX_FDS_PER_MIN;
            goal(
                &format!("{}: RSS and descriptors flat after warm-up", series.label),
                !judged || flat,
                format!(
                    "{rss:+.2} MiB/min (max {MAX_RSS_MIB_PER_MIN}), {fds:+.2} fds/min \
                     (max {MAX_FDS_PER_MIN}){}",
                    if judged {
                        ""
                    } else {
                        ", reported only (run under 5 min)"
                    }
                ),
            );
        }
        goals
    }

    /// The summary table.
    pub fn table(&self, goals: &[Goal]) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "\nsoak: {:.0} s (warm-up {:.0} s)",
            self.duration.as_secs_f64(),
            self.warmup.as_secs_f64()
        );
        let _ = writeln!(
            out,
            "\n{:<14} {:>9} {:>9} {:>10} {:>8}",
            "channel", "sent", "answered", "unanswered", "doubled"
        );
        for (channel, r) in self.ledger.requests() {
            let _ = writeln!(
                out,
                "{channel:<14} {:>9} {:>9} {:>10} {:>8}",
                r.sent, r.answered, r.unanswered, r.doubled
            );
        }
        let _ = writeln!(
            out,
            "\n{:<16} {:>9} {:>8} {:>10} {:>7}",
            "operation", "ok", "absent", "contained", "failed"
        );
        for (op, o) in self.ledger.outcomes() {
            let _ = writeln!(
                out,
                "{op:<16} {:>9} {:>8} {:>10} {:>7}",
                o.ok, o.absent, o.contained, o.failed
            );
        }
        let steps: Vec<String> = self
            .churn
            .steps
            .iter()
            .map(|(kind, n)| format!("{n} {kind}"))
            .collect();
        let _ = writeln!(out, "\nfolder: {}", steps.join(", "));
        let _ = writeln!(
            out,
            "list_changed: {} expected per listener; seen {}",
            self.churn.changes,
            self.listeners
                .iter()
                .zip(self.listened)
                .map(|(l, (seen, _))| format!("{} {seen}", l.name))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let _ = writeln!(
            out,
            "\n{:<14} {:>9} {:>9} {:>7} {:>8} {:>8} {:>9} {:>8} {:>11}",
            "server",
            "RSS MiB",
            "peak",
            "fds",
            "threads",
            "MiB/min",
            "fds/min",
            "reloads",
            "pool slots"
        );
        for series in self.series {
            let last = series.samples.last().copied().unwrap_or_default();
            let slopes = series.slopes(self.warmup.as_secs_f64());
            let _ = writeln!(
                out,
                "{:<14} {:>9.1} {:>9.1} {:>7} {:>8} {:>+8.2} {:>+9.2} {:>8} {:>11}",
                series.label,
                last.rss_kib as f64 / 1024.0,
                series.peak(|s| s.rss_kib as f64) / 1024.0,
                last.fds,
                last.threads,
                slopes.rss_mib_per_min.unwrap_or(f64::NAN),
                slopes.fds_per_min.unwrap_or(f64::NAN),
                last.reloads.map_or("-".into(), |r| r.to_string()),
                last.pool_instances.map_or("-".into(), |now| format!(
                    "{now} (max {})",
                    series.peak(|s| s.pool_instances.unwrap_or(0.0))
                )),
            );
        }
        let _ = writeln!(out);
        for goal in goals {
            let mark = if goal.met { "ok  " } else { "FAIL" };
            let _ = writeln!(out, "{mark} {}: {}", goal.name, goal.detail);
        }
        out
    }

    pub fn to_json(&self, goals: &[Goal]) -> Value {
        let warmup = self.warmup.as_secs_f64();
        json!({
            "duration_s": self.duration.as_secs_f64(),
            "warmup_s": warmup,
            "growth_judged": self.judges_growth(),
            "thresholds": {
                "rss_mib_per_min": MAX_RSS_MIB_PER_MIN,
                "fds_per_min": MAX_FDS_PER_MIN,
                "judged_from_s": JUDGED_GROWTH_FROM.as_secs(),
            },
            "passed": goals.iter().all(|g| g.met),
            "goals": goals.iter().map(|g| json!({
                "goal": g.name, "met": g.met, "detail": g.detail,
            })).collect::<Vec<_>>(),
            "ledger": self.ledger.to_json(),
            "churn": self.churn.to_json(),
            "list_changed": self.listeners.iter().zip(self.listened).map(|(l, (seen, open))| json!({
                "listener": l.name, "expected": self.churn.changes, "seen": seen,
                "open_to_the_end": open,
            })).collect::<Vec<_>>(),
            "servers": self.series.iter().map(|s| (s.label.to_string(), s.to_json(warmup)))
                .collect::<serde_json::Map<_, _>>(),
            "exits": self.exits.iter().map(|(label, how, ok)| json!({
                "server": label, "exit": how, "clean": ok,
            })).collect::<Vec<_>>(),
            "host_panics": self.panics,
        })
    }
}
