//! `cargo xtask cluster`: three Wharf replicas behind Debian's nginx with the
//! reference configuration (deploy/nginx/wharf.conf) on loopback; one replica
//! stopped, one killed and both restarted under load (`tests/cluster`,
//! docs/replicas.md). `cargo xtask test` runs it for [`CI_SECONDS`].

use std::process::Command;

use anyhow::{Result, bail};

use crate::{build_plugins, cargo, root, run};

/// How long `cargo xtask test` runs the load (about 11 s in all, with the
/// replicas' starts and the round trips).
pub const CI_SECONDS: u64 = 8;

/// Builds Wharf (debug), the plugins and the test driver, then runs it; fails
/// if a goal was missed. Needs nginx (`apt-get install nginx`; .ci/run
/// installs it).
pub fn cluster(seconds: u64) -> Result<()> {
    if seconds < 5 {
        bail!("--seconds must be at least 5");
    }
    // Builds the debug `wharf` too.
    build_plugins()?;
    // On its own, like the soak: built with `wharf`, Cargo would unify their
    // dependencies' features and rebuild `wharf`'s tree.
    run(cargo().args(["build", "-p", "wharf-cluster"]))?;
    let target = root().join("target");
    run(Command::new(target.join("debug/wharf-cluster"))
        .arg("--wharf")
        .arg(target.join("debug/wharf"))
        .arg("--plugins")
        .arg(target.join("plugins"))
        .arg("--test-plugins")
        .arg(target.join("test-plugins"))
        .arg("--nginx-conf")
        .arg(root().join("deploy/nginx/wharf.conf"))
        .arg("--seconds")
        .arg(seconds.to_string())
        .arg("--out")
        .arg(target.join("cluster"))
        .current_dir(root()))
}
