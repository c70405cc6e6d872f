//! Debian's nginx with the reference configuration (deploy/nginx/wharf.conf),
//! run as the current user from a folder of its own: the reference file with
//! its addresses replaced by the replicas' ports, wrapped in an nginx.conf
//! whose pid, logs and temporary files stay in that folder.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use tokio::process::{Child, Command};

/// The addresses the reference file names, in replica order, and its own.
const REFERENCE_REPLICAS: [&str; 3] = ["127.0.0.1:8081", "127.0.0.1:8082", "127.0.0.1:8083"];
const REFERENCE_LISTEN: &str = "listen 127.0.0.1:8080;";

/// The response header that names the replica(s) nginx tried, added by the
/// wrapper only (the reference file tells clients nothing of the backends).
pub const UPSTREAM_HEADER: &str = "x-wharf-upstream";

pub struct Nginx {
    child: Child,
    dir: PathBuf,
}

/// The reference configuration with `replicas` and `listen` in place of its
/// example addresses.
pub fn configure(reference: &str, replicas: &[SocketAddr], listen: SocketAddr) -> Result<String> {
    if replicas.len() != REFERENCE_REPLICAS.len() {
        bail!(
            "the reference configuration has {} replicas",
            REFERENCE_REPLICAS.len()
        );
    }
    if !reference.contains(REFERENCE_LISTEN) {
        bail!("the reference configuration has no `{REFERENCE_LISTEN}`");
    }
    let mut text = reference.replace(REFERENCE_LISTEN, &format!("listen {listen};"));
    for (example, addr) in REFERENCE_REPLICAS.iter().zip(replicas) {
        if !text.contains(example) {
            bail!("the reference configuration does not name {example}");
        }
        text = text.replace(example, &addr.to_string());
    }
    Ok(text)
}

/// The nginx binary: on PATH, or where Debian puts it.
fn binary() -> Result<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .map(|path| {
            std::env::split_paths(&path)
                .map(|dir| dir.join("nginx"))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    on_path
        .into_iter()
        .chain([PathBuf::from("/usr/sbin/nginx")])
        .find(|candidate| candidate.is_file())
        .context("no nginx: install Debian's (`apt-get install nginx`; .ci/run does)")
}

impl Nginx {
    /// Writes the configuration into `dir` and starts nginx in the
    /// foreground; returns once it accepts connections.
    pub async fn start(dir: &Path, wharf_conf: &str, listen: SocketAddr) -> Result<Self> {
        std::fs::create_dir_all(dir)?;
        // nginx takes relative paths from its prefix (`-p`).
        let dir = &std::fs::canonicalize(dir)?;
        std::fs::write(dir.join("wharf.conf"), wharf_conf)?;
        let path = |name: &str| dir.join(name).display().to_string();
        // Started by root, nginx's workers would switch to `nobody`; say to stay.
        let user = if unsafe { libc::geteuid() } == 0 {
            "user root root;\n"
        } else {
            ""
        };
        let main = format!(
            "{user}worker_processes 1;\n\
             pid {pid};\n\
             error_log {error} warn;\n\
             events {{ worker_connections 1024; }}\n\
             http {{\n\
             \x20   access_log {access};\n\
             \x20   client_body_temp_path {temp}/body;\n\
             \x20   proxy_temp_path {temp}/proxy;\n\
             \x20   fastcgi_temp_path {temp}/fastcgi;\n\
             \x20   uwsgi_temp_path {temp}/uwsgi;\n\
             \x20   scgi_temp_path {temp}/scgi;\n\
             \x20   add_header X-Wharf-Upstream $upstream_addr always;\n\
             \x20   include wharf.conf;\n\
             }}\n",
            pid = path("nginx.pid"),
            error = path("error.log"),
            access = path("access.log"),
            temp = path("temp"),
        );
        std::fs::create_dir_all(dir.join("temp"))?;
        std::fs::write(dir.join("nginx.conf"), main)?;
        let binary = binary()?;
        let child = Command::new(&binary)
            .arg("-p")
            .arg(dir)
            .args(["-c", "nginx.conf", "-g", "daemon off;"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("stderr.log"))?)
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {}", binary.display()))?;
        let mut nginx = Self {
            child,
            dir: dir.to_path_buf(),
        };
        let started = Instant::now();
        while tokio::net::TcpStream::connect(listen).await.is_err() {
            if let Some(status) = nginx.child.try_wait()? {
                bail!("nginx exited ({status}):\n{}", nginx.errors());
            }
            if started.elapsed() > Duration::from_secs(10) {
                bail!("nginx did not open {listen}:\n{}", nginx.errors());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(nginx)
    }

    /// nginx's error log and stderr.
    pub fn errors(&self) -> String {
        let read = |name| std::fs::read_to_string(self.dir.join(name)).unwrap_or_default();
        format!("{}{}", read("stderr.log"), read("error.log"))
    }

    /// Stops nginx (SIGQUIT: graceful) and waits for it.
    pub async fn stop(mut self) -> Result<()> {
        if let Some(pid) = self.child.id() {
            // SAFETY: kill(2) on a child we started and have not reaped.
            unsafe {
                libc::kill(pid as libc::pid_t, libc::SIGQUIT);
            }
        }
        if tokio::time::timeout(Duration::from_secs(10), self.child.wait())
            .await
            .is_err()
        {
            self.child.kill().await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_file_gets_the_ports_of_this_run() {
        let reference = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../deploy/nginx/wharf.conf"
        ))
        .unwrap();
        let replicas: Vec<SocketAddr> = ["127.0.0.1:9001", "127.0.0.1:9002", "127.0.0.1:9003"]
            .iter()
            .map(|a| a.parse().unwrap())
            .collect();
        let text = configure(&reference, &replicas, "127.0.0.1:9000".parse().unwrap()).unwrap();
        assert!(text.contains("listen 127.0.0.1:9000;"));
        assert!(text.contains("server 127.0.0.1:9003 max_fails=1"));
        for example in REFERENCE_REPLICAS {
            assert!(!text.contains(example), "{example}");
        }
        assert_eq!(
            configure(
                "upstream x {}",
                &replicas,
                "127.0.0.1:9000".parse().unwrap()
            )
            .unwrap_err()
            .to_string(),
            "the reference configuration has no `listen 127.0.0.1:8080;`"
        );
    }
}
