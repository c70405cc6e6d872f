//! How many components compile at once.
//!
//! wasmtime compiles a component's functions in parallel on rayon's global
//! pool. A rayon worker waiting for its share of one compile runs other
//! queued work meanwhile, on the same stack, and that includes whole
//! compiles queued from other threads. A folder of a thousand new components,
//! each loaded on a blocking thread of its own, queued hundreds of compiles at
//! once, and a worker nested over a thousand of them until its stack
//! overflowed and the process aborted. Compiling more components at once than
//! there are cores gains nothing anyway (each already uses every core) and
//! holds every compile's working memory at once. So compiles take turns: as
//! many run at a time as there are cores, and a worker can nest only those.

use std::sync::LazyLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::Semaphore;
use tokio::task::JoinError;

/// The gate every load-time compile of this process goes through: rayon's
/// pool, which it protects, is process-wide too.
pub(crate) static COMPILES: LazyLock<Gate> = LazyLock::new(|| Gate::new(crate::cores::cores()));

/// The gate every load-time read of the compile caches goes through. It
/// guards no stack, but each blocking thread has an allocator heap of its
/// own: a folder of 100 cached components read each on a thread of its own
/// made about 70 threads, and the components' metadata (about 100 KB each)
/// spread over 70 heaps held about 330 KiB of pages per plugin. Reads take
/// as many turns as there are cores, so a few threads serve them all.
pub(crate) static CACHE_READS: LazyLock<Gate> = LazyLock::new(|| Gate::new(crate::cores::cores()));

/// Runs work (compiles, cache reads) on blocking threads, at most `turns`
/// at a time.
pub(crate) struct Gate {
    turns: Semaphore,
    limit: usize,
    /// The most that ran at once, for tests.
    most: AtomicUsize,
}

impl Gate {
    pub(crate) fn new(turns: usize) -> Self {
        let limit = turns.max(1);
        Self {
            turns: Semaphore::new(limit),
            limit,
            most: AtomicUsize::new(0),
        }
    }

    /// Waits for a turn (without holding a thread), then runs `work` on a
    /// blocking thread.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, JoinError> {
        let _turn = self
            .turns
            .acquire()
            .await
            .expect("the gate is never closed");
        // The turns taken, this one included (a count of its own would stay
        // high after a load dropped while it waited for its thread).
        let running = self.limit - self.turns.available_permits();
        self.most.fetch_max(running, Ordering::AcqRel);
        tokio::task::spawn_blocking(work).await
    }

    /// The most compiles that ran at once so far.
    #[cfg(test)]
    pub(crate) fn most_at_once(&self) -> usize {
        self.most.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn no_more_than_its_turns_run_at_once() {
        let gate = Arc::new(Gate::new(2));
        let started = Arc::new(AtomicUsize::new(0));
        let jobs = (0..16).map(|i| {
            let gate = gate.clone();
            let started = started.clone();
            tokio::spawn(async move {
                gate.run(move || {
                    started.fetch_add(1, Ordering::AcqRel);
                    std::thread::sleep(Duration::from_millis(20));
                    i
                })
                .await
                .unwrap()
            })
        });
        let done: Vec<usize> = futures::future::try_join_all(jobs).await.unwrap();
        assert_eq!(done, (0..16).collect::<Vec<_>>());
        assert_eq!(started.load(Ordering::Acquire), 16);
        assert_eq!(gate.most_at_once(), 2);
    }

    #[tokio::test]
    async fn a_gate_of_no_turns_still_runs_one() {
        let gate = Gate::new(0);
        assert_eq!(gate.run(|| 7).await.unwrap(), 7);
        assert_eq!(gate.most_at_once(), 1);
    }
}
