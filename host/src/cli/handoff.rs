//! Finishing the optimised compiles of a process that stops before they are
//! done.
//!
//! A new component serves Winch's quick code while Cranelift compiles it in
//! the background (`wharf::runtime` tiers): seconds of work for a JavaScript
//! or Python component. A process that lives for less than that (a test, a
//! client that restarts its stdio server, every cold start of a benchmark)
//! would never store the optimised code, and every start would pay again.
//! So a server stopping with compiles left starts a process of its own, with
//! the same arguments and [`HANDOFF_ENV`] set: it loads the same folder with
//! the same settings (so the same engines and cache), serves nothing, keeps
//! nothing but the cache, and exits once the optimiser (idle priority) has
//! put every compile there. It runs in a process group of its own, with no
//! standard streams, so the client that stopped the server is not kept
//! waiting. One handoff works on a cache at a time (a lock file in it);
//! another one finding it taken exits at once.
//!
//! A handoff works for its cache only: it claims the cache before loading
//! anything, and ends as soon as the cache's folder is gone (within a poll
//! of 20 ms), whatever it is loading or compiling. Nothing it writes makes
//! the folder again (the runtime makes only its engines' folders inside a
//! cache), so removing the cache of a server that has stopped (a test's
//! temporary folder) removes it for good, instead of the handoff bringing
//! back a folder of compiles.

use std::fs::File;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use wharf::runtime::Runtime;

/// Set in the environment of a handoff process.
pub const HANDOFF_ENV: &str = "WHARF_FINISH_OPTIMIZING";

/// The lock file, in the compile cache, of the handoff working on it.
const LOCK_FILE: &str = "optimize.lock";

/// Whether this process is a handoff.
pub fn is_handoff() -> bool {
    std::env::var_os(HANDOFF_ENV).is_some()
}

/// Starts a handoff if `runtime` still has optimised compiles to make and
/// they would be cached (never from a handoff).
pub fn hand_off(runtime: &Runtime, cache_root: Option<&Path>) {
    let left = runtime.optimizing();
    if left == 0 || cache_root.is_none() || is_handoff() {
        return;
    }
    let started = std::env::current_exe().and_then(|exe| {
        let mut command = Command::new(exe);
        command
            .args(std::env::args_os().skip(1))
            .env(HANDOFF_ENV, "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        command.spawn()
    });
    match started {
        Ok(child) => tracing::info!(
            target: super::LOG_TARGET,
            compiles = left,
            pid = child.id(),
            "optimised compiles left: handed to a background process"
        ),
        Err(error) => tracing::warn!(
            target: super::LOG_TARGET,
            "optimised compiles left, and no process could be started to finish them: {error}"
        ),
    }
}

/// A handoff's hold on its cache: the lock file, locked.
#[derive(Debug)]
pub struct Claim {
    _file: File,
}

impl Claim {
    /// Claims the cache at `cache_root` for this handoff, and from then on
    /// ends the process as soon as the cache is removed; `None` if there is
    /// nothing to do: no cache, its folder gone (the lock file is not made
    /// where there is no folder), or another handoff working on it.
    pub fn take(cache_root: Option<&Path>) -> anyhow::Result<Option<Self>> {
        let Some(root) = cache_root else {
            return Ok(None);
        };
        let lock = root.join(LOCK_FILE);
        let file = match File::create(&lock) {
            Ok(file) => file,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                // Removed since the server stopped, or, run by hand, never
                // made: a handoff fills an existing cache only.
                tracing::info!(
                    target: super::LOG_TARGET,
                    dir = %root.display(),
                    "no compile cache folder: nothing to finish"
                );
                return Ok(None);
            }
            Err(error) => return Err(error.into()),
        };
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => return Ok(None),
            Err(std::fs::TryLockError::Error(error)) => return Err(error.into()),
        }
        std::thread::Builder::new()
            .name("wharf-handoff-watch".into())
            .spawn(move || end_when_removed(&lock))?;
        Ok(Some(Self { _file: file }))
    }
}

/// How often a handoff looks whether its cache is still there.
const POLL: Duration = Duration::from_millis(20);

/// Ends the process once `lock` is gone (its cache's folder being removed):
/// at once, whatever it is loading or compiling, so that no write of its
/// makes a folder being removed non-empty for longer than a poll.
fn end_when_removed(lock: &Path) {
    while lock.exists() {
        std::thread::sleep(POLL);
    }
    tracing::info!(
        target: super::LOG_TARGET,
        lock = %lock.display(),
        "the compile cache was removed: optimised compiles left undone"
    );
    std::process::exit(0);
}

/// In a handoff: waits until every optimised compile is in the cache (or the
/// cache is removed, which ends the process; see [`Claim::take`]).
pub async fn finish(runtime: &Runtime, _claim: &Claim) {
    runtime.finish_optimizing().await;
}
