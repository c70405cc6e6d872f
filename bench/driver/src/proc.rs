//! Starting the servers under test and reading their memory use.

use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{Context, Result, bail};

/// How to start one of the two servers.
#[derive(Debug, Clone)]
pub struct ServerCmd {
    /// `wharf` or `baseline`, as shown in the report.
    pub label: &'static str,
    pub program: PathBuf,
    pub args: Vec<String>,
}

impl ServerCmd {
    fn command(&self, extra: &[String]) -> Command {
        let mut cmd = Command::new(&self.program);
        // Wharf runs with its default log filter (`wharf=info,warn`): a few
        // lines at start-up, none per call. A wider filter (`info` for every
        // crate) would make rmcp and hyper spans cost Wharf time per request.
        cmd.args(&self.args).args(extra).env_remove("WHARF_LOG");
        cmd
    }
}

/// A server speaking JSON-RPC lines on its stdin and stdout.
pub struct StdioServer {
    pub child: Child,
    pub stdin: ChildStdin,
    pub stdout: BufReader<ChildStdout>,
    line: String,
}

impl StdioServer {
    /// Starts `server`, on CPU `cpu` only if given.
    pub fn start(server: &ServerCmd, cpu: Option<usize>) -> Result<Self> {
        let mut cmd = server.command(&[]);
        if let Some(cpu) = cpu {
            crate::pin::pin_command(&mut cmd, cpu);
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {}", server.program.display()))?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        Ok(Self {
            child,
            stdin,
            stdout,
            line: String::new(),
        })
    }

    /// Sends one line and waits for the next line back.
    pub fn round_trip(&mut self, request: &[u8]) -> Result<&str> {
        self.stdin.write_all(request)?;
        self.stdin.flush()?;
        self.line.clear();
        if self.stdout.read_line(&mut self.line)? == 0 {
            bail!("the server closed its stdout");
        }
        Ok(&self.line)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A server on Streamable HTTP, started on a free loopback port.
pub struct HttpServer {
    pub child: Child,
    pub addr: SocketAddr,
}

impl HttpServer {
    pub fn start(server: &ServerCmd) -> Result<Self> {
        let mut child = server
            .command(&["--http".into(), "127.0.0.1:0".into()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {}", server.program.display()))?;
        let stderr = child.stderr.take().expect("piped stderr");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut sent = false;
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if !sent && let Some(addr) = listening_addr(&line) {
                    let _ = tx.send(addr);
                    sent = true;
                }
            }
        });
        match rx.recv_timeout(Duration::from_secs(120)) {
            Ok(addr) => Ok(Self { child, addr }),
            Err(_) => {
                let _ = child.kill();
                bail!("{} never said where it listens", server.program.display())
            }
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The address in a `listening on http://ADDR/mcp` log line.
fn listening_addr(line: &str) -> Option<SocketAddr> {
    const NEEDLE: &str = "listening on http://";
    let rest = &line[line.find(NEEDLE)? + NEEDLE.len()..];
    rest[..rest.find("/mcp")?].parse().ok()
}

/// Resident set size of a process, in KiB (`VmRSS` in /proc).
pub fn rss_kib(pid: u32) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("reading /proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .context("no VmRSS line")
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

/// Samples a process's RSS every 50 ms while `sampling` is set, returning the
/// largest.
pub fn peak_rss_while(pid: u32, sampling: &AtomicBool) -> u64 {
    let mut peak = 0;
    while sampling.load(Ordering::Relaxed) {
        if let Ok(rss) = rss_kib(pid) {
            peak = peak.max(rss);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    peak
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

/// Fills `dir` with `count` tagged copies of `component`, named `{stem}{i}.wasm`.
pub fn fill_plugin_dir(dir: &Path, component: &[u8], stem: &str, count: usize) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    for i in 0..count {
        let bytes = tagged_copy(component, &format!("{stem}{i}"));
        std::fs::write(dir.join(format!("{stem}{i}.wasm")), bytes)?;
    }
    Ok(())
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
