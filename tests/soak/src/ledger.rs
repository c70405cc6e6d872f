//! What the soak counts: requests sent and answered per channel, how each
//! operation ended, progress reports, and the first failures word for word.
//!
//! One ledger for the whole run, shared by every client task; a plain mutex,
//! as the driver runs on one thread and holds it for a few counter updates.

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde_json::{Value, json};

/// Failures quoted in full in the report (all are counted).
const QUOTED_FAILURES: usize = 40;

/// How one operation ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// The expected answer.
    Ok,
    /// `Unknown tool` for a tool a swap may have taken away: allowed.
    Absent,
    /// A misbehaving call that ended as a tool error, as it must.
    Contained,
    /// Anything else: a goal missed.
    Failed(String),
}

/// Requests of one channel (a transport in one era).
#[derive(Debug, Default, Clone, Copy)]
pub struct Requests {
    pub sent: u64,
    pub answered: u64,
    /// Answers to an id that was already answered (or never asked).
    pub doubled: u64,
    /// Requests that got no answer: the connection failed, the answer never
    /// came, or an HTTP reply held no response with the request's id.
    pub unanswered: u64,
}

/// How the operations of one kind ended.
#[derive(Debug, Default, Clone, Copy)]
pub struct Outcomes {
    pub ok: u64,
    pub absent: u64,
    pub contained: u64,
    pub failed: u64,
}

#[derive(Debug, Default)]
struct Tally {
    requests: BTreeMap<&'static str, Requests>,
    outcomes: BTreeMap<&'static str, Outcomes>,
    failures: Vec<String>,
    failure_count: u64,
    progress_calls: u64,
    progress_reports: u64,
    stray_progress: u64,
}

/// The soak's counters.
#[derive(Debug, Default)]
pub struct Ledger {
    tally: Mutex<Tally>,
}

impl Ledger {
    fn with<T>(&self, f: impl FnOnce(&mut Tally) -> T) -> T {
        f(&mut self.tally.lock().expect("ledger lock"))
    }

    pub fn sent(&self, channel: &'static str) {
        self.with(|t| t.requests.entry(channel).or_default().sent += 1);
    }

    pub fn answered(&self, channel: &'static str) {
        self.with(|t| t.requests.entry(channel).or_default().answered += 1);
    }

    pub fn doubled(&self, channel: &'static str, detail: String) {
        self.with(|t| t.requests.entry(channel).or_default().doubled += 1);
        self.failure(channel, "doubled answer", detail);
    }

    pub fn unanswered(&self, channel: &'static str, detail: String) {
        self.with(|t| t.requests.entry(channel).or_default().unanswered += 1);
        self.failure(channel, "unanswered", detail);
    }

    /// Records how an operation of kind `op` over `channel` ended.
    pub fn verdict(&self, channel: &'static str, op: &'static str, verdict: Verdict) {
        self.with(|t| {
            let outcomes = t.outcomes.entry(op).or_default();
            match &verdict {
                Verdict::Ok => outcomes.ok += 1,
                Verdict::Absent => outcomes.absent += 1,
                Verdict::Contained => outcomes.contained += 1,
                Verdict::Failed(_) => outcomes.failed += 1,
            }
        });
        if let Verdict::Failed(detail) = verdict {
            self.failure(channel, op, detail);
        }
    }

    /// A failure that is not one operation's (a stream that ended, a stray
    /// notification, a server that crashed).
    pub fn failure(&self, channel: &str, what: &str, detail: String) {
        let line = format!("{channel} {what}: {detail}");
        eprintln!("soak: FAILURE {line}");
        self.with(|t| {
            t.failure_count += 1;
            if t.failures.len() < QUOTED_FAILURES {
                t.failures.push(line);
            }
        });
    }

    /// A call with a progress token and the reports that arrived for it.
    pub fn progress(&self, reports: usize) {
        self.with(|t| {
            t.progress_calls += 1;
            t.progress_reports += reports as u64;
        });
    }

    /// A progress report for a token no request is waiting on.
    pub fn stray_progress(&self, channel: &'static str, message: &Value) {
        self.with(|t| t.stray_progress += 1);
        self.failure(channel, "stray progress", message.to_string());
    }

    pub fn requests(&self) -> BTreeMap<&'static str, Requests> {
        self.with(|t| t.requests.clone())
    }

    pub fn outcomes(&self) -> BTreeMap<&'static str, Outcomes> {
        self.with(|t| t.outcomes.clone())
    }

    pub fn failure_count(&self) -> u64 {
        self.with(|t| t.failure_count)
    }

    /// Everything, for report.json.
    pub fn to_json(&self) -> Value {
        self.with(|t| {
            json!({
                "requests": t.requests.iter().map(|(channel, r)| (channel.to_string(), json!({
                    "sent": r.sent, "answered": r.answered,
                    "doubled": r.doubled, "unanswered": r.unanswered,
                }))).collect::<serde_json::Map<_, _>>(),
                "operations": t.outcomes.iter().map(|(op, o)| (op.to_string(), json!({
                    "ok": o.ok, "absent": o.absent, "contained": o.contained, "failed": o.failed,
                }))).collect::<serde_json::Map<_, _>>(),
                "progress": {"calls": t.progress_calls, "reports": t.progress_reports,
                             "stray": t.stray_progress},
                "failures": t.failure_count,
                "first_failures": t.failures,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_and_request_figures_are_counted_apart() {
        let ledger = Ledger::default();
        ledger.sent("stdio");
        ledger.sent("stdio");
        ledger.answered("stdio");
        ledger.unanswered("stdio", "id 2".into());
        ledger.verdict("stdio", "stable", Verdict::Ok);
        ledger.verdict("stdio", "flip", Verdict::Absent);
        ledger.verdict("stdio", "stable", Verdict::Failed("isError".into()));
        let requests = ledger.requests()["stdio"];
        assert_eq!(
            (requests.sent, requests.answered, requests.unanswered),
            (2, 1, 1)
        );
        let outcomes = ledger.outcomes();
        assert_eq!((outcomes["stable"].ok, outcomes["stable"].failed), (1, 1));
        assert_eq!(outcomes["flip"].absent, 1);
        assert_eq!(ledger.failure_count(), 2);
        assert_eq!(
            ledger.to_json()["first_failures"],
            json!(["stdio unanswered: id 2", "stdio stable: isError"])
        );
    }
}
