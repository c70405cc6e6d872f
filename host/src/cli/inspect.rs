//! `wharf inspect`: describe one component without serving it.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use wharf::oci::reference::{Reference, SCHEME, Version};
use wharf::oci::signature::{PublicKey, TrustPolicy};
use wharf::oci::source::OciSource;
use wharf::oneshot::Single;
use wharf::runtime::CallLimits;

use super::cache::CacheArgs;
use super::process::multi_threaded;
use super::registry::RegistryArgs;
use super::single::single_runtime;

/// The arguments of `wharf inspect`.
#[derive(Args)]
pub struct InspectArgs {
    /// The component (`.wasm`), or `oci://REGISTRY/REPOSITORY:TAG` (or
    /// `@sha256:…`): pulled, and inspected with the plugin manifest pushed
    /// with it, so what it asks for shows before anyone runs it.
    target: String,
    /// The manifest to apply [default: `NAME.toml` beside the component].
    #[arg(long)]
    manifest: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// A public key an `oci://` artifact must be signed by; repeatable.
    #[arg(long = "trust", value_name = "KEYFILE")]
    trust: Vec<PathBuf>,
    /// Where compiled components are kept.
    #[command(flatten)]
    cache: CacheArgs,
    #[command(flatten)]
    registry: RegistryArgs,
}

impl InspectArgs {
    /// Loads the component and prints its report on stdout.
    pub fn run(self) -> anyhow::Result<()> {
        multi_threaded()?.block_on(self.inspect())
    }

    async fn inspect(self) -> anyhow::Result<()> {
        // An `oci://` target is pulled into a temporary folder first.
        let pulled = tempfile::tempdir()?;
        let (file, manifest) = if self.target.starts_with(SCHEME) {
            let reference = Reference::parse(&self.target)?;
            let keys = self
                .trust
                .iter()
                .map(|p| PublicKey::from_file(p))
                .collect::<Result<Vec<_>, _>>()?;
            let source = OciSource::new(
                self.registry.client()?,
                None,
                TrustPolicy::keys(keys),
                Duration::ZERO,
            );
            let fetched = source.fetch(&reference).await?;
            let name = reference
                .repository
                .rsplit('/')
                .next()
                .unwrap_or("plugin")
                .replace(['.', '-'], "_");
            let file = pulled.path().join(format!("{name}.wasm"));
            std::fs::write(&file, &fetched.component)?;
            eprintln!(
                "{}",
                reference.with_version(Version::Digest(fetched.digest))
            );
            let manifest = match (&self.manifest, &fetched.plugin_manifest) {
                (Some(path), _) => Some(path.clone()),
                (None, Some(text)) => {
                    let path = pulled.path().join(format!("{name}.toml"));
                    std::fs::write(&path, text)?;
                    eprintln!("plugin manifest pushed with it:\n{text}");
                    Some(path)
                }
                (None, None) => None,
            };
            (file, manifest)
        } else {
            (PathBuf::from(&self.target), self.manifest.clone())
        };
        let runtime = single_runtime(CallLimits::default(), self.cache.root())?;
        let single = Single::load(&runtime, &file, manifest.as_deref()).await?;
        let report = single.report();
        if self.json {
            println!("{}", serde_json::to_string_pretty(&report)?);
        } else {
            print!("{}", report.to_text());
        }
        Ok(())
    }
}
