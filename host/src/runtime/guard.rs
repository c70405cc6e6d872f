//! Guest work raced against cancellation and a hard time limit. Guest code
//! is stopped at its deadline by the epoch (see `store`); these guards cover
//! the time a call spends in the host (a WASI sleep, an HTTP request), and
//! stop the work by dropping it.

use std::time::{Duration, Instant};

use super::input::CallClock;
use super::limits::HOST_GRACE;

/// The outcome of guest work raced against cancellation and a hard time limit.
pub(crate) enum Guarded<T> {
    Done(T),
    Cancelled,
    TimedOut,
}

/// Runs `work` until it finishes, `cancel` fires, or `timeout` (plus a grace
/// period for host calls) passes; dropping the future stops the guest.
pub(crate) async fn guarded<T>(
    cancel: &tokio_util::sync::CancellationToken,
    timeout: Duration,
    work: impl Future<Output = T>,
) -> Guarded<T> {
    let deadline = tokio::time::Instant::now() + timeout + HOST_GRACE;
    let mut work = std::pin::pin!(work);
    if let Some(done) = first_poll(cancel, work.as_mut()).await {
        return done;
    }
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Guarded::Cancelled,
        result = tokio::time::timeout_at(deadline, work) => match result {
            Ok(value) => Guarded::Done(value),
            Err(_) => Guarded::TimedOut,
        },
    }
}

/// [`guarded`] for a call that may wait for the client: the time limit follows
/// the call's clock, which stands still during those waits.
pub(crate) async fn guarded_by_clock<T>(
    cancel: &tokio_util::sync::CancellationToken,
    clock: &CallClock,
    work: impl Future<Output = T>,
) -> Guarded<T> {
    let mut work = std::pin::pin!(work);
    if let Some(done) = first_poll(cancel, work.as_mut()).await {
        return done;
    }
    loop {
        let wake = tokio::time::Instant::from_std(clock.next_check() + HOST_GRACE);
        tokio::select! {
            biased;
            _ = cancel.cancelled() => return Guarded::Cancelled,
            value = &mut work => return Guarded::Done(value),
            _ = tokio::time::sleep_until(wake) => {
                let now = Instant::now();
                if clock.expired(now.checked_sub(HOST_GRACE).unwrap_or(now)) {
                    return Guarded::TimedOut;
                }
            }
        }
    }
}

/// The start of [`guarded`]: a call already cancelled does not start, and
/// `work` is polled once. Guest code that neither waits on the host nor runs
/// into an epoch tick (most calls) is done then, and never registers the timer
/// and the cancellation waiter the rest of the guard needs: a lock and a timer
/// wheel entry each, made and dropped again on every call.
async fn first_poll<F: Future>(
    cancel: &tokio_util::sync::CancellationToken,
    mut work: std::pin::Pin<&mut F>,
) -> Option<Guarded<F::Output>> {
    if cancel.is_cancelled() {
        return Some(Guarded::Cancelled);
    }
    std::future::poll_fn(|cx| {
        std::task::Poll::Ready(match work.as_mut().poll(cx) {
            std::task::Poll::Ready(value) => Some(Guarded::Done(value)),
            // The waker `work` was given is the task's own, so nothing is lost
            // when the guard goes on to poll it again.
            std::task::Poll::Pending => None,
        })
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Work that is pending `times` times (waking itself each time), then gives `value`.
    async fn ready_after<T>(times: usize, value: T) -> T {
        for _ in 0..times {
            tokio::task::yield_now().await;
        }
        value
    }

    #[tokio::test]
    async fn a_guard_gives_the_outcome_of_work_done_at_once_or_later() {
        let cancel = tokio_util::sync::CancellationToken::new();
        let limit = Duration::from_secs(5);
        assert!(matches!(
            guarded(&cancel, limit, ready_after(0, 1)).await,
            Guarded::Done(1)
        ));
        assert!(matches!(
            guarded(&cancel, limit, ready_after(3, 2)).await,
            Guarded::Done(2)
        ));
        let clock = CallClock::new(limit);
        assert!(matches!(
            guarded_by_clock(&cancel, &clock, ready_after(0, 3)).await,
            Guarded::Done(3)
        ));
        assert!(matches!(
            guarded_by_clock(&cancel, &clock, ready_after(3, 4)).await,
            Guarded::Done(4)
        ));
    }

    #[tokio::test]
    async fn a_guard_does_not_start_work_already_cancelled() {
        let cancel = tokio_util::sync::CancellationToken::new();
        cancel.cancel();
        let started = std::sync::atomic::AtomicBool::new(false);
        let work = async {
            started.store(true, std::sync::atomic::Ordering::SeqCst);
        };
        assert!(matches!(
            guarded(&cancel, Duration::from_secs(5), work).await,
            Guarded::Cancelled
        ));
        let clock = CallClock::new(Duration::from_secs(5));
        let work = async {
            started.store(true, std::sync::atomic::Ordering::SeqCst);
        };
        assert!(matches!(
            guarded_by_clock(&cancel, &clock, work).await,
            Guarded::Cancelled
        ));
        assert!(!started.load(std::sync::atomic::Ordering::SeqCst));
    }

    #[tokio::test]
    async fn a_guard_stops_pending_work_when_cancelled_or_out_of_time() {
        let cancel = tokio_util::sync::CancellationToken::new();
        let later = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            later.cancel();
        });
        let forever = std::future::pending::<()>();
        assert!(matches!(
            guarded(&cancel, Duration::from_secs(5), forever).await,
            Guarded::Cancelled
        ));

        // With no time of its own, work gets the host grace period and no more.
        let cancel = tokio_util::sync::CancellationToken::new();
        let started = Instant::now();
        let forever = std::future::pending::<()>();
        assert!(matches!(
            guarded(&cancel, Duration::ZERO, forever).await,
            Guarded::TimedOut
        ));
        let clock = CallClock::new(Duration::ZERO);
        let forever = std::future::pending::<()>();
        assert!(matches!(
            guarded_by_clock(&cancel, &clock, forever).await,
            Guarded::TimedOut
        ));
        let waited = started.elapsed();
        assert!(
            waited >= 2 * HOST_GRACE && waited < 2 * HOST_GRACE + Duration::from_secs(2),
            "{waited:?}"
        );
    }
}
