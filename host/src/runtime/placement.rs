//! Where a call's guest code runs.
//!
//! On a multi-threaded tokio runtime a call could simply run in the task that
//! asked for it. Both transports instead serve the protocol on single-threaded
//! runtimes (stdio on one thread, HTTP on one per core), because hopping between
//! worker threads (a futex wake-up and a cache miss per hop) was a large part
//! of what a short call cost. Guest code must not hold such a thread, though,
//! nor keep long calls from running in parallel. So a call starts where it was
//! asked for, and once its guest has run for a whole epoch tick (it yields at
//! each, see `Plugin::new_store`) the rest of the call moves to a pool of
//! worker threads. Most calls end well within a tick and never move.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::Poll;

use tokio::runtime::Handle;

/// Where guest code runs; see the module docs.
#[derive(Debug, Clone, Default)]
pub enum Placement {
    /// In the calling task, whatever thread that is on.
    #[default]
    Caller,
    /// In the calling task until the guest has run for a whole epoch tick, then on
    /// this runtime's workers.
    MoveLongCalls(Handle),
}

/// Counts the epoch ticks a store's guest has seen (its epoch callback runs at
/// each one), so a call is known to be long.
#[derive(Debug, Clone, Default)]
pub(crate) struct EpochTicks(Arc<AtomicU32>);

impl EpochTicks {
    /// Records an epoch tick during the guest's run.
    pub(crate) fn saw_one(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    /// Whether the guest has run for at least a whole tick. The first tick it
    /// sees may come at any point of a short call; by the second, it has run
    /// from one tick to the next.
    fn ran_a_whole_one(&self) -> bool {
        self.0.load(Ordering::Relaxed) >= 2
    }
}

impl Placement {
    /// Runs `work`, guest code whose epoch ticks `ticks` counts, where this
    /// placement says. Dropping the returned future stops `work` wherever it runs.
    pub(crate) async fn run<F>(&self, ticks: &EpochTicks, work: F) -> F::Output
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let Self::MoveLongCalls(workers) = self else {
            return work.await;
        };
        let mut work: Pin<Box<F>> = Box::pin(work);
        let here = std::future::poll_fn(|cx| match work.as_mut().poll(cx) {
            Poll::Ready(output) => Poll::Ready(Some(output)),
            // The guest yielded at an epoch tick: it has already woken its
            // task, and the wake-up of a task that no longer polls it is harmless.
            Poll::Pending if ticks.ran_a_whole_one() => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        })
        .await;
        if let Some(output) = here {
            return output;
        }
        tracing::debug!("the guest ran for a whole epoch tick; its call moves to the workers");
        let moved = AbortOnDrop(workers.spawn(work));
        match moved.await {
            Ok(output) => output,
            Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
            // Only aborted when this future is dropped, and then nobody awaits it.
            Err(error) => unreachable!("a moved call was cancelled while awaited: {error}"),
        }
    }
}

/// A spawned task that stops when its handle is dropped (a call whose client
/// went away, say), as the call would have in the caller's task.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Future for AbortOnDrop<T> {
    type Output = Result<T, tokio::task::JoinError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.0).poll(cx)
    }
}

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;

    /// A stand-in for guest code that sees `count` epoch ticks, yielding at
    /// each as the epoch callback makes a guest do.
    async fn guest(ticks: EpochTicks, count: usize) -> Vec<std::thread::ThreadId> {
        let mut threads = vec![std::thread::current().id()];
        for _ in 0..count {
            ticks.saw_one();
            tokio::task::yield_now().await;
            threads.push(std::thread::current().id());
        }
        threads
    }

    /// Worker threads shared by the tests (a runtime may not be dropped
    /// inside another's task).
    fn workers() -> Placement {
        static POOL: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
        let pool = POOL.get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .build()
                .unwrap()
        });
        Placement::MoveLongCalls(pool.handle().clone())
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_call_that_sees_no_tick_stays_on_the_calling_thread() {
        let placement = workers();
        let ticks = EpochTicks::default();
        let here = std::thread::current().id();
        let threads = placement.run(&ticks, guest(ticks.clone(), 0)).await;
        assert_eq!(threads, vec![here]);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_call_that_sees_one_tick_stays() {
        let placement = workers();
        let ticks = EpochTicks::default();
        let here = std::thread::current().id();
        let threads = placement.run(&ticks, guest(ticks.clone(), 1)).await;
        assert_eq!(threads, vec![here, here]);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_call_that_runs_a_whole_tick_moves_to_the_workers() {
        let placement = workers();
        let ticks = EpochTicks::default();
        let here = std::thread::current().id();
        let threads = placement.run(&ticks, guest(ticks.clone(), 4)).await;
        assert_eq!(threads[..2], [here, here], "starts where it was asked for");
        assert!(
            threads[2..].iter().all(|t| *t != here),
            "continues on a worker after its second tick: {threads:?}"
        );
    }

    #[tokio::test(flavor = "current_thread")]
    async fn caller_placement_never_moves() {
        let ticks = EpochTicks::default();
        let here = std::thread::current().id();
        let threads = Placement::Caller.run(&ticks, guest(ticks.clone(), 3)).await;
        assert!(threads.iter().all(|t| *t == here));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn dropping_a_moved_call_stops_it() {
        let placement = workers();
        let ticks = EpochTicks::default();
        let running = Arc::new(AtomicBool::new(true));
        let flag = running.clone();
        let work = {
            let ticks = ticks.clone();
            async move {
                // Clears the flag when the future is dropped, finished or not.
                struct Stopped(Arc<AtomicBool>);
                impl Drop for Stopped {
                    fn drop(&mut self) {
                        self.0.store(false, Ordering::SeqCst);
                    }
                }
                let _stopped = Stopped(flag);
                loop {
                    ticks.saw_one();
                    tokio::task::yield_now().await;
                }
            }
        };
        let outcome = tokio::time::timeout(Duration::from_millis(50), placement.run(&ticks, work));
        assert!(outcome.await.is_err(), "the endless call is still running");
        for _ in 0..200 {
            if !running.load(Ordering::SeqCst) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        panic!("the moved call kept running after its future was dropped");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_panic_in_a_moved_call_reaches_the_caller() {
        let placement = workers();
        let ticks = EpochTicks::default();
        let work = {
            let ticks = ticks.clone();
            async move {
                for _ in 0..2 {
                    ticks.saw_one();
                    tokio::task::yield_now().await;
                }
                panic!("guest host bug");
            }
        };
        let caught = tokio::spawn(async move { placement.run(&ticks, work).await });
        let error = caught.await.expect_err("the panic comes back");
        assert!(error.is_panic());
    }
}
