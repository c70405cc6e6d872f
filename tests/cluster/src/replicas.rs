//! The `wharf serve --http` replicas: one plugin folder, one compile cache,
//! one `--state-key-file`, each on a fixed loopback port (so a restarted
//! replica is where nginx expects it) with `--session-route wharf-N`.

use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use tokio::process::{Child, Command};
use wharf_wire::http::Connection;

/// How long a replica may take to load the folder and become ready.
const START_PATIENCE: Duration = Duration::from_secs(120);
/// How long a replica may take to exit after SIGTERM (drain delay, calls in
/// flight, streams ending).
const STOP_PATIENCE: Duration = Duration::from_secs(30);
/// `--drain-delay-ms`: how long a stopping replica keeps serving, not ready.
pub const DRAIN_DELAY_MS: u64 = 300;

/// What every replica is started with.
pub struct Setup {
    pub wharf: PathBuf,
    pub plugins: PathBuf,
    pub cache: PathBuf,
    pub key: PathBuf,
    /// Where the logs go.
    pub work: PathBuf,
}

/// One replica, running or not.
pub struct Replica {
    pub index: usize,
    pub addr: SocketAddr,
    child: Option<Child>,
    /// How many times it was started (each start logs to its own file).
    starts: u32,
}

/// A free loopback port, for a replica or nginx.
pub fn free_port() -> Result<SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0").context("binding a loopback port")?;
    Ok(listener.local_addr()?)
}

impl Replica {
    pub fn new(index: usize) -> Result<Self> {
        Ok(Self {
            index,
            addr: free_port()?,
            child: None,
            starts: 0,
        })
    }

    /// `wharf-N`, the replica's session route and name in the report.
    pub fn name(&self) -> String {
        format!("wharf-{}", self.index)
    }

    /// Starts the replica and waits until `/readyz` answers 200.
    pub async fn start(&mut self, setup: &Setup) -> Result<()> {
        self.starts += 1;
        let log = setup
            .work
            .join(format!("{}.{}.log", self.name(), self.starts));
        let stderr =
            std::fs::File::create(&log).with_context(|| format!("creating {}", log.display()))?;
        let child = Command::new(&setup.wharf)
            .arg("serve")
            .arg("--plugins")
            .arg(&setup.plugins)
            .arg("--cache-dir")
            .arg(&setup.cache)
            .arg("--state-key-file")
            .arg(&setup.key)
            .args(["--session-route", &self.name()])
            .args(["--http", &self.addr.to_string()])
            .args(["--drain-delay-ms", &DRAIN_DELAY_MS.to_string()])
            .args(["--timeout-ms", "10000"])
            .env_remove("WHARF_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {}", setup.wharf.display()))?;
        self.child = Some(child);
        let started = Instant::now();
        loop {
            if self.ready().await {
                return Ok(());
            }
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                bail!(
                    "{} exited ({status}) before it was ready:\n{text}",
                    self.name()
                );
            }
            if started.elapsed() > START_PATIENCE {
                bail!("{} was not ready within {START_PATIENCE:?}", self.name());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Whether `/readyz` answers 200.
    async fn ready(&self) -> bool {
        let probe = async {
            let mut connection = Connection::open(self.addr).await?;
            anyhow::Ok(connection.get("/readyz").await?.status)
        };
        matches!(
            tokio::time::timeout(Duration::from_secs(2), probe).await,
            Ok(Ok(200))
        )
    }

    /// Sends `signal` to the running replica.
    pub fn signal(&self, signal: libc::c_int) -> Result<()> {
        let pid = self
            .child
            .as_ref()
            .and_then(Child::id)
            .with_context(|| format!("{} is not running", self.name()))?;
        // SAFETY: kill(2) on a child we started and have not reaped.
        if unsafe { libc::kill(pid as libc::pid_t, signal) } != 0 {
            bail!("kill({pid}, {signal}): {}", std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// Waits for the signalled replica to exit; returns how it exited.
    pub async fn exited(&mut self) -> Result<std::process::ExitStatus> {
        let mut child = self
            .child
            .take()
            .with_context(|| format!("{} is not running", self.name()))?;
        match tokio::time::timeout(STOP_PATIENCE, child.wait()).await {
            Ok(status) => Ok(status?),
            Err(_) => {
                let _ = child.kill().await;
                bail!("{} did not exit within {STOP_PATIENCE:?}", self.name())
            }
        }
    }
}
