//! Busy-polling stdin for a moment before the stdio thread sleeps.
//!
//! A client that sends its next request a few tens of microseconds after an
//! answer (scripted tool calls, a benchmark's closed loop) finds the stdio
//! thread asleep in `epoll_wait`. Waking it costs a reschedule and, on a
//! virtual machine, an interrupt to an idle vCPU: in docs/performance.md's stdio runs
//! that was a larger share of a round trip than the call itself. So while
//! requests keep arriving back to back, the thread polls stdin for up to a
//! small budget before tokio parks it; input found meanwhile makes the park
//! return at once. A client that pauses longer than the budget (a person, a
//! model) turns it off again after one sleep, so it costs nothing there; and
//! where the process may use one CPU only, spinning would just keep the
//! client off it, so it is never on. Unix only (`poll(2)`).
//!
//! The default budget is long enough for scripted clients that do some work
//! between calls: the official Python SDK's stdio client sends its next call
//! about 250 µs after an answer, and with a 100 µs budget it found the thread
//! asleep every time (p50 round trip 267-355 µs against 166-174 µs with the
//! poll). The poll spends CPU only while requests keep coming within the
//! budget, at most the pause it replaces.

use std::ffi::c_int;
use std::num::NonZero;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The default budget, in microseconds (`--stdio-busy-poll-us`).
pub const DEFAULT_BUSY_POLL_US: u64 = 1000;

/// The busy-poll state of one runtime thread; tokio calls [`before_park`]
/// and [`after_unpark`] around each sleep.
///
/// [`before_park`]: BusyPoll::before_park
/// [`after_unpark`]: BusyPoll::after_unpark
#[derive(Debug)]
pub struct BusyPoll {
    fd: c_int,
    budget: Duration,
    origin: Instant,
    /// When the thread last ran out of work, in nanoseconds since `origin`.
    idle_since: AtomicU64,
    /// Whether the last sleep was short enough that the next one should
    /// start with a poll.
    warm: AtomicBool,
}

impl BusyPoll {
    /// Busy-polling of this process's stdin (file descriptor 0), or `None`
    /// when `budget` is zero, the process may run on one CPU only, or this is
    /// not Unix.
    pub fn for_stdin(budget: Duration) -> Option<Self> {
        let cpus = std::thread::available_parallelism().map_or(1, NonZero::get);
        (cfg!(unix) && cpus > 1 && !budget.is_zero()).then(|| Self::new(0, budget))
    }

    fn new(fd: c_int, budget: Duration) -> Self {
        Self {
            fd,
            budget,
            origin: Instant::now(),
            idle_since: AtomicU64::new(0),
            warm: AtomicBool::new(false),
        }
    }

    /// The longest poll before a sleep.
    pub fn budget(&self) -> Duration {
        self.budget
    }

    /// Before the thread sleeps: polls the input first if requests have been
    /// arriving back to back.
    pub fn before_park(&self) {
        self.idle_since.store(self.now(), Ordering::Relaxed);
        if self.is_warm() {
            wait_readable(self.fd, self.budget);
        }
    }

    /// After the thread wakes: it stays warm only if it was idle for no longer
    /// than the budget. A sleeping thread measures the client's pause plus its
    /// own wake-up, so a fast client is seen as one after at most one sleep.
    pub fn after_unpark(&self) {
        let idle = self
            .now()
            .saturating_sub(self.idle_since.load(Ordering::Relaxed));
        self.record_idle(Duration::from_nanos(idle));
    }

    fn record_idle(&self, idle: Duration) {
        self.warm.store(idle <= self.budget, Ordering::Relaxed);
    }

    fn is_warm(&self) -> bool {
        self.warm.load(Ordering::Relaxed)
    }

    fn now(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
}

/// Polls `fd` without blocking until it is readable or hung up (true), or
/// until `budget` has passed or polling fails (false).
#[cfg(unix)]
fn wait_readable(fd: c_int, budget: Duration) -> bool {
    let start = Instant::now();
    loop {
        let mut entry = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: `entry` is one valid pollfd for the duration of the call, and
        // a zero timeout never blocks. An fd that is not open reports POLLNVAL.
        let ready = unsafe { libc::poll(&mut entry, 1, 0) };
        if ready != 0 {
            return ready > 0;
        }
        if start.elapsed() >= budget {
            return false;
        }
        std::hint::spin_loop();
    }
}

/// Never called: [`BusyPoll::for_stdin`] is `None` off Unix.
#[cfg(not(unix))]
fn wait_readable(_fd: c_int, _budget: Duration) -> bool {
    false
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;

    fn pipe() -> (std::io::PipeReader, std::io::PipeWriter) {
        std::io::pipe().expect("pipe")
    }

    #[test]
    fn input_already_there_ends_the_poll_at_once() {
        let (reader, mut writer) = pipe();
        writer.write_all(b"{}\n").unwrap();
        assert!(wait_readable(reader.as_raw_fd(), Duration::from_secs(60)));
    }

    #[test]
    fn input_written_during_the_poll_ends_it() {
        let (reader, mut writer) = pipe();
        let started = Instant::now();
        let late = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            writer.write_all(b"{}\n").unwrap();
            writer
        });
        assert!(wait_readable(reader.as_raw_fd(), Duration::from_secs(60)));
        assert!(started.elapsed() >= Duration::from_millis(20));
        drop(late.join());
    }

    #[test]
    fn a_closed_writer_ends_the_poll() {
        let (reader, writer) = pipe();
        drop(writer);
        assert!(wait_readable(reader.as_raw_fd(), Duration::from_secs(60)));
    }

    #[test]
    fn no_input_polls_for_the_whole_budget() {
        let (reader, _writer) = pipe();
        let started = Instant::now();
        assert!(!wait_readable(reader.as_raw_fd(), Duration::from_millis(5)));
        assert!(started.elapsed() >= Duration::from_millis(5));
    }

    #[test]
    fn only_short_sleeps_keep_the_thread_polling() {
        let (reader, _writer) = pipe();
        let poll = BusyPoll::new(reader.as_raw_fd(), Duration::from_micros(100));
        assert!(!poll.is_warm(), "a new thread sleeps at once");
        poll.record_idle(Duration::from_micros(60));
        assert!(poll.is_warm());
        poll.record_idle(Duration::from_micros(100));
        assert!(poll.is_warm());
        poll.record_idle(Duration::from_micros(101));
        assert!(!poll.is_warm(), "a client that paused turns polling off");
    }

    #[test]
    fn a_cold_thread_does_not_poll() {
        let (reader, _writer) = pipe();
        let poll = BusyPoll::new(reader.as_raw_fd(), Duration::from_secs(60));
        // Cold: returns without polling (a warm thread would spin a minute).
        poll.before_park();
        poll.after_unpark();
        assert!(poll.is_warm(), "woken within the budget");
    }

    #[test]
    fn a_zero_budget_turns_it_off() {
        assert!(BusyPoll::for_stdin(Duration::ZERO).is_none());
    }
}
