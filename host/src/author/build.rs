//! `wharf build`: the project's toolchain, then a component with the WIT doc
//! comments embedded, written to `NAME.wasm` in the project folder.
//!
//! The steps per language (the same as `cargo xtask examples` uses for the
//! example plugins, through the shared `wharf-componentize` crate):
//! - Rust: `cargo build --target wasm32-wasip2 --release`.
//! - TypeScript: the project's `tsc` to `dist/index.js`, then `jco componentize`.
//! - JavaScript: `jco componentize src/index.js --wit wit -n WORLD`.
//! - Python: `componentize-py -d wit -w WORLD componentize app`.
//! - Go: `GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared`, then component
//!   embed + new with the WASI preview-1 reactor adapter and
//!   `--realloc-via-memory-grow` (Go's `cabi_realloc` must not run before its
//!   runtime has started).
//! - C: the bindings (wit-bindgen's C generator, in-process), `clang-19
//!   --target=wasm32-wasi -mexec-model=reactor` with wasi-libc, then component
//!   new with the reactor adapter.
//!
//! A toolchain's own output goes to this process's stderr; a failed step is
//! an error naming the command.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use wharf_componentize::{self as componentize, Adapter, Wit};

use super::language::{Language, Project};
use super::toolchain::{Tool, Toolchains};

/// Where Debian's wasi-libc puts its sysroot (`WHARF_WASI_SYSROOT` overrides).
const WASI_SYSROOT: &str = "/usr";

/// What a build wrote.
#[derive(Debug)]
pub struct Built {
    pub project: Project,
    /// `NAME.wasm` in the project folder.
    pub component: PathBuf,
    pub size: u64,
    pub elapsed: Duration,
}

/// Builds the project in `dir` into `NAME.wasm` beside its sources.
pub fn build(dir: &Path, toolchains: &Toolchains) -> Result<Built> {
    let started = Instant::now();
    let project = Project::open(dir)?;
    std::fs::create_dir_all(project.work_dir())
        .with_context(|| format!("creating {}", project.work_dir().display()))?;
    let bytes = match project.language {
        Language::Rust => rust(&project, toolchains)?,
        Language::Typescript => typescript(&project, toolchains)?,
        Language::Javascript => javascript(&project, toolchains, Path::new("src/index.js"))?,
        Language::Python => python(&project, toolchains)?,
        Language::Go => go(&project, toolchains)?,
        Language::C => c(&project, toolchains)?,
    };
    let wit = project.dir.join("wit");
    // The SDK's world for Rust; the docs of the project's world otherwise.
    let world = project.world.as_deref().unwrap_or("plugin");
    let bytes = crate::docs::embed(&bytes, &wit, Some(world))
        .with_context(|| format!("embedding the docs of {}", wit.display()))?;
    let component = project.output();
    write_atomically(&component, &bytes)?;
    Ok(Built {
        size: bytes.len() as u64,
        component,
        project,
        elapsed: started.elapsed(),
    })
}

/// Writes `bytes` beside `path` and renames, so a watcher never sees half a file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("wasm.tmp");
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))
}

/// Runs `cmd`, its output on stderr, failing unless it succeeds.
fn run(cmd: &mut Command) -> Result<()> {
    let status = cmd
        .stdin(Stdio::null())
        .stdout(std::io::stderr())
        .status()
        .with_context(|| format!("starting {:?}", cmd.get_program()))?;
    if !status.success() {
        bail!("{} failed ({status})", describe(cmd));
    }
    Ok(())
}

fn describe(cmd: &Command) -> String {
    let mut words = vec![cmd.get_program().to_string_lossy().into_owned()];
    words.extend(cmd.get_args().map(|a| a.to_string_lossy().into_owned()));
    format!("`{}`", words.join(" "))
}

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("reading {}", path.display()))
}

/// `cargo build --target wasm32-wasip2 --release`; the component is the
/// cdylib artifact Cargo reports.
fn rust(project: &Project, toolchains: &Toolchains) -> Result<Vec<u8>> {
    let cargo = toolchains.find(Tool::Cargo, &project.dir)?;
    check_rust_target()?;
    let output = Command::new(&cargo)
        .args([
            "build",
            "--target",
            "wasm32-wasip2",
            "--release",
            "--message-format=json-render-diagnostics",
        ])
        .current_dir(&project.dir)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("starting {}", cargo.display()))?;
    if !output.status.success() {
        bail!(
            "`cargo build --target wasm32-wasip2 --release` failed ({})",
            output.status
        );
    }
    let artifact = String::from_utf8_lossy(&output.stdout)
        .lines()
        .rev()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact")
        .filter(|m| {
            m["target"]["kind"]
                .as_array()
                .is_some_and(|k| k.iter().any(|k| k == "cdylib"))
        })
        .filter_map(|m| {
            m["filenames"]
                .as_array()?
                .iter()
                .filter_map(|f| f.as_str())
                .find(|f| f.ends_with(".wasm"))
                .map(PathBuf::from)
        })
        .next()
        .context("cargo built no cdylib: the package needs `crate-type = [\"cdylib\"]`")?;
    read(&artifact)
}

/// rustup's installed targets must include wasm32-wasip2 (without rustup,
/// cargo's own error says what is wrong).
fn check_rust_target() -> Result<()> {
    let Ok(output) = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .stdin(Stdio::null())
        .output()
    else {
        return Ok(());
    };
    if output.status.success()
        && !String::from_utf8_lossy(&output.stdout)
            .lines()
            .any(|t| t.trim() == "wasm32-wasip2")
    {
        bail!("the Rust target wasm32-wasip2 is missing: run `rustup target add wasm32-wasip2`");
    }
    Ok(())
}

/// The project's `tsc` to `dist/`, then jco on `dist/index.js`.
fn typescript(project: &Project, toolchains: &Toolchains) -> Result<Vec<u8>> {
    let tsc = toolchains.find(Tool::Tsc, &project.dir)?;
    let jco = toolchains.find(Tool::Jco, &project.dir)?;
    link_vendored_sdk(&project.dir)?;
    run(Command::new(&tsc)
        .args(["-p", "."])
        .current_dir(&project.dir))?;
    // Bundled: the compiled code imports the vendored `wharf-sdk` package.
    componentize_js(project, &jco, Path::new("dist/index.js"), true)
}

/// `node_modules/wharf-sdk` pointing at the vendored `wharf-sdk/`, as
/// `npm install` would link the `file:./wharf-sdk` dependency: `tsc` and jco's
/// bundler find the SDK there, so a project builds before (or without) an
/// `npm install`.
fn link_vendored_sdk(dir: &Path) -> Result<()> {
    let vendored = dir.join("wharf-sdk");
    let link = dir.join("node_modules/wharf-sdk");
    if !vendored.join("package.json").is_file() || link.symlink_metadata().is_ok() {
        return Ok(());
    }
    std::fs::create_dir_all(dir.join("node_modules"))
        .with_context(|| format!("creating {}", dir.join("node_modules").display()))?;
    #[cfg(unix)]
    std::os::unix::fs::symlink("../wharf-sdk", &link)
        .with_context(|| format!("linking {}", link.display()))?;
    #[cfg(not(unix))]
    bail!(
        "run `npm install` in {} first: it links the vendored wharf-sdk",
        dir.display()
    );
    Ok(())
}

fn javascript(project: &Project, toolchains: &Toolchains, entry: &Path) -> Result<Vec<u8>> {
    let jco = toolchains.find(Tool::Jco, &project.dir)?;
    componentize_js(project, &jco, entry, false)
}

/// `jco componentize ENTRY [--bundle] --wit wit -n WORLD -o target/wharf/jco.wasm`.
fn componentize_js(project: &Project, jco: &Path, entry: &Path, bundle: bool) -> Result<Vec<u8>> {
    let out = project.work_dir().join("jco.wasm");
    run(Command::new(jco)
        .arg("componentize")
        .arg(entry)
        .args(bundle.then_some("--bundle"))
        .args(["--wit", "wit", "--world-name", world(project)?, "--out"])
        .arg(&out)
        .current_dir(&project.dir))?;
    read(&out)
}

/// `componentize-py -d wit -w WORLD componentize app -o target/wharf/…`.
fn python(project: &Project, toolchains: &Toolchains) -> Result<Vec<u8>> {
    let componentize_py = toolchains.find(Tool::ComponentizePy, &project.dir)?;
    let out = project.work_dir().join("componentize-py.wasm");
    run(Command::new(&componentize_py)
        .args([
            "-d",
            "wit",
            "-w",
            world(project)?,
            "componentize",
            "app",
            "-o",
        ])
        .arg(&out)
        .current_dir(&project.dir)
        .env("PYTHONDONTWRITEBYTECODE", "1"))?;
    read(&out)
}

/// Go's wasip1 reactor, then component embed + new with the adapter.
fn go(project: &Project, toolchains: &Toolchains) -> Result<Vec<u8>> {
    let go = toolchains.find(Tool::Go, &project.dir)?;
    let core = project.work_dir().join("core.wasm");
    run(Command::new(&go)
        .args([
            "build",
            "-buildmode=c-shared",
            "-trimpath",
            "-ldflags=-s -w",
            "-o",
        ])
        .arg(&core)
        .arg(".")
        .current_dir(&project.dir)
        .env("GOOS", "wasip1")
        .env("GOARCH", "wasm")
        // Never download another Go in the middle of a build.
        .env("GOTOOLCHAIN", "local"))?;
    let wit = Wit::load(&project.dir.join("wit"), world(project)?)?;
    let core = componentize::strip_module(&read(&core)?)?;
    componentize::new(
        &componentize::embed(&core, &wit)?,
        Adapter::ReactorReallocViaMemoryGrow,
    )
}

/// The C bindings, clang for wasm32-wasi as a reactor, then component new.
fn c(project: &Project, toolchains: &Toolchains) -> Result<Vec<u8>> {
    let clang = toolchains.find(Tool::Clang, &project.dir)?;
    let sysroot = std::env::var("WHARF_WASI_SYSROOT").unwrap_or_else(|_| WASI_SYSROOT.into());
    let libc = Path::new(&sysroot).join("lib/wasm32-wasi/libc.a");
    if !libc.is_file() {
        bail!(
            "{} is missing: install wasi-libc (Debian, Ubuntu: `apt-get install {}`)",
            libc.display(),
            super::toolchain::C_PACKAGES
        );
    }
    let wit = Wit::load(&project.dir.join("wit"), world(project)?)?;
    let gen_dir = project.work_dir().join("gen");
    let mut inputs = sources(&project.dir.join("src"), "c")?;
    inputs.extend(componentize::c_bindings(&wit, &gen_dir)?);
    let core = project.work_dir().join("core.wasm");
    run(Command::new(&clang)
        .args([
            "--target=wasm32-wasi",
            "-O2",
            "-mexec-model=reactor",
            "-Wall",
            "-fuse-ld=lld",
        ])
        .arg(format!("--sysroot={sysroot}"))
        .arg("-I")
        .arg(&gen_dir)
        .arg("-o")
        .arg(&core)
        .args(&inputs)
        .current_dir(&project.dir))?;
    componentize::new(
        &componentize::strip_module(&read(&core)?)?,
        Adapter::Reactor,
    )
}

/// The files with extension `ext` in `dir`, sorted.
fn sources(dir: &Path, ext: &str) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("listing {}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    files.sort();
    Ok(files)
}

fn world(project: &Project) -> Result<&str> {
    project
        .world
        .as_deref()
        .context("the project names no WIT world")
}
