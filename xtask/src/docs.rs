//! Carrying WIT doc comments into built components, so Wharf can show them as
//! tool descriptions (toolchains drop them; see `wharf embed-docs`).

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

/// Writes the doc comments of the WIT folder `wit_dir` into `component`, in
/// place, by running `wharf embed-docs` (the package's only world is used).
pub fn embed_docs(wharf_bin: &Path, component: &Path, wit_dir: &Path) -> Result<()> {
    let output = Command::new(wharf_bin)
        .arg("embed-docs")
        .arg("--wit")
        .arg(wit_dir)
        .arg(component)
        .arg("-o")
        .arg(component)
        .env("WHARF_LOG", "warn")
        .output()
        .with_context(|| format!("starting {}", wharf_bin.display()))?;
    if !output.status.success() {
        bail!(
            "embedding the docs of {} into {} failed: {}",
            wit_dir.display(),
            component.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(())
}
