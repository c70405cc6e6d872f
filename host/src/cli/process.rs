//! What every subcommand's process gets before it starts: logging to stderr,
//! no transparent huge pages, the async runtime, and the shutdown signals.

use anyhow::Context;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Layer as _};
use wharf::telemetry::{SPAN_TARGET, Telemetry};

use super::LOG_TARGET;

/// Logs go to stderr only: stdout is the stdio transport. `WHARF_LOG` takes
/// tracing's filter syntax (for example `wharf=debug`). The spans meant for
/// OpenTelemetry ([`SPAN_TARGET`]) never reach the log, and reach the
/// exporter only when `telemetry` is on: off, no layer wants them and they
/// cost a cached check each.
pub fn init_logging(telemetry: Option<&Telemetry>) {
    let log = tracing_subscriber::registry().with(log());
    // Not `.with(Option<Layer>)`: an absent layer counts as one that wants
    // every span, so every span of every crate was made, entered and closed
    // (a tenth of a short call's CPU) for no layer at all.
    match telemetry {
        Some(telemetry) => log.with(telemetry.layer()).init(),
        None => log.init(),
    }
}

/// Runs `start` (OpenTelemetry's set-up, which must come before the log:
/// the log's subscriber carries its layer) under a stand-in log of the same
/// filter, so that what the SDK says about its environment while it starts
/// (`OTEL_TRACES_SAMPLER=traceidratio` without a valid argument, say) is
/// seen rather than lost.
pub fn with_start_up_log<T>(start: impl FnOnce() -> T) -> T {
    let log = tracing_subscriber::registry().with(log());
    tracing::subscriber::with_default(log, start)
}

/// The stderr log and its filter.
fn log<S>() -> impl tracing_subscriber::Layer<S>
where
    S: tracing::Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
{
    let filter =
        EnvFilter::try_from_env("WHARF_LOG").unwrap_or_else(|_| EnvFilter::new("wharf=info,warn"));
    let filter = filter.add_directive(
        format!("{SPAN_TARGET}=off")
            .parse()
            .expect("a valid directive"),
    );
    tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_filter(filter)
}

/// Turns transparent huge pages off for this process (Linux; elsewhere there
/// is nothing to do). mimalloc asks for them on its arenas, and Wharf's memory
/// churns: compilations and instances allocate and free in bursts, mimalloc
/// hands freed memory back, and every later fault on it zeroed a whole 2 MiB
/// page. Starting with 100 new plugins spent most of its time in the kernel
/// zeroing pages (docs/performance.md). Where THP is on for all memory, it
/// would also back the pool's linear memories, whose few dirty 4 KiB pages a
/// finished call resets.
///
/// It runs before `main` (see `main.rs`), before mimalloc's own constructor
/// and its first arena: from `main` it came too late for the arena mimalloc
/// had already reserved and touched in 2 MiB pages, 5 MiB of a small
/// server's RSS and a tenth of its start-up CPU.
#[cfg(target_os = "linux")]
pub extern "C" fn no_transparent_huge_pages() {
    // SAFETY: PR_SET_THP_DISABLE takes integer arguments only and changes
    // nothing but this process's page-fault policy; it neither allocates nor
    // touches Rust state, so it may run before `main`.
    if unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) } != 0 {
        let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(-1);
        HUGE_PAGES_ERROR.store(errno, std::sync::atomic::Ordering::Relaxed);
    }
}

/// The errno of a failed [`no_transparent_huge_pages`], or 0.
#[cfg(target_os = "linux")]
static HUGE_PAGES_ERROR: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// Logs it if transparent huge pages could not be turned off before `main`
/// (there was no log yet).
pub fn report_transparent_huge_pages() {
    #[cfg(target_os = "linux")]
    match HUGE_PAGES_ERROR.load(std::sync::atomic::Ordering::Relaxed) {
        0 => {}
        errno => {
            let error = std::io::Error::from_raw_os_error(errno);
            tracing::warn!(target: LOG_TARGET, "could not turn transparent huge pages off: {error}");
        }
    }
}

/// Hands back to the kernel the memory that loading the plugins freed.
/// mimalloc purges freed memory a second after it is freed, but only when
/// it is next asked for memory: a server that goes idle right after its
/// start (a stdio server waiting for its client) kept what compiling,
/// reading and instantiating had freed, about 0.3 MiB per plugin. Forced,
/// this purges every arena of the process and the calling thread's pages.
pub fn return_freed_memory() {
    // SAFETY: mi_collect takes no pointers and may be called at any time,
    // from any thread.
    unsafe { libmimalloc_sys::mi_collect(true) }
}

/// A tokio runtime with a worker per core.
pub fn multi_threaded() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .thread_name("wharf-worker")
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// Resolves on SIGINT (Ctrl-C) or SIGTERM.
pub async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = interrupt => {}
                    _ = terminate.recv() => {}
                }
            }
            Err(error) => {
                tracing::warn!(target: LOG_TARGET, %error, "cannot listen for SIGTERM");
                let _ = interrupt.await;
            }
        }
    }
    #[cfg(not(unix))]
    let _ = interrupt.await;
    tracing::info!(target: LOG_TARGET, "shutdown signal received");
}
