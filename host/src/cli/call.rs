//! `wharf call`: run one tool of one component once and print its result.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use wharf::oneshot::{CallResult, Single, content_text};

use super::cache::CacheArgs;
use super::limits::LimitArgs;
use super::process::multi_threaded;
use super::single::single_runtime;

/// The arguments of `wharf call`.
#[derive(Args)]
pub struct CallArgs {
    /// The component (`.wasm`).
    file: PathBuf,
    /// The tool, with or without the `<plugin>_` prefix.
    tool: String,
    /// The arguments, a JSON object.
    #[arg(long, default_value = "{}")]
    args: String,
    /// The manifest to apply [default: `NAME.toml` beside the component].
    #[arg(long)]
    manifest: Option<PathBuf>,
    /// The limits of the call.
    #[command(flatten)]
    limits: LimitArgs,
    /// Where compiled components are kept.
    #[command(flatten)]
    cache: CacheArgs,
}

impl CallArgs {
    /// Runs the tool and exits: status 1 if the result is an error, else 0.
    pub fn run(self) -> anyhow::Result<()> {
        let failed = multi_threaded()?.block_on(self.call())?;
        // Leave at once: the runtime's threads need no orderly shutdown.
        std::process::exit(i32::from(failed));
    }

    /// Runs the tool; returns whether the result is an error.
    async fn call(self) -> anyhow::Result<bool> {
        let arguments: serde_json::Value =
            serde_json::from_str(&self.args).context("--args is not valid JSON")?;
        anyhow::ensure!(arguments.is_object(), "--args must be a JSON object");
        let runtime = single_runtime(self.limits.call_limits(), self.cache.root())?;
        let single = Single::load(&runtime, &self.file, self.manifest.as_deref()).await?;
        match single.call(&self.tool, &arguments).await? {
            CallResult::Failed(message) => {
                eprintln!("{message}");
                Ok(true)
            }
            CallResult::Output(output) => {
                let text = content_text(&output);
                if output.is_error {
                    eprint!("{text}");
                    return Ok(true);
                }
                print!("{text}");
                if let Some(structured) = &output.structured {
                    println!("{}", serde_json::to_string_pretty(structured)?);
                }
                Ok(false)
            }
        }
    }
}
