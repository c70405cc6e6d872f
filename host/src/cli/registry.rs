//! What every command that speaks to a registry shares (`--insecure-registry`),
//! and serve's registry plugin settings (`--trust`, `--require-signed`,
//! `--oci-poll-secs`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use wharf::naming::plugin_name;
use wharf::oci::auth::Credentials;
use wharf::oci::client::{ClientOptions, RegistryClient};
use wharf::oci::reference::Reference;
use wharf::oci::signature::{PublicKey, TrustPolicy};
use wharf::oci::source::OciSource;
use wharf::oci::store::BlobStore;

/// How registries are reached.
#[derive(Args, Clone)]
pub struct RegistryArgs {
    /// A registry (`HOST` or `HOST:PORT`) reached over plain HTTP; repeatable.
    /// Loopback registries always are; every other one needs HTTPS.
    #[arg(long = "insecure-registry", value_name = "HOST")]
    insecure: Vec<String>,

    /// Registry credentials: a Docker-style config.json (`auths`) [default:
    /// `$DOCKER_CONFIG/config.json` or `~/.docker/config.json`, if there].
    #[arg(long, value_name = "CONFIG_JSON")]
    registry_auth: Option<PathBuf>,
}

impl RegistryArgs {
    /// The client these settings describe.
    pub fn client(&self) -> anyhow::Result<RegistryClient> {
        let credentials = match &self.registry_auth {
            Some(path) => Credentials::from_file(path)?,
            None => match Credentials::default_path().filter(|p| p.is_file()) {
                Some(path) => Credentials::from_file(&path)?,
                None => Credentials::default(),
            },
        };
        Ok(RegistryClient::new(ClientOptions {
            insecure: self.insecure.clone(),
            credentials,
        }))
    }
}

/// Where plugins from registries come from, and what they must carry.
#[derive(Args)]
pub struct OciServeArgs {
    /// A public key (PEM, ECDSA P-256, as `cosign generate-key-pair` or
    /// `wharf keygen` writes) whose cosign signatures are trusted; repeatable.
    /// With one, every registry plugin must be signed by one of these keys,
    /// or it is refused.
    #[arg(long = "trust", value_name = "KEYFILE")]
    trust: Vec<PathBuf>,

    /// Local components must be signed too: `NAME.wasm` loads only beside a
    /// `NAME.wasm.sig` (base64 ECDSA signature of its bytes, as `cosign
    /// sign-blob` or `wharf sign --file` writes) by a `--trust` key.
    #[arg(long, requires = "trust")]
    require_signed: bool,

    /// How often a registry tag is looked up again, in seconds; a new digest
    /// is pulled, verified and swapped in.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    oci_poll_secs: u64,

    /// A plugin from a registry: `NAME=oci://REGISTRY/REPOSITORY:TAG` (or
    /// `@sha256:…`); repeatable. Like a `NAME.oci` file in the folder, whose
    /// `NAME.toml` applies to it; it wins a name clash with a file.
    #[arg(long = "plugin", value_name = "NAME=oci://…", value_parser = parse_plugin)]
    registry_plugins: Vec<(String, Reference)>,

    /// How registries are reached.
    #[command(flatten)]
    registry: RegistryArgs,
}

impl OciServeArgs {
    /// The trust policy of `--trust`.
    pub fn policy(&self) -> anyhow::Result<TrustPolicy> {
        let keys = self
            .trust
            .iter()
            .map(|path| PublicKey::from_file(path))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(TrustPolicy::keys(keys))
    }

    /// The `--plugin` references.
    pub fn references(&self) -> Vec<(String, Reference)> {
        self.registry_plugins.clone()
    }

    /// Whether local components must be signed.
    pub fn require_signed(&self) -> bool {
        self.require_signed
    }

    /// The registry source of serve, storing under `cache_root`.
    pub fn source(&self, cache_root: Option<&Path>) -> anyhow::Result<Arc<OciSource>> {
        Ok(Arc::new(OciSource::new(
            self.registry.client()?,
            cache_root.map(BlobStore::new),
            self.policy()?,
            Duration::from_secs(self.oci_poll_secs),
        )))
    }
}

/// Parses `NAME=oci://…`.
fn parse_plugin(text: &str) -> Result<(String, Reference), String> {
    let (name, reference) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}` is not NAME=oci://REGISTRY/REPOSITORY:TAG"))?;
    let checked = plugin_name(name).map_err(|e| e.to_string())?;
    if checked != name {
        return Err(format!(
            "`{name}` is not a plugin name; `{checked}` would be"
        ));
    }
    let reference = Reference::parse(reference).map_err(|e| e.to_string())?;
    Ok((checked, reference))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plugin_flag_names_a_plugin_and_a_reference() {
        let (name, reference) = parse_plugin("echo=oci://127.0.0.1:5000/t/echo:v1").unwrap();
        assert_eq!(name, "echo");
        assert_eq!(reference.to_string(), "oci://127.0.0.1:5000/t/echo:v1");
        assert_eq!(
            parse_plugin("oci://h/e:1").unwrap_err(),
            "`oci://h/e:1` is not NAME=oci://REGISTRY/REPOSITORY:TAG"
        );
        assert_eq!(
            parse_plugin("echo=h/e:1").unwrap_err(),
            "`h/e:1` is not an OCI reference: it must start with `oci://`"
        );
    }
}
