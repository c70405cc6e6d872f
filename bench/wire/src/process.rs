//! What `/proc` says about a server process (resident memory, CPU time, open
//! descriptors, threads), where it listens, and tagged copies of components.

use std::time::Duration;

use anyhow::{Context, Result};

/// Resident set size of a process, in KiB (`VmRSS` in /proc).
pub fn rss_kib(pid: u32) -> Result<u64> {
    status_field(pid, "VmRSS:")
        .map(|value| value.trim_end_matches("kB").trim().to_string())
        .and_then(|value| value.parse().context("VmRSS is not a number"))
}

/// How many threads a process has (`Threads` in /proc).
pub fn threads(pid: u32) -> Result<u64> {
    status_field(pid, "Threads:")?
        .parse()
        .context("Threads is not a number")
}

/// How many file descriptors a process holds open (entries of /proc/PID/fd).
pub fn open_fds(pid: u32) -> Result<u64> {
    let entries = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .with_context(|| format!("listing /proc/{pid}/fd"))?;
    Ok(entries.count() as u64)
}

/// The value of the line of /proc/PID/status that starts with `key`.
fn status_field(pid: u32, key: &str) -> Result<String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("reading /proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(key))
        .map(|value| value.trim().to_string())
        .with_context(|| format!("no {key} line"))
}

/// The CPU time a process has used so far, user and system, all its threads
/// (`utime` + `stime` in `/proc/PID/stat`, in the kernel's fixed 100 Hz ticks).
pub fn cpu_time(pid: u32) -> Result<Duration> {
    const USER_HZ: u64 = 100;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .with_context(|| format!("reading /proc/{pid}/stat"))?;
    // The command name may hold spaces and parentheses; fields follow the last `)`.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .context("no `)` in /proc stat")?
        .1
        .split_whitespace()
        .collect();
    let ticks = |i: usize| -> Result<u64> {
        fields
            .get(i)
            .and_then(|f| f.parse().ok())
            .context("short /proc stat")
    };
    // utime and stime are fields 14 and 15, the 12th and 13th after the name.
    let total = ticks(11)? + ticks(12)?;
    Ok(Duration::from_millis(total * 1000 / USER_HZ))
}

/// The address in a `listening on http://ADDR/mcp` log line.
pub fn listening_addr(line: &str) -> Option<std::net::SocketAddr> {
    const NEEDLE: &str = "listening on http://";
    let rest = &line[line.find(NEEDLE)? + NEEDLE.len()..];
    rest[..rest.find("/mcp")?].parse().ok()
}

/// A copy of a component with a custom section appended: the same tools, but
/// different bytes, so the compile cache treats each copy as a new component.
pub fn tagged_copy(bytes: &[u8], tag: &str) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let name = b"wharf-bench";
    let payload_len = 1 + name.len() + tag.len();
    assert!(payload_len < 128 && name.len() < 128, "short tags only");
    out.push(0x00); // custom section
    out.push(payload_len as u8);
    out.push(name.len() as u8);
    out.extend_from_slice(name);
    out.extend_from_slice(tag.as_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn reads_the_listening_line() {
        let line = "2026-12-02T20:00:00Z  INFO wharf::http: listening on http://127.0.0.1:4567/mcp";
        assert_eq!(
            listening_addr(line),
            Some("127.0.0.1:4567".parse().unwrap())
        );
        assert_eq!(listening_addr("nothing here"), None);
    }

    #[test]
    fn reads_its_own_descriptors_threads_and_memory() {
        // Other tests run alongside (and open files, start threads), so the
        // counts are checked with room for two of theirs.
        let pid = std::process::id();
        let before = open_fds(pid).unwrap();
        let files: Vec<_> = (0..16)
            .map(|_| std::fs::File::open("/proc/self/status").unwrap())
            .collect();
        assert!(open_fds(pid).unwrap() >= before + 14);
        drop(files);
        let threads_before = threads(pid).unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let rx = std::sync::Arc::new(std::sync::Mutex::new(rx));
        let spawned: Vec<_> = (0..8)
            .map(|_| {
                let rx = rx.clone();
                std::thread::spawn(move || rx.lock().unwrap().recv())
            })
            .collect();
        assert!(threads(pid).unwrap() >= threads_before + 6);
        drop(tx);
        for thread in spawned {
            thread.join().unwrap().unwrap_err();
        }
        assert!(rss_kib(pid).unwrap() > 0);
    }

    #[test]
    fn reads_its_own_cpu_time() {
        // Spins until /proc shows 30 ms more CPU time: a busy machine (CI runs
        // other tests alongside) may give the spin far less than its wall time.
        let before = cpu_time(std::process::id()).unwrap();
        let spin = Instant::now();
        let mut x = 0u64;
        let mut after = before;
        while after < before + Duration::from_millis(30) && spin.elapsed() < Duration::from_secs(20)
        {
            for _ in 0..100_000 {
                x = std::hint::black_box(x.wrapping_add(1));
            }
            after = cpu_time(std::process::id()).unwrap();
        }
        let wall = spin.elapsed();
        assert!(
            after >= before + Duration::from_millis(30),
            "{before:?} -> {after:?} in {wall:?}"
        );
        // No more than every CPU busy for the whole spin, plus a clock tick.
        let cpus = std::thread::available_parallelism().unwrap().get() as u32;
        assert!(
            after - before <= wall * cpus + Duration::from_millis(20),
            "{before:?} -> {after:?} in {wall:?}"
        );
    }
}
