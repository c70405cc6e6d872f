//! The handoff: a server stopped before its optimised compiles are done
//! leaves them to a background process of its own, which caches them, and
//! which stops when that cache is removed.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::harness::*;

/// The four plugins whose Cranelift compiles, one at a time, cannot be done
/// by the time a client that leaves at once is gone.
const PLUGINS: [&str; 4] = ["calc", "echo", "units", "textstats"];

#[test]
fn a_server_stopped_before_its_optimised_compiles_hands_them_to_a_process_that_caches_them() {
    let cache = tempfile::tempdir().unwrap();
    let dir = plugin_dir(&PLUGINS);
    let flags = ["--cache-dir", cache.path().to_str().unwrap()];
    let mut first = Wharf::start_in(dir.path(), &flags);
    first.close_and_wait();
    assert!(
        first
            .stderr()
            .contains("optimised compiles left: handed to a background process"),
        "{}",
        first.stderr()
    );
    // The handoff stays after the server, and leaves optimised code for the
    // next start, which then compiles nothing and hands off nothing.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let mut next = Wharf::start_in(dir.path(), &flags);
        next.close_and_wait();
        let log = next.stderr();
        if !log.contains("quick compile") {
            assert_eq!(
                log.matches("compiled component taken from the cache")
                    .count(),
                4,
                "{log}"
            );
            assert!(!log.contains("handed to a background process"), "{log}");
            break;
        }
        assert!(Instant::now() < deadline, "never optimised: {log}");
        std::thread::sleep(Duration::from_millis(500));
    }
}

#[test]
fn a_handoff_whose_cache_is_removed_stops_and_does_not_bring_it_back() {
    let scratch = tempfile::tempdir().unwrap();
    let cache = scratch.path().join("cache");
    let dir = plugin_dir(&PLUGINS);
    let mut server = Wharf::start_in(dir.path(), &["--cache-dir", cache.to_str().unwrap()]);
    server.close_and_wait();
    let pid = handoff_pid(&server.stderr());
    // The handoff claims the cache (its lock file) before it loads anything.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !cache.join("optimize.lock").exists() {
        assert!(
            Instant::now() < deadline,
            "the handoff never claimed the cache"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // As a test's cleanup does; a write under way can make one attempt fail.
    while let Err(error) = std::fs::remove_dir_all(&cache) {
        assert!(
            Instant::now() < deadline,
            "the cache could not be removed: {error}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    while is_running(pid) {
        assert!(
            Instant::now() < deadline,
            "the handoff (pid {pid}) went on after its cache was removed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!cache.exists(), "the handoff made the removed cache again");
}

/// The handoff's process id, from the log line of the server that started it.
fn handoff_pid(log: &str) -> u32 {
    let line = log
        .lines()
        .find(|line| line.contains("handed to a background process"))
        .unwrap_or_else(|| panic!("no handoff was started:\n{log}"));
    let digits = line.split("pid=").nth(1).expect("the line names the pid");
    digits
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|pid| pid.parse().ok())
        .unwrap_or_else(|| panic!("no pid in {line:?}"))
}

/// Whether process `pid` still runs (a zombie waiting for its reaper does not).
fn is_running(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(Path::new("/proc").join(pid.to_string()).join("stat"))
    else {
        return false;
    };
    // The state follows the command's name, which is in parentheses.
    let state = stat.rsplit(')').next().unwrap_or("").trim_start();
    !state.starts_with('Z')
}
