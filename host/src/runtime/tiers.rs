//! Tiered compilation: a component the server has not compiled before is
//! served at once from Winch's quick compile, and Cranelift's optimised
//! compile replaces it when ready.
//!
//! Cranelift makes code that runs several times faster, but compiling a small
//! Rust plugin takes it about 200 ms of two cores (a JavaScript one, seconds),
//! and a reload or a cold start waited for all of it. Winch, wasmtime's
//! baseline compiler, does it in a fifth to a seventh of the time. So a new
//! component is compiled by Winch, loads, lists its tools and answers calls;
//! meanwhile Cranelift compiles it on the [`Optimizer`]'s thread, one
//! component at a time and at a low priority, and the plugin's [`Code`] is
//! swapped: calls under way finish on the code they started on, later ones
//! get the optimised code. Each compile starts in the idle scheduling class
//! (Linux `SCHED_IDLE`): it takes only CPU time no server thread wants, so
//! serving keeps its speed while it works. On a machine that stays busy that
//! could be never, so a compile still running after [`IDLE_GRACE`] goes on
//! at a low normal priority (nice 10) until it is done. A process that stops before it is
//! done hands what is left to a process of its own (see
//! `cli/serve/handoff.rs`), so the optimised code reaches the cache even
//! when every process lives for less than a compile. Both compiles go to the compile cache (each engine
//! has its own folder), Winch's only until Cranelift's is there: a component
//! seen before loads optimised, or, if the server stopped before that was
//! ready, quick without compiling. A component Winch cannot compile (a
//! proposal it lacks) is compiled by Cranelift before it loads, as without
//! tiers.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, Weak, mpsc};
use std::time::Instant;

use arc_swap::ArcSwap;

use super::cache::ContentHash;
use super::code::{Code, CodeMaker};
use super::compile::optimize;
use super::engine::Compilers;
use super::function_cache::FunctionCache;
use super::state::Sandbox;
use crate::docs::PackageDocs;

/// A plugin whose quick code is to be replaced with Cranelift's.
pub(crate) struct TierUp {
    pub(crate) bytes: Vec<u8>,
    pub(crate) docs: PackageDocs,
    pub(crate) name: Arc<str>,
    pub(crate) sandbox: Arc<Sandbox>,
    /// The engines that made the quick code (Cranelift's of them compiles it
    /// again).
    pub(crate) compilers: Arc<Compilers>,
    /// Makes the optimised code.
    pub(crate) maker: CodeMaker,
    /// The plugin's code; gone if the plugin was dropped (reloaded or
    /// removed) meanwhile, and then nothing is compiled.
    pub(crate) code: Weak<ArcSwap<Code>>,
}

/// The thread that makes optimised code, one plugin at a time in the order
/// they loaded, at a low priority: the quick compiles of a folder still
/// loading and the calls being served come first. It starts with the first
/// job (a server whose components are all cached never needs it, nor the
/// stack and allocator pages of its two threads) and ends with the runtime.
pub(crate) struct Optimizer {
    functions: Arc<FunctionCache>,
    /// The thread's queue, made when the thread starts.
    jobs: OnceLock<mpsc::Sender<TierUp>>,
    /// Jobs queued or under way.
    outstanding: Arc<AtomicUsize>,
    /// Held by the thread while it works on a plugin; tests hold it to keep
    /// a plugin on its quick code.
    pub(crate) turn: Arc<tokio::sync::Mutex<()>>,
}

/// How much lower than the server's the optimiser thread's priority is once
/// a compile has had its [`IDLE_GRACE`] (a nice value; Linux only).
const OPTIMIZER_NICENESS: i32 = 10;

/// How long a compile runs in the idle class before it may take CPU time
/// from the server.
pub(crate) const IDLE_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

impl Optimizer {
    /// An optimiser whose thread has not started yet.
    pub(crate) fn new(functions: Arc<FunctionCache>) -> Self {
        Self {
            functions,
            jobs: OnceLock::new(),
            outstanding: Arc::new(AtomicUsize::new(0)),
            turn: Arc::new(tokio::sync::Mutex::new(())),
        }
    }

    /// Starts the thread and its watch; the queue it takes jobs from.
    fn start(&self) -> mpsc::Sender<TierUp> {
        let (jobs, queue) = mpsc::channel::<TierUp>();
        let held = self.turn.clone();
        let functions = self.functions.clone();
        let done = self.outstanding.clone();
        let clock = Arc::new(CompileClock::new());
        let watched = Arc::downgrade(&clock);
        std::thread::Builder::new()
            .name("wharf-optimize".into())
            .spawn(move || {
                clock.thread.store(this_thread(), Ordering::Release);
                for job in queue {
                    set_idle(true, 0);
                    let _turn = held.blocking_lock();
                    clock.started();
                    job.run(&functions);
                    clock.stopped();
                    done.fetch_sub(1, Ordering::AcqRel);
                }
            })
            .expect("spawning the optimiser thread");
        std::thread::Builder::new()
            .name("wharf-optimize-watch".into())
            .spawn(move || watch_grace(watched))
            .expect("spawning the optimiser's watch");
        jobs
    }

    /// Queues `job`, starting the thread if this is the first.
    pub(crate) fn submit(&self, job: TierUp) {
        self.outstanding.fetch_add(1, Ordering::AcqRel);
        if self.jobs.get_or_init(|| self.start()).send(job).is_err() {
            self.outstanding.fetch_sub(1, Ordering::AcqRel);
            tracing::warn!("the optimiser thread is gone; the quick compile keeps serving");
        }
    }

    /// How many plugins wait for (or are getting) their optimised code.
    pub(crate) fn outstanding(&self) -> usize {
        self.outstanding.load(Ordering::Acquire)
    }
}

impl TierUp {
    fn run(self, functions: &FunctionCache) {
        if self.code.strong_count() == 0 {
            return;
        }
        let started = Instant::now();
        let hash = ContentHash::of(&self.bytes);
        let optimized = &self.compilers.optimized;
        let quick_cache = self
            .compilers
            .quick_if_made()
            .and_then(|q| q.cache.as_ref());
        // A plugin of the same bytes may have its optimised code already.
        let shared = optimized.shared.get(&hash).map(Ok).unwrap_or_else(|| {
            optimize(
                &optimized.engine,
                optimized.cache.as_ref(),
                functions,
                &hash,
                &self.bytes,
            )
            .map(|component| optimized.shared.share(hash, component))
        });
        let made = shared
            .inspect(|_| {
                if let Some(quick_cache) = quick_cache {
                    quick_cache.remove(&hash);
                }
            })
            .and_then(|component| {
                self.maker
                    .make(&component, &self.name, &self.sandbox, &self.docs)
            });
        match (made, self.code.upgrade()) {
            (Ok(made), Some(code)) => {
                code.store(Arc::new(made.code));
                tracing::debug!(
                    plugin = %self.name,
                    elapsed_ms = started.elapsed().as_millis() as u64,
                    "optimised code in place"
                );
            }
            (Ok(_), None) => {}
            (Err(error), _) => tracing::warn!(
                plugin = %self.name,
                "the optimised compile failed; the quick one keeps serving: {error}"
            ),
        }
    }
}

/// When the optimiser's current compile started, for [`watch_grace`].
struct CompileClock {
    origin: Instant,
    /// The optimiser thread's id (0 until it has started).
    thread: std::sync::atomic::AtomicI32,
    /// Milliseconds since `origin` when the current compile started (plus
    /// one, so 0 means none is under way).
    since: std::sync::atomic::AtomicU64,
}

impl CompileClock {
    fn new() -> Self {
        Self {
            origin: Instant::now(),
            thread: 0.into(),
            since: 0.into(),
        }
    }

    fn now_ms(&self) -> u64 {
        self.origin.elapsed().as_millis() as u64 + 1
    }

    fn started(&self) {
        self.since.store(self.now_ms(), Ordering::Release);
    }

    fn stopped(&self) {
        self.since.store(0, Ordering::Release);
    }
}

/// Raises a compile past its [`IDLE_GRACE`] out of the idle class; ends with
/// the optimiser thread.
fn watch_grace(clock: Weak<CompileClock>) {
    let mut raised = 0;
    loop {
        std::thread::sleep(std::time::Duration::from_millis(250));
        let Some(clock) = clock.upgrade() else { return };
        let since = clock.since.load(Ordering::Acquire);
        let grace = IDLE_GRACE.as_millis() as u64;
        if since != 0 && since != raised && clock.now_ms().saturating_sub(since) >= grace {
            set_idle(false, clock.thread.load(Ordering::Acquire));
            tracing::debug!("an optimised compile outlived its idle grace; it goes on at nice 10");
            raised = since;
        }
    }
}

/// The calling thread's id (0 off Linux).
fn this_thread() -> i32 {
    #[cfg(target_os = "linux")]
    // SAFETY: a plain system call without arguments.
    return unsafe { libc::gettid() };
    #[cfg(not(target_os = "linux"))]
    0
}

/// Puts `thread` (0: the calling one) in the idle scheduling class, or
/// back in the normal class at nice [`OPTIMIZER_NICENESS`].
fn set_idle(idle: bool, thread: i32) {
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param { sched_priority: 0 };
        let policy = if idle {
            libc::SCHED_IDLE
        } else {
            libc::SCHED_OTHER
        };
        // SAFETY: plain system calls on one thread of this process; `param`
        // outlives the call.
        let set = unsafe { libc::sched_setscheduler(thread, policy, &param) };
        let tid = if thread == 0 { this_thread() } else { thread };
        // SAFETY: as above, no pointers.
        let nice =
            unsafe { libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, OPTIMIZER_NICENESS) };
        if set != 0 || nice != 0 {
            tracing::debug!(
                idle,
                "the optimiser thread's priority is unchanged: {}",
                std::io::Error::last_os_error()
            );
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (idle, thread);
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests;
