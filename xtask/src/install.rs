//! Installs from the package registries, shared by the example builds and the
//! interop tests; each is skipped while what it installed still matches.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};

use crate::run;

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
