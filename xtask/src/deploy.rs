//! The deployment files in `deploy/`: `cargo xtask test` validates the
//! Kubernetes manifests against the schemas of a current Kubernetes release
//! with `kubernetes-validate` (PyPI, installed into `target/deploy/venv` by
//! [`install::venv`]; it ships the schemas, so once installed the check needs
//! no network and no cluster).

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::{install, root, run};

/// The Kubernetes release the manifests are checked against (the newest whose
/// schemas the pinned `kubernetes-validate` ships).
const KUBERNETES_VERSION: &str = "1.37.0";

/// Validates every `deploy/kubernetes/*.yaml` strictly (unknown fields are
/// errors); fails naming the file and field that do not fit.
pub fn validate_manifests() -> Result<()> {
    let folder = root().join("deploy/kubernetes");
    let python = install::venv(
        &root().join("target/deploy/venv"),
        &folder.join("requirements.txt"),
    )?;
    let mut manifests: Vec<PathBuf> = std::fs::read_dir(&folder)
        .with_context(|| format!("reading {}", folder.display()))?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<std::io::Result<_>>()?;
    manifests.retain(|path| path.extension().is_some_and(|e| e == "yaml"));
    manifests.sort();
    if manifests.is_empty() {
        bail!("no manifests in {}", folder.display());
    }
    run(Command::new(python)
        .args(["-m", "kubernetes_validate", "--strict", "--quiet", "-k"])
        .arg(KUBERNETES_VERSION)
        .args(&manifests))
    .context("the Kubernetes manifests in deploy/kubernetes do not validate")
}
