//! A request's progress reports and plugin logs, on their way to the client.

use std::time::{Duration, Instant};

use rmcp::RoleServer;
#[allow(deprecated)] // Logging is deprecated (SEP-2577) but still part of both eras.
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::runtime::{CallEvent, LogLevel};

/// At most one progress report per request goes out in this time (40 a
/// second): a plugin reporting in a tight loop must not flood the client or
/// the connection. The first report and the one that reaches the total always
/// go out, and a report held back goes out once the interval has passed or the
/// call ends, so the client always sees the latest progress.
pub const PROGRESS_INTERVAL: Duration = Duration::from_millis(25);

/// Where a call's progress reports and log lines go.
pub(super) struct EventRoute {
    /// The request's progress token; without one, progress is dropped.
    pub progress_token: Option<ProgressToken>,
    /// The least severe log level the client wants; without one, logs stay in
    /// Wharf's own log.
    #[allow(deprecated)]
    pub log_level: Option<LoggingLevel>,
    /// Names the plugin in `notifications/message`.
    pub logger: String,
}

/// Sends a call's events to the client: progress as `notifications/progress`,
/// dropping reports that do not increase, as the protocol requires, and
/// limited by [`PROGRESS_INTERVAL`]; plugin logs at or above the wanted level
/// as `notifications/message`. Ends once the call's sender is gone and every
/// held report is out.
pub(super) async fn forward_events(
    mut events: mpsc::UnboundedReceiver<CallEvent>,
    route: EventRoute,
    peer: rmcp::Peer<RoleServer>,
) {
    let mut gate = ProgressGate::default();
    loop {
        let due = gate.due();
        let event = tokio::select! {
            event = events.recv() => event,
            _ = sleep_until(due) => {
                if let Some(held) = gate.take_held(Instant::now())
                    && peer.notify_progress(held).await.is_err()
                {
                    return;
                }
                continue;
            }
        };
        let sent = match event {
            None => {
                if let Some(held) = gate.take_all() {
                    let _ = peer.notify_progress(held).await;
                }
                return;
            }
            Some(CallEvent::Progress {
                progress,
                total,
                message,
            }) => {
                let Some(token) = &route.progress_token else {
                    continue;
                };
                let mut param = ProgressNotificationParam::new(token.clone(), progress);
                param.total = total.filter(|t| t.is_finite());
                param.message = message;
                match gate.offer(param, Instant::now()) {
                    Some(param) => peer.notify_progress(param).await,
                    None => continue,
                }
            }
            Some(CallEvent::Log { level, message }) => {
                let level = mcp_log_level(level);
                let Some(wanted) = route.log_level else {
                    continue;
                };
                if severity(level) < severity(wanted) {
                    continue;
                }
                #[allow(deprecated)]
                let param = LoggingMessageNotificationParam::new(level, Value::String(message))
                    .with_logger(route.logger.clone());
                #[allow(deprecated)]
                peer.notify_logging_message(param).await
            }
        };
        if sent.is_err() {
            return;
        }
    }
}

async fn sleep_until(due: Option<Instant>) {
    match due {
        Some(due) => tokio::time::sleep_until(due.into()).await,
        None => std::future::pending().await,
    }
}

/// Which progress reports go out, and when.
#[derive(Debug, Default)]
struct ProgressGate {
    /// The last value accepted (sent or held): reports must increase.
    last: Option<f64>,
    sent_at: Option<Instant>,
    held: Option<ProgressNotificationParam>,
}

impl ProgressGate {
    /// A new report at `now`: what to send at once, if anything. A report
    /// that comes too soon after the last one sent is held, replacing any
    /// report held before it.
    fn offer(
        &mut self,
        report: ProgressNotificationParam,
        now: Instant,
    ) -> Option<ProgressNotificationParam> {
        if !report.progress.is_finite() || self.last.is_some_and(|last| report.progress <= last) {
            return None;
        }
        self.last = Some(report.progress);
        let finished = report.total.is_some_and(|total| report.progress >= total);
        let quiet = self
            .sent_at
            .is_none_or(|sent| now.duration_since(sent) >= PROGRESS_INTERVAL);
        if finished || quiet {
            self.held = None;
            self.sent_at = Some(now);
            Some(report)
        } else {
            self.held = Some(report);
            None
        }
    }

    /// When the held report may go out.
    fn due(&self) -> Option<Instant> {
        self.held.as_ref()?;
        self.sent_at.map(|sent| sent + PROGRESS_INTERVAL)
    }

    /// The held report, if it is due at `now`.
    fn take_held(&mut self, now: Instant) -> Option<ProgressNotificationParam> {
        if self.due().is_some_and(|due| now >= due) {
            self.sent_at = Some(now);
            self.held.take()
        } else {
            None
        }
    }

    /// The held report, due or not: the call has ended.
    fn take_all(&mut self) -> Option<ProgressNotificationParam> {
        self.held.take()
    }
}

#[allow(deprecated)]
fn mcp_log_level(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Notice => LoggingLevel::Notice,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
        LogLevel::Critical => LoggingLevel::Critical,
        LogLevel::Alert => LoggingLevel::Alert,
        LogLevel::Emergency => LoggingLevel::Emergency,
    }
}

/// Syslog order: debug is the least severe.
#[allow(deprecated)]
fn severity(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::NumberOrString;

    use super::*;

    fn report(progress: f64, total: Option<f64>) -> ProgressNotificationParam {
        let mut param =
            ProgressNotificationParam::new(ProgressToken(NumberOrString::Number(1)), progress);
        param.total = total;
        param
    }

    fn value(report: Option<ProgressNotificationParam>) -> Option<f64> {
        report.map(|r| r.progress)
    }

    #[test]
    fn reports_in_a_burst_are_coalesced_to_the_latest() {
        let start = Instant::now();
        let mut gate = ProgressGate::default();
        assert_eq!(value(gate.offer(report(1.0, None), start)), Some(1.0));
        let soon = start + Duration::from_millis(1);
        assert_eq!(value(gate.offer(report(2.0, None), soon)), None);
        assert_eq!(value(gate.offer(report(3.0, None), soon)), None);
        assert_eq!(gate.due(), Some(start + PROGRESS_INTERVAL));
        assert_eq!(value(gate.take_held(soon)), None);
        assert_eq!(value(gate.take_held(start + PROGRESS_INTERVAL)), Some(3.0));
        assert_eq!(gate.due(), None);
    }

    #[test]
    fn the_final_report_and_spaced_reports_go_out_at_once() {
        let start = Instant::now();
        let mut gate = ProgressGate::default();
        assert!(gate.offer(report(1.0, Some(3.0)), start).is_some());
        let soon = start + Duration::from_millis(1);
        assert!(gate.offer(report(2.0, Some(3.0)), soon).is_none());
        // Reaching the total: sent now, and the held report is superseded.
        assert_eq!(value(gate.offer(report(3.0, Some(3.0)), soon)), Some(3.0));
        assert_eq!(gate.take_all(), None);

        let mut gate = ProgressGate::default();
        gate.offer(report(1.0, None), start);
        let later = start + PROGRESS_INTERVAL;
        assert_eq!(value(gate.offer(report(2.0, None), later)), Some(2.0));
    }

    #[test]
    fn reports_must_increase_and_be_finite() {
        let start = Instant::now();
        let mut gate = ProgressGate::default();
        assert!(gate.offer(report(f64::NAN, None), start).is_none());
        assert!(gate.offer(report(5.0, None), start).is_some());
        let later = start + PROGRESS_INTERVAL * 2;
        assert!(gate.offer(report(5.0, None), later).is_none());
        assert!(gate.offer(report(4.0, None), later).is_none());
        assert!(gate.offer(report(f64::INFINITY, None), later).is_none());
        // A held report ends the call with the call.
        gate.offer(report(6.0, None), later);
        assert_eq!(value(gate.offer(report(7.0, None), later)), None);
        assert_eq!(value(gate.take_all()), Some(7.0));
    }
}
