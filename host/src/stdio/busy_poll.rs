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
//! The poll backs off where it does not pay. Spinning only helps while this
//! thread has a CPU to itself: on a machine busy with other work, the spin
//! takes the CPU the client (or anything else) needs to send the next
//! request, and in one such run the pipelined stdio figure fell to a fifth
//! of the quiet machine's. So each poll is judged: one that found input
//! while keeping its CPU (its thread CPU time close to the wall time it
//! took) pays; one that was preempted (the scheduler gave its CPU away for a
//! good part of it) or found nothing does not, and polling then stops for a
//! while, 1 ms at first and twice as long after each poll that does not pay
//! (at most a second), until one pays again. Under contention the thread
//! thus sleeps as it would with `--stdio-busy-poll-us 0`, trying a poll now
//! and then.
//!
//! The poll also gives way to the process's own background work. A plugin
//! whose calls come faster than they are answered hands the dropping of its
//! stores and the making of its spare instances to an upkeep thread
//! (`runtime::upkeep`); while that thread is in use, a spin on this thread
//! takes a CPU it could use (beside a process spinning on the other core,
//! the pipelined figure fell to four fifths of that with the poll off), and
//! a client with calls in flight keeps this thread busy anyway. So no poll
//! starts, and a poll under way stops, while [`BusyPoll::deferring_to`]'s
//! check says such work is in use; that is not held against the poll.
//!
//! The default budget is long enough for scripted clients that do some work
//! between calls: the official Python SDK's stdio client sends its next call
//! about 250 µs after an answer, and with a 100 µs budget it found the thread
//! asleep every time (p50 round trip 267-355 µs against 166-174 µs with the
//! poll). The poll spends CPU only while requests keep coming within the
//! budget, at most the pause it replaces.

use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The default budget, in microseconds (`--stdio-busy-poll-us`).
pub const DEFAULT_BUSY_POLL_US: u64 = 1000;

/// The first pause of polling after a poll that did not pay.
const FIRST_BACKOFF: Duration = Duration::from_millis(1);
/// The longest pause of polling.
const MAX_BACKOFF: Duration = Duration::from_secs(1);
/// A poll whose thread ran for less than this share of its wall time was
/// preempted: something else wanted its CPU.
const PREEMPTED_BELOW: f64 = 0.7;
/// Polls shorter than this are not judged for preemption (the clocks' own
/// cost and granularity dominate).
const JUDGED_FROM: Duration = Duration::from_micros(20);

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
    /// No poll before this time (nanoseconds since `origin`).
    paused_until: AtomicU64,
    /// The current pause after a poll that did not pay (nanoseconds; 0 when
    /// the last one paid).
    backoff: AtomicU64,
    /// Whether other work of the process wants a CPU now (see the module docs).
    others_working: fn() -> bool,
}

/// How a poll went.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Polled {
    found: bool,
    /// It stopped early for other work of the process, and is not judged.
    gave_way: bool,
    wall: Duration,
    /// The polling thread's CPU time meanwhile (`None` where unknown).
    cpu: Option<Duration>,
}

impl Polled {
    /// Whether polling was worth its CPU: input came, and the thread kept
    /// its CPU while it waited.
    fn paid(&self) -> bool {
        self.found && !self.preempted()
    }

    fn preempted(&self) -> bool {
        match self.cpu {
            Some(cpu) if self.wall >= JUDGED_FROM => {
                cpu.as_secs_f64() < self.wall.as_secs_f64() * PREEMPTED_BELOW
            }
            _ => false,
        }
    }
}

impl BusyPoll {
    /// Busy-polling of this process's stdin (file descriptor 0), or `None`
    /// when `budget` is zero, the process may run on one CPU only, or this is
    /// not Unix.
    pub fn for_stdin(budget: Duration) -> Option<Self> {
        let cpus = crate::cores::cores();
        (cfg!(unix) && cpus > 1 && !budget.is_zero()).then(|| Self::new(0, budget))
    }

    fn new(fd: c_int, budget: Duration) -> Self {
        Self {
            fd,
            budget,
            origin: Instant::now(),
            idle_since: AtomicU64::new(0),
            warm: AtomicBool::new(false),
            paused_until: AtomicU64::new(0),
            backoff: AtomicU64::new(0),
            others_working: || false,
        }
    }

    /// Polls only while `others_working` says no other work of the process
    /// wants a CPU (see the module docs).
    pub fn deferring_to(mut self, others_working: fn() -> bool) -> Self {
        self.others_working = others_working;
        self
    }

    /// The longest poll before a sleep.
    pub fn budget(&self) -> Duration {
        self.budget
    }

    /// Before the thread sleeps: polls the input first if requests have been
    /// arriving back to back.
    pub fn before_park(&self) {
        let now = self.now();
        self.idle_since.store(now, Ordering::Relaxed);
        if self.is_warm()
            && now >= self.paused_until.load(Ordering::Relaxed)
            && !(self.others_working)()
        {
            let polled = wait_readable(self.fd, self.budget, self.others_working);
            self.judge(polled);
        }
    }

    /// Pauses polling after a poll that did not pay, for twice as long as
    /// the pause before (from [`FIRST_BACKOFF`] to [`MAX_BACKOFF`]); a poll
    /// that paid ends the pauses.
    fn judge(&self, polled: Polled) {
        if polled.gave_way {
            return;
        }
        if polled.paid() {
            self.backoff.store(0, Ordering::Relaxed);
            return;
        }
        let last = self.backoff.load(Ordering::Relaxed);
        let next = if last == 0 {
            FIRST_BACKOFF.as_nanos() as u64
        } else {
            last.saturating_mul(2).min(MAX_BACKOFF.as_nanos() as u64)
        };
        self.backoff.store(next, Ordering::Relaxed);
        self.paused_until
            .store(self.now().saturating_add(next), Ordering::Relaxed);
    }

    /// Whether polling is paused now.
    #[cfg(test)]
    fn is_paused(&self) -> bool {
        self.now() < self.paused_until.load(Ordering::Relaxed)
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

/// Polls `fd` without blocking until it is readable or hung up (found), or
/// until `budget` has passed or polling fails (not found), or until
/// `give_way` says other work wants the CPU.
#[cfg(unix)]
fn wait_readable(fd: c_int, budget: Duration, give_way: fn() -> bool) -> Polled {
    let start = Instant::now();
    let cpu_start = thread_cpu_time();
    let mut gave_way = false;
    let found = loop {
        let mut entry = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: `entry` is one valid pollfd for the duration of the call, and
        // a zero timeout never blocks. An fd that is not open reports POLLNVAL.
        let ready = unsafe { libc::poll(&mut entry, 1, 0) };
        if ready != 0 {
            break ready > 0;
        }
        if start.elapsed() >= budget {
            break false;
        }
        if give_way() {
            gave_way = true;
            break false;
        }
        std::hint::spin_loop();
    };
    let cpu = cpu_start
        .zip(thread_cpu_time())
        .map(|(from, to)| to.saturating_sub(from));
    Polled {
        found,
        gave_way,
        wall: start.elapsed(),
        cpu,
    }
}

/// The calling thread's CPU time.
#[cfg(unix)]
fn thread_cpu_time() -> Option<Duration> {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid timespec for the duration of the call.
    let done = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    (done == 0).then(|| Duration::new(now.tv_sec as u64, now.tv_nsec as u32))
}

/// Never called: [`BusyPoll::for_stdin`] is `None` off Unix.
#[cfg(not(unix))]
fn wait_readable(_fd: c_int, _budget: Duration, _give_way: fn() -> bool) -> Polled {
    Polled {
        found: false,
        gave_way: false,
        wall: Duration::ZERO,
        cpu: None,
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;

    fn never() -> bool {
        false
    }

    fn always() -> bool {
        true
    }

    fn pipe() -> (std::io::PipeReader, std::io::PipeWriter) {
        std::io::pipe().expect("pipe")
    }

    #[test]
    fn input_already_there_ends_the_poll_at_once() {
        let (reader, mut writer) = pipe();
        writer.write_all(b"{}\n").unwrap();
        let polled = wait_readable(reader.as_raw_fd(), Duration::from_secs(60), never);
        assert!(polled.found && polled.paid());
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
        assert!(wait_readable(reader.as_raw_fd(), Duration::from_secs(60), never).found);
        assert!(started.elapsed() >= Duration::from_millis(20));
        drop(late.join());
    }

    #[test]
    fn a_closed_writer_ends_the_poll() {
        let (reader, writer) = pipe();
        drop(writer);
        assert!(wait_readable(reader.as_raw_fd(), Duration::from_secs(60), never).found);
    }

    #[test]
    fn no_input_polls_for_the_whole_budget() {
        let (reader, _writer) = pipe();
        let started = Instant::now();
        let polled = wait_readable(reader.as_raw_fd(), Duration::from_millis(5), never);
        assert!(!polled.found && !polled.paid());
        assert!(started.elapsed() >= Duration::from_millis(5));
        assert!(polled.wall >= Duration::from_millis(5));
        assert!(polled.cpu.is_some(), "Linux reports thread CPU time");
    }

    fn polled(found: bool, wall_us: u64, cpu_us: u64) -> Polled {
        Polled {
            found,
            gave_way: false,
            wall: Duration::from_micros(wall_us),
            cpu: Some(Duration::from_micros(cpu_us)),
        }
    }

    #[test]
    fn a_poll_pays_only_if_it_found_input_and_kept_its_cpu() {
        assert!(polled(true, 100, 95).paid());
        assert!(!polled(false, 1000, 1000).paid(), "nothing came");
        assert!(!polled(true, 1000, 300).paid(), "preempted for most of it");
        assert!(polled(true, 10, 1).paid(), "too short to judge");
        let unknown = Polled {
            found: true,
            gave_way: false,
            wall: Duration::from_millis(1),
            cpu: None,
        };
        assert!(unknown.paid());
    }

    #[test]
    fn polls_that_do_not_pay_pause_polling_for_longer_each_time() {
        let (reader, _writer) = pipe();
        let poll = BusyPoll::new(reader.as_raw_fd(), Duration::from_micros(100));
        assert!(!poll.is_paused());
        poll.judge(polled(true, 1000, 200));
        assert!(poll.is_paused(), "preempted");
        assert_eq!(poll.backoff.load(Ordering::Relaxed), 1_000_000);
        poll.judge(polled(false, 100, 100));
        assert_eq!(poll.backoff.load(Ordering::Relaxed), 2_000_000);
        for _ in 0..20 {
            poll.judge(polled(false, 100, 100));
        }
        assert_eq!(
            poll.backoff.load(Ordering::Relaxed),
            MAX_BACKOFF.as_nanos() as u64
        );
        poll.judge(polled(true, 100, 100));
        assert_eq!(poll.backoff.load(Ordering::Relaxed), 0, "a poll that paid");
    }

    #[test]
    fn a_poll_gives_way_to_other_work_and_is_not_held_against_it() {
        let (reader, _writer) = pipe();
        let polled = wait_readable(reader.as_raw_fd(), Duration::from_secs(60), always);
        assert!(polled.gave_way && !polled.found);
        let poll = BusyPoll::new(reader.as_raw_fd(), Duration::from_secs(60)).deferring_to(always);
        poll.judge(polled);
        assert!(!poll.is_paused(), "giving way is no failure");
        poll.record_idle(Duration::ZERO);
        let started = Instant::now();
        // Warm, but other work runs: returns at once (a poll would spin a minute).
        poll.before_park();
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn a_paused_warm_thread_sleeps_without_polling() {
        let (reader, _writer) = pipe();
        let poll = BusyPoll::new(reader.as_raw_fd(), Duration::from_secs(60));
        poll.record_idle(Duration::ZERO);
        assert!(poll.is_warm());
        poll.backoff
            .store(MAX_BACKOFF.as_nanos() as u64, Ordering::Relaxed);
        poll.paused_until
            .store(poll.now() + 60_000_000_000, Ordering::Relaxed);
        let started = Instant::now();
        // Warm but paused: returns at once (a poll would spin a minute).
        poll.before_park();
        assert!(started.elapsed() < Duration::from_secs(10));
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
