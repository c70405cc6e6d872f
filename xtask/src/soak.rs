//! `cargo xtask soak`: the soak (`tests/soak`) against a fresh build of Wharf
//! and the plugins. `cargo xtask test` runs it for 60 s; before a release,
//! run it for 10 minutes (docs/reliability.md).

use std::process::Command;
use std::time::Duration;

use anyhow::{Result, bail};

use crate::{build_plugins, cargo, root, run};

/// How long `cargo xtask test` soaks.
pub const CI_SOAK: Duration = Duration::from_secs(60);

/// Builds Wharf (debug, or `--release`), the plugins and the soak driver,
/// then soaks for `length`. Writes target/soak/report.json; fails if a goal
/// was missed.
pub fn soak(length: Duration, release: bool) -> Result<()> {
    if length.is_zero() {
        bail!("a soak needs a length: --minutes N or --seconds N");
    }
    // Builds the debug `wharf` too (it embeds the plain plugins' docs).
    build_plugins()?;
    let profile = if release {
        run(cargo().args(["build", "--release", "-p", "wharf"]))?;
        "release"
    } else {
        "debug"
    };
    // The driver is built on its own: built with `wharf`, Cargo would unify
    // their dependencies' features and rebuild `wharf`'s tree.
    run(cargo().args(["build", "-p", "wharf-soak"]))?;
    let target = root().join("target");
    run(Command::new(target.join("debug/wharf-soak"))
        .arg("--wharf")
        .arg(target.join(profile).join("wharf"))
        .arg("--plugins")
        .arg(target.join("plugins"))
        .arg("--test-plugins")
        .arg(target.join("test-plugins"))
        .arg("--seconds")
        .arg(length.as_secs().to_string())
        .arg("--out")
        .arg(target.join("soak"))
        .current_dir(root()))
}
