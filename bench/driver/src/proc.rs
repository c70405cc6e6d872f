//! Starting the servers under test and reading their memory use (with
//! `wharf_wire::process`).

use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
pub use wharf_wire::process::rss_kib;
use wharf_wire::process::{listening_addr, tagged_copy};

/// How to start one of the two servers.
#[derive(Debug, Clone)]
pub struct ServerCmd {
    /// `wharf` or `baseline`, as shown in the report.
    pub label: &'static str,
    pub program: PathBuf,
    pub args: Vec<String>,
}

impl ServerCmd {
    /// Fills `cache` (the folder this Wharf command's `--cache-dir` names)
    /// with optimised code, the way a server that lives long enough leaves
    /// it: `WHARF_FINISH_OPTIMIZING` serves nothing, waits for the optimiser
    /// and exits; `--no-quick-compile` makes Cranelift's code at once, which
    /// is what that handoff would make anyway. Without it a measured server
    /// would run Winch's quick code and share the cores with its optimiser.
    pub fn precompile(&self, cache: &Path) -> Result<()> {
        // A handoff fills an existing cache only.
        std::fs::create_dir_all(cache).with_context(|| format!("making {}", cache.display()))?;
        let mut fill = self.clone();
        fill.args.push("--no-quick-compile".into());
        let status = fill
            .command_with_env("WHARF_FINISH_OPTIMIZING", "1")
            .status()
            .context("precompiling")?;
        anyhow::ensure!(
            status.success(),
            "precompiling into {} failed: {status}",
            cache.display()
        );
        Ok(())
    }

    /// The command with one more environment variable, its output discarded.
    pub fn command_with_env(&self, key: &str, value: &str) -> Command {
        let mut cmd = self.command(&[]);
        cmd.env(key, value)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        cmd
    }

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

/// Fills `dir` with `count` tagged copies of `component`, named `{stem}{i}.wasm`.
pub fn fill_plugin_dir(dir: &Path, component: &[u8], stem: &str, count: usize) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    for i in 0..count {
        let bytes = tagged_copy(component, &format!("{stem}{i}"));
        std::fs::write(dir.join(format!("{stem}{i}.wasm")), bytes)?;
    }
    Ok(())
}
