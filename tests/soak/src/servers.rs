//! The `wharf serve` processes under soak: two over stdio (one per era, since
//! a stdio connection is in one era) and one over HTTP, all on the same
//! plugin folder and compile cache, each logging to a file.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use tokio::process::{Child, Command};

/// How long a server may take to load the folder and start serving.
const START_PATIENCE: Duration = Duration::from_secs(180);
/// How long a server may take to exit once told to.
const STOP_PATIENCE: Duration = Duration::from_secs(60);

/// What every server is started with.
pub struct Setup {
    pub wharf: PathBuf,
    pub plugins: PathBuf,
    pub cache: PathBuf,
    /// Where the logs go.
    pub work: PathBuf,
}

/// One running server.
pub struct Server {
    pub label: &'static str,
    pub child: Child,
    pub pid: u32,
    pub log: PathBuf,
}

impl Server {
    /// Starts `wharf serve` with `extra` flags; stdin and stdout are piped
    /// (stdio) or closed (HTTP).
    pub async fn start(setup: &Setup, label: &'static str, extra: &[&str]) -> Result<Self> {
        let log = setup.work.join(format!("{label}.log"));
        let stderr =
            std::fs::File::create(&log).with_context(|| format!("creating {}", log.display()))?;
        let stdio = extra.is_empty();
        let pipe = || if stdio { Stdio::piped() } else { Stdio::null() };
        let child = Command::new(&setup.wharf)
            .arg("serve")
            .arg("--plugins")
            .arg(&setup.plugins)
            .arg("--cache-dir")
            .arg(&setup.cache)
            // Every tool of the folder in one listing page.
            .args(["--page-size", "1000"])
            .args(extra)
            .env_remove("WHARF_LOG")
            .stdin(pipe())
            .stdout(pipe())
            .stderr(stderr)
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {}", setup.wharf.display()))?;
        let pid = child.id().context("the server exited at once")?;
        let mut server = Self {
            label,
            child,
            pid,
            log,
        };
        server.wait_for_log("plugins loaded").await?;
        Ok(server)
    }

    /// What the server logged so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until the log holds `needle`; fails if the server exits first.
    pub async fn wait_for_log(&mut self, needle: &str) -> Result<String> {
        let started = Instant::now();
        loop {
            if let Some(line) = self.log_text().lines().find(|l| l.contains(needle)) {
                return Ok(line.to_string());
            }
            if let Some(status) = self.child.try_wait()? {
                bail!(
                    "{} exited ({status}) before logging {needle:?}:\n{}",
                    self.label,
                    self.log_text()
                );
            }
            if started.elapsed() > START_PATIENCE {
                bail!("{} never logged {needle:?}", self.label);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The address an HTTP server listens on.
    pub async fn http_addr(&mut self) -> Result<SocketAddr> {
        let line = self.wait_for_log("listening on http://").await?;
        wharf_wire::process::listening_addr(&line).context("no address in the listening line")
    }

    /// Asks an HTTP server to stop (SIGTERM: a graceful stop).
    pub fn terminate(&self) {
        // SAFETY: kill(2) with a pid we started and have not reaped.
        unsafe {
            libc::kill(self.pid as libc::pid_t, libc::SIGTERM);
        }
    }

    /// Waits for the process to exit after it was told to.
    pub async fn exit_status(&mut self) -> Result<ExitStatus> {
        match tokio::time::timeout(STOP_PATIENCE, self.child.wait()).await {
            Ok(status) => Ok(status?),
            Err(_) => {
                let _ = self.child.kill().await;
                bail!("{} did not exit within {STOP_PATIENCE:?}", self.label)
            }
        }
    }
}

/// Lines of a log that say the host panicked. A plugin's panic is not one:
/// it is a tool error, logged with what the plugin wrote to stderr (its own
/// `panicked at` line among it), up to the next timestamped line.
pub fn host_panics(log: &str) -> Vec<String> {
    let mut plugin_output = false;
    let mut panics = Vec::new();
    for line in log.lines() {
        if line.starts_with(|c: char| c.is_ascii_digit()) {
            plugin_output = line.contains("plugin=") || line.ends_with("it wrote to stderr:");
            continue;
        }
        if !plugin_output && line.contains("panicked at") {
            panics.push(line.to_string());
        }
    }
    panics
}

/// The folder of plugins, the cache, and the logs of one run, made afresh.
pub fn fresh_folders(out: &Path) -> Result<Setup> {
    let work = out.join("work");
    let _ = std::fs::remove_dir_all(&work);
    let plugins = work.join("plugins");
    let cache = work.join("cache");
    for dir in [&plugins, &cache] {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    Ok(Setup {
        wharf: PathBuf::new(),
        plugins,
        cache,
        work,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_panic_alarms_and_a_plugin_panic_does_not() {
        let log = "\
2026-12-05T10:00:00Z  INFO wharf::runtime::state: thread '<unnamed>' (1) panicked at \
tests/plugins/misbehave/src/lib.rs:227:39: plugin=misbehave stream=\"stderr\"\n\
2026-12-05T10:00:00Z  WARN wharf::server::tools: call failed: the plugin crashed: it \
executed an `unreachable` instruction (a panic or abort); it wrote to stderr:\n\
thread '<unnamed>' (1) panicked at tests/plugins/misbehave/src/lib.rs:227:39:\n\
deliberate panic\n\
2026-12-05T10:00:01Z  INFO wharf: plugins reloaded\n\
thread 'tokio-runtime-worker' panicked at host/src/server.rs:10:5:\n";
        assert_eq!(
            host_panics(log),
            ["thread 'tokio-runtime-worker' panicked at host/src/server.rs:10:5:"]
        );
    }
}
