//! `wharf inspect`: describe one component without serving it.

use std::path::PathBuf;

use clap::Args;
use wharf::oneshot::Single;
use wharf::runtime::CallLimits;

use super::cache::CacheArgs;
use super::process::multi_threaded;
use super::single::single_runtime;

/// The arguments of `wharf inspect`.
#[derive(Args)]
pub struct InspectArgs {
    /// The component (`.wasm`).
    file: PathBuf,
    /// The manifest to apply [default: `NAME.toml` beside the component].
    #[arg(long)]
    manifest: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Where compiled components are kept.
    #[command(flatten)]
    cache: CacheArgs,
}

impl InspectArgs {
    /// Loads the component and prints its report on stdout.
    pub fn run(self) -> anyhow::Result<()> {
        multi_threaded()?.block_on(self.inspect())
    }

    async fn inspect(self) -> anyhow::Result<()> {
        let runtime = single_runtime(CallLimits::default(), self.cache.root())?;
        let single = Single::load(&runtime, &self.file, self.manifest.as_deref()).await?;
        let report = single.report();
        if self.json {
            println!("{}", serde_json::to_string_pretty(&report)?);
        } else {
            print!("{}", report.to_text());
        }
        Ok(())
    }
}
