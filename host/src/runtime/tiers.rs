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
//! get the optimised code. The thread runs at the idle scheduling class
//! (Linux `SCHED_IDLE`): it takes only CPU time no server thread wants, so
//! serving keeps its speed while it works. A process that stops before it is
//! done hands what is left to a process of its own (see
//! `cli/serve/handoff.rs`), so the optimised code reaches the cache even
//! when every process lives for less than a compile. Both compiles go to the compile cache (each engine
//! has its own folder), Winch's only until Cranelift's is there: a component
//! seen before loads optimised, or, if the server stopped before that was
//! ready, quick without compiling. A component Winch cannot compile (a
//! proposal it lacks) is compiled by Cranelift before it loads, as without
//! tiers.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Weak, mpsc};
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
/// loading and the calls being served come first. It ends with the runtime.
pub(crate) struct Optimizer {
    jobs: mpsc::Sender<TierUp>,
    /// Jobs queued or under way.
    outstanding: Arc<AtomicUsize>,
    /// Held by the thread while it works on a plugin; tests hold it to keep
    /// a plugin on its quick code.
    #[cfg(test)]
    pub(crate) turn: Arc<tokio::sync::Mutex<()>>,
}

/// How much lower than the server's the optimiser thread's priority is
/// where the idle class cannot be had (a nice value; Linux only).
const OPTIMIZER_NICENESS: i32 = 19;

impl Optimizer {
    /// Starts the thread.
    pub(crate) fn start(functions: Arc<FunctionCache>) -> Self {
        let (jobs, queue) = mpsc::channel::<TierUp>();
        let turn = Arc::new(tokio::sync::Mutex::new(()));
        let held = turn.clone();
        let outstanding = Arc::new(AtomicUsize::new(0));
        let done = outstanding.clone();
        std::thread::Builder::new()
            .name("wharf-optimize".into())
            .spawn(move || {
                lower_priority();
                for job in queue {
                    let _turn = held.blocking_lock();
                    job.run(&functions);
                    done.fetch_sub(1, Ordering::AcqRel);
                }
            })
            .expect("spawning the optimiser thread");
        Self {
            jobs,
            outstanding,
            #[cfg(test)]
            turn,
        }
    }

    /// Queues `job`.
    pub(crate) fn submit(&self, job: TierUp) {
        self.outstanding.fetch_add(1, Ordering::AcqRel);
        if self.jobs.send(job).is_err() {
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
        let quick_cache = self.compilers.quick.as_ref().and_then(|q| q.cache.as_ref());
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

/// Puts the calling thread in the idle scheduling class, or failing that
/// at the lowest nice value.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: plain system calls on the calling thread (0: this thread);
        // `param` outlives the call.
        let idle = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
        if idle == 0 {
            return;
        }
        // SAFETY: as above, no pointers.
        let done = unsafe {
            let thread = libc::gettid();
            libc::setpriority(libc::PRIO_PROCESS, thread as libc::id_t, OPTIMIZER_NICENESS)
        };
        if done != 0 {
            tracing::debug!(
                "the optimiser thread keeps its priority: {}",
                std::io::Error::last_os_error()
            );
        }
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests;
