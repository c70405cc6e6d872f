//! Installs from the package registries, shared by `cargo xtask` (the example
//! builds, the interop tests) and `wharf build --install-toolchain`; each is
//! skipped while what it installed still matches.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

/// Runs `cmd`, its output going to this process's stderr (never stdout, which
/// may be a protocol stream), and fails unless it succeeds.
pub fn run(cmd: &mut Command) -> Result<()> {
    eprintln!("running {cmd:?}");
    let status = cmd
        .stdout(std::io::stderr())
        .status()
        .with_context(|| format!("starting {cmd:?}"))?;
    if !status.success() {
        bail!("{cmd:?} failed with {status}");
    }
    Ok(())
}

/// The virtualenv with `requirements` installed (pip runs only when that file
/// changed since the last install); returns its python.
pub fn venv(dir: &Path, requirements: &Path) -> Result<PathBuf> {
    let python = dir.join("bin/python");
    if !python.is_file() {
        run(Command::new("python3").arg("-m").arg("venv").arg(dir)).context(format!(
            "creating the virtualenv {}: install Python 3 with venv \
                 (Debian: `apt-get install python3 python3-venv`)",
            dir.display()
        ))?;
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
pub fn npm_ci(dir: &Path) -> Result<()> {
    npm(dir, "package-lock.json", "ci")
}

/// `npm install` in `dir` unless `node_modules` already matches its
/// package.json (for a folder with pinned versions and no lock file).
pub fn npm_install(dir: &Path) -> Result<()> {
    npm(dir, "package.json", "install")
}

fn npm(dir: &Path, keyed_by: &str, subcommand: &str) -> Result<()> {
    let lock = std::fs::read(dir.join(keyed_by))
        .with_context(|| format!("reading {}/{keyed_by}", dir.display()))?;
    let marker = dir.join("node_modules/.wharf-lock-sha256");
    let hash = format!("{:x}", Sha256::digest(&lock));
    if std::fs::read_to_string(&marker).ok().as_deref() == Some(&hash) {
        return Ok(());
    }
    run(Command::new("npm")
        .args([subcommand, "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(dir))
    .context("installing the npm packages: needs Node.js 20+ and npm (Debian: `apt-get install nodejs npm`)")?;
    std::fs::write(&marker, hash)?;
    Ok(())
}
