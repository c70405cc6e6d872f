//! `wharf embed-docs`: write the doc comments of a WIT folder into a
//! component, so Wharf can use them as tool descriptions.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use wharf::docs;

use super::LOG_TARGET;

/// The arguments of `wharf embed-docs`.
#[derive(Args)]
pub struct EmbedDocsArgs {
    /// The WIT folder whose doc comments to embed.
    #[arg(long)]
    wit: PathBuf,
    /// The world the component implements [default: the package's only world].
    #[arg(long)]
    world: Option<String>,
    /// The component to read.
    input: PathBuf,
    /// Where to write the component with docs (may be the input itself).
    #[arg(short, long)]
    output: PathBuf,
}

impl EmbedDocsArgs {
    /// Reads the component, adds the doc sections and writes it out.
    pub fn run(self) -> anyhow::Result<()> {
        let component = std::fs::read(&self.input)
            .with_context(|| format!("reading {}", self.input.display()))?;
        let out = docs::embed(&component, &self.wit, self.world.as_deref())
            .with_context(|| format!("embedding the docs of {}", self.wit.display()))?;
        // Write beside the target and rename, so a watcher never sees half a file.
        let tmp = self.output.with_extension("wasm.tmp");
        std::fs::write(&tmp, &out).with_context(|| format!("writing {}", tmp.display()))?;
        std::fs::rename(&tmp, &self.output)
            .with_context(|| format!("writing {}", self.output.display()))?;
        tracing::info!(target: LOG_TARGET, component = %self.output.display(), "doc sections written");
        Ok(())
    }
}
