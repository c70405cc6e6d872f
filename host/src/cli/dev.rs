//! `wharf dev [DIR] --plugins FOLDER [--serve]`: the author's loop. Builds the
//! project, drops `NAME.wasm` into the plugin folder of a running server (whose
//! hot reload does the rest), then watches the sources and does it again on
//! every save, printing build errors or the new tool list.
//!
//! Saves come in bursts (an editor writes a file and its backup, a formatter
//! rewrites it), so a build starts once the project has been quiet for
//! [`QUIET`]. Build outputs (`target/`, `dist/`, `node_modules/`, `*.wasm`)
//! are not sources, or each build would start the next. With `--serve` a
//! child `wharf serve` serves the folder over Streamable HTTP and the client
//! snippet is printed; the child dies with this process.

use std::path::{Component, Path, PathBuf};
use std::process::{Child, Command};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use notify::{RecursiveMode, Watcher};
use wharf::author::{self, Project, Toolchains, build::write_atomically};
use wharf::oneshot::Single;
use wharf::runtime::{CallLimits, Runtime};

use super::cache::CacheArgs;
use super::process::multi_threaded;
use super::single::single_runtime;

/// How long the sources must be quiet before a build starts.
const QUIET: Duration = Duration::from_millis(300);

/// Folders and files a build writes, which never start a build.
const NOT_SOURCES: &[&str] = &["target", "dist", "node_modules", ".git", "__pycache__"];

/// The arguments of `wharf dev`.
#[derive(Args)]
pub struct DevArgs {
    /// The project folder.
    #[arg(default_value = ".")]
    dir: PathBuf,
    /// The plugin folder of the server to update (created if missing).
    #[arg(long)]
    plugins: PathBuf,
    /// Also serve the plugin folder (a child `wharf serve --http`).
    #[arg(long)]
    serve: bool,
    /// Where `--serve` listens.
    #[arg(long, default_value = "127.0.0.1:8931", requires = "serve")]
    listen: String,
    /// Where compiled components are kept.
    #[command(flatten)]
    cache: CacheArgs,
}

impl DevArgs {
    /// Builds, then rebuilds on every save until interrupted.
    pub fn run(self) -> anyhow::Result<()> {
        let project = Project::open(&self.dir)?;
        std::fs::create_dir_all(&self.plugins)
            .with_context(|| format!("creating {}", self.plugins.display()))?;
        let cache_root = self.cache.root();
        let _server = if self.serve {
            Some(serve(&self.plugins, &self.listen, cache_root.as_deref())?)
        } else {
            None
        };
        let async_runtime = multi_threaded()?;
        let runtime = single_runtime(CallLimits::default(), cache_root)?;
        let toolchains = Toolchains::from_env();
        let dest = self.plugins.join(format!("{}.wasm", project.name));

        let (events, changes) = mpsc::channel();
        let mut watcher = notify::recommended_watcher(move |event| {
            let _ = events.send(event);
        })?;
        watcher
            .watch(&project.dir, RecursiveMode::Recursive)
            .with_context(|| format!("watching {}", project.dir.display()))?;
        println!(
            "wharf dev: watching {} ({} project); plugins go to {}",
            project.dir.display(),
            project.language,
            self.plugins.display()
        );
        loop {
            let round = Round {
                dir: &project.dir,
                dest: &dest,
                toolchains: &toolchains,
                runtime: &runtime,
            };
            if let Err(error) = async_runtime.block_on(round.run()) {
                println!("wharf dev: build failed: {error:#}");
            }
            wait_for_change(&changes, &project.dir)?;
        }
    }
}

/// One build and its hand-over to the plugin folder.
struct Round<'a> {
    dir: &'a Path,
    dest: &'a Path,
    toolchains: &'a Toolchains,
    runtime: &'a Runtime,
}

impl Round<'_> {
    async fn run(&self) -> anyhow::Result<()> {
        let built = author::build(self.dir, self.toolchains)?;
        // Load it as the server will, so a component the server would refuse
        // is reported here and never replaces a working one.
        let single = Single::load(self.runtime, &built.component, None).await?;
        let bytes = std::fs::read(&built.component)?;
        write_atomically(self.dest, &bytes)?;
        let tools: Vec<String> = single.report().tools.into_iter().map(|t| t.name).collect();
        println!(
            "wharf dev: built {} in {:.1} s -> {}; tools: {}",
            built.component.display(),
            built.elapsed.as_secs_f64(),
            self.dest.display(),
            if tools.is_empty() {
                "(none)".to_string()
            } else {
                tools.join(", ")
            }
        );
        Ok(())
    }
}

/// Blocks until a source under `dir` changed and then stayed quiet for [`QUIET`].
fn wait_for_change(
    changes: &mpsc::Receiver<notify::Result<notify::Event>>,
    dir: &Path,
) -> anyhow::Result<()> {
    loop {
        let event = changes.recv().context("the file watcher stopped")?;
        if !touches_sources(&event, dir) {
            continue;
        }
        // Drain the burst: every further event resets the quiet period.
        while changes.recv_timeout(QUIET).is_ok() {}
        return Ok(());
    }
}

fn touches_sources(event: &notify::Result<notify::Event>, dir: &Path) -> bool {
    let Ok(event) = event else {
        return true;
    };
    if event.kind.is_access() {
        return false;
    }
    event.paths.iter().any(|path| is_source(path, dir))
}

/// Whether `path` (under `dir`) is a source rather than a build output.
fn is_source(path: &Path, dir: &Path) -> bool {
    let relative = path.strip_prefix(dir).unwrap_or(path);
    let output = relative.components().any(|c| match c {
        Component::Normal(name) => NOT_SOURCES.iter().any(|n| name == *n),
        _ => false,
    });
    let name = relative.to_string_lossy();
    !output && !name.ends_with(".wasm") && !name.ends_with(".wasm.tmp")
}

/// The child server: `wharf serve --plugins FOLDER --http LISTEN`, ended with
/// this process (a `Child` dropped is not killed; `kill_on_drop` below is).
fn serve(plugins: &Path, listen: &str, cache_root: Option<&Path>) -> anyhow::Result<ChildServer> {
    let wharf = std::env::current_exe().context("finding the wharf binary")?;
    let mut cmd = Command::new(&wharf);
    cmd.args(["serve", "--plugins"])
        .arg(plugins)
        .args(["--http", listen]);
    match cache_root {
        Some(dir) => cmd.arg("--cache-dir").arg(dir),
        None => cmd.arg("--no-cache"),
    };
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: prctl is async-signal-safe; the child asks for SIGTERM when
        // this process dies, however it dies.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
    }
    let child = cmd
        .spawn()
        .with_context(|| format!("starting {}", wharf.display()))?;
    let url = format!("http://{listen}/mcp");
    println!("wharf dev: serving {} at {url}", plugins.display());
    println!("client configuration (Streamable HTTP):");
    println!(
        "{}",
        serde_json::to_string_pretty(&serde_json::json!({
            "mcpServers": { "wharf-dev": { "type": "http", "url": url } }
        }))?
    );
    Ok(ChildServer(child))
}

/// Kills the child server when dropped (an error return, the end of `run`).
struct ChildServer(Child);

impl Drop for ChildServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_outputs_are_not_sources() {
        let dir = Path::new("/p");
        assert!(is_source(Path::new("/p/src/index.ts"), dir));
        assert!(is_source(Path::new("/p/app.py"), dir));
        for output in [
            "/p/target/wharf/core.wasm",
            "/p/dist/index.js",
            "/p/node_modules/x/y.js",
            "/p/x.wasm",
            "/p/x.wasm.tmp",
            "/p/__pycache__/a.pyc",
        ] {
            assert!(!is_source(Path::new(output), dir), "{output}");
        }
    }
}
