//! `wharf keygen`, `wharf push`, `wharf sign` and `wharf pull`: a plugin's
//! way into a registry and back, with cosign-compatible signatures.

use std::path::PathBuf;

use anyhow::Context;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use bytes::Bytes;
use clap::Args;
use wharf::loader::signature_path;
use wharf::manifest::manifest_path;
use wharf::oci::artifact::ImageManifest;
use wharf::oci::client::OCI_MANIFEST;
use wharf::oci::reference::{Reference, SCHEME, Version};
use wharf::oci::signature::{self, SigningKey};
use wharf::oci::source::OciSource;

use super::process::multi_threaded;
use super::registry::RegistryArgs;

/// The arguments of `wharf keygen`.
#[derive(Args)]
pub struct KeygenArgs {
    /// Writes PREFIX.key (PKCS#8 PEM, keep it secret) and PREFIX.pub (the
    /// public key to give `--trust`).
    #[arg(long, default_value = "wharf")]
    out: PathBuf,
}

impl KeygenArgs {
    pub fn run(self) -> anyhow::Result<()> {
        let (key, private) = SigningKey::generate();
        let private_path = self.out.with_extension("key");
        let public_path = self.out.with_extension("pub");
        anyhow::ensure!(
            !private_path.exists(),
            "{} exists; not overwriting a key",
            private_path.display()
        );
        write_private(&private_path, &private)?;
        std::fs::write(&public_path, key.public_key().to_pem())
            .with_context(|| format!("writing {}", public_path.display()))?;
        eprintln!(
            "wrote {} and {}",
            private_path.display(),
            public_path.display()
        );
        Ok(())
    }
}

/// Writes a private key readable by its owner only.
fn write_private(path: &std::path::Path, text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options
        .open(path)
        .with_context(|| format!("creating {}", path.display()))?;
    file.write_all(text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

/// The arguments of `wharf push`.
#[derive(Args)]
pub struct PushArgs {
    /// The component (`.wasm`).
    file: PathBuf,
    /// Where to push it: `oci://REGISTRY/REPOSITORY:TAG`.
    reference: Reference,
    /// The plugin manifest recorded with it [default: `NAME.toml` beside the
    /// component, if there is one].
    #[arg(long)]
    manifest: Option<PathBuf>,
    #[command(flatten)]
    registry: RegistryArgs,
}

impl PushArgs {
    pub fn run(self) -> anyhow::Result<()> {
        multi_threaded()?.block_on(self.push())
    }

    async fn push(self) -> anyhow::Result<()> {
        anyhow::ensure!(
            matches!(self.reference.version, Version::Tag(_)),
            "push to a tag: {} names a digest",
            self.reference
        );
        let component = std::fs::read(&self.file)
            .with_context(|| format!("reading {}", self.file.display()))?;
        let manifest_file = self
            .manifest
            .clone()
            .unwrap_or_else(|| manifest_path(&self.file));
        let plugin_manifest = match std::fs::read_to_string(&manifest_file) {
            Ok(text) => Some(text),
            Err(_) if self.manifest.is_none() => None,
            Err(error) => {
                return Err(error).with_context(|| format!("reading {}", manifest_file.display()));
            }
        };
        let client = self.registry.client()?;
        let config = b"{}".to_vec();
        let title = self
            .file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let manifest =
            ImageManifest::for_component(&config, &component, &title, plugin_manifest.as_deref());
        client
            .push_blob(&self.reference, Bytes::from(config))
            .await?;
        client
            .push_blob(&self.reference, Bytes::from(component))
            .await?;
        let bytes = serde_json::to_vec(&manifest)?;
        let digest = client
            .push_manifest(&self.reference, OCI_MANIFEST, Bytes::from(bytes))
            .await?;
        println!("{}", self.reference.with_version(Version::Digest(digest)));
        Ok(())
    }
}

/// The arguments of `wharf sign`.
#[derive(Args)]
pub struct SignArgs {
    /// What to sign: `oci://…:TAG` (signs the digest the tag names now),
    /// `oci://…@sha256:…`, or a local component FILE (writes `FILE.sig`,
    /// for `--require-signed`; the format of `cosign sign-blob`).
    target: String,
    /// The private key (`wharf keygen`'s PREFIX.key).
    #[arg(long)]
    key: PathBuf,
    #[command(flatten)]
    registry: RegistryArgs,
}

impl SignArgs {
    pub fn run(self) -> anyhow::Result<()> {
        let key = SigningKey::from_file(&self.key)?;
        if !self.target.starts_with(SCHEME) {
            let file = PathBuf::from(&self.target);
            let bytes =
                std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?;
            let signature = signature_path(&file);
            std::fs::write(&signature, format!("{}\n", BASE64.encode(key.sign(&bytes))))
                .with_context(|| format!("writing {}", signature.display()))?;
            println!("{}", signature.display());
            return Ok(());
        }
        let reference = Reference::parse(&self.target)?;
        multi_threaded()?.block_on(async {
            let client = self.registry.client()?;
            let (digest, _) = client.manifest(&reference).await?;
            let at = signature::sign(&client, &key, &reference, &digest).await?;
            println!("{at}");
            Ok(())
        })
    }
}

/// The arguments of `wharf pull`.
#[derive(Args)]
pub struct PullArgs {
    /// What to pull: `oci://…:TAG` or `@sha256:…`.
    reference: Reference,
    /// Where to write the component.
    #[arg(short, long)]
    output: PathBuf,
    /// A public key whose signature the artifact must carry; repeatable.
    #[arg(long = "trust", value_name = "KEYFILE")]
    trust: Vec<PathBuf>,
    #[command(flatten)]
    registry: RegistryArgs,
}

impl PullArgs {
    pub fn run(self) -> anyhow::Result<()> {
        multi_threaded()?.block_on(self.pull())
    }

    async fn pull(self) -> anyhow::Result<()> {
        let keys = self
            .trust
            .iter()
            .map(|p| signature::PublicKey::from_file(p))
            .collect::<Result<Vec<_>, _>>()?;
        let source = OciSource::new(
            self.registry.client()?,
            None,
            signature::TrustPolicy::keys(keys),
            std::time::Duration::ZERO,
        );
        let fetched = source.fetch(&self.reference).await?;
        std::fs::write(&self.output, &fetched.component)
            .with_context(|| format!("writing {}", self.output.display()))?;
        println!(
            "{}",
            self.reference.with_version(Version::Digest(fetched.digest))
        );
        Ok(())
    }
}
