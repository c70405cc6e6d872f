//! A registry as a source of plugins for the loader: a reference in, the
//! component's bytes out, pulled through the store and verified by the
//! trust policy.
//!
//! Strategy: the loader calls [`OciSource::fetch`] on every scan. A tag is
//! resolved again only when its last resolution is older than the poll
//! interval, so file events in between cost no request; a digest is never
//! resolved. When the registry cannot be reached, the last digest resolved
//! is used (the plugin keeps serving) and the answer carries a warning. A
//! digest's signature is checked once per process; nothing unverified is
//! returned while the policy asks for signatures.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::artifact::{ArtifactError, ImageManifest, MANIFEST_ANNOTATION};
use super::client::{RegistryClient, RegistryError};
use super::reference::{Digest, Reference, Version};
use super::signature::{SignatureError, TrustPolicy};
use super::store::BlobStore;

/// The default of `--oci-poll-secs`.
pub const DEFAULT_POLL: Duration = Duration::from_secs(60);

/// Why a reference gave no component.
#[derive(Debug, thiserror::Error)]
pub enum OciError {
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error("{reference}@{digest} is not a Wasm component artifact: {error}")]
    Artifact {
        reference: Reference,
        digest: Digest,
        error: ArtifactError,
    },
    #[error("{reference}@{digest} refused: {error}")]
    Signature {
        reference: Reference,
        digest: Digest,
        error: SignatureError,
    },
}

/// A component pulled from a registry.
#[derive(Debug)]
pub struct Fetched {
    /// The manifest's digest (the version loaded).
    pub digest: Digest,
    /// The component's bytes.
    pub component: Vec<u8>,
    /// The plugin manifest pushed with it (`dev.wharf.plugin.manifest`).
    pub plugin_manifest: Option<String>,
    /// Why an older resolution was used (the registry was unreachable).
    pub stale: Option<String>,
}

/// The registries plugins come from, with their store and trust policy.
pub struct OciSource {
    client: RegistryClient,
    store: Option<BlobStore>,
    trust: TrustPolicy,
    poll: Duration,
    /// Each tag's last resolution.
    tags: Mutex<HashMap<Reference, (Digest, Instant)>>,
    /// Digests whose signature was verified (repository and digest).
    verified: Mutex<HashSet<(String, String, Digest)>>,
}

impl OciSource {
    /// A source; `store` is `None` without a cache folder (everything is
    /// pulled again at each start).
    pub fn new(
        client: RegistryClient,
        store: Option<BlobStore>,
        trust: TrustPolicy,
        poll: Duration,
    ) -> Self {
        Self {
            client,
            store,
            trust,
            poll,
            tags: Mutex::default(),
            verified: Mutex::default(),
        }
    }

    /// How often tags are resolved again.
    pub fn poll_interval(&self) -> Duration {
        self.poll
    }

    /// The client (for `wharf push`, `sign`, `pull`).
    pub fn client(&self) -> &RegistryClient {
        &self.client
    }

    /// The component `reference` names now, pulled, stored and verified.
    pub async fn fetch(&self, reference: &Reference) -> Result<Fetched, OciError> {
        let (digest, manifest, stale) = self.resolve(reference).await?;
        let manifest = match manifest {
            Some(bytes) => bytes,
            None => self.manifest_bytes(reference, &digest).await?,
        };
        let artifact = |error| OciError::Artifact {
            reference: reference.clone(),
            digest,
            error,
        };
        let parsed = ImageManifest::parse(&manifest).map_err(artifact)?;
        let (_, layer) = parsed.wasm_layer().map_err(artifact)?;
        self.check_signature(reference, &digest).await?;
        let component = match self.store.as_ref().and_then(|s| s.get(&layer)) {
            Some(bytes) => bytes,
            None => {
                let bytes = self.client.blob(reference, &layer).await?.to_vec();
                if let Some(store) = &self.store {
                    store.put(&layer, &bytes);
                }
                bytes
            }
        };
        Ok(Fetched {
            digest,
            component,
            plugin_manifest: parsed.annotations.get(MANIFEST_ANNOTATION).cloned(),
            stale,
        })
    }

    /// The digest to load, the manifest's bytes when they were just read,
    /// and a warning when an older resolution stands in for the registry.
    async fn resolve(
        &self,
        reference: &Reference,
    ) -> Result<(Digest, Option<Vec<u8>>, Option<String>), OciError> {
        if let Version::Digest(digest) = &reference.version {
            return Ok((*digest, None, None));
        }
        let last = self.tags.lock().expect("tags lock").get(reference).copied();
        if let Some((digest, at)) = last
            && at.elapsed() < self.poll
        {
            return Ok((digest, None, None));
        }
        match self.client.manifest(reference).await {
            Ok((digest, bytes)) => {
                if let Some(store) = &self.store {
                    store.put(&digest, &bytes);
                }
                self.tags
                    .lock()
                    .expect("tags lock")
                    .insert(reference.clone(), (digest, Instant::now()));
                Ok((digest, Some(bytes.to_vec()), None))
            }
            Err(error) => match last {
                Some((digest, _)) => Ok((
                    digest,
                    None,
                    Some(format!("{error}; {digest} keeps serving")),
                )),
                None => Err(error.into()),
            },
        }
    }

    /// The manifest `digest`, from the store or the registry.
    async fn manifest_bytes(
        &self,
        reference: &Reference,
        digest: &Digest,
    ) -> Result<Vec<u8>, OciError> {
        if let Some(bytes) = self.store.as_ref().and_then(|s| s.get(digest)) {
            return Ok(bytes);
        }
        let pinned = reference.with_version(Version::Digest(*digest));
        let (_, bytes) = self.client.manifest(&pinned).await?;
        if let Some(store) = &self.store {
            store.put(digest, &bytes);
        }
        Ok(bytes.to_vec())
    }

    /// Fails unless the policy needs no signature or `digest` carries one it trusts.
    async fn check_signature(
        &self,
        reference: &Reference,
        digest: &Digest,
    ) -> Result<(), OciError> {
        if !self.trust.requires_signatures() {
            return Ok(());
        }
        let key = (
            reference.registry.clone(),
            reference.repository.clone(),
            *digest,
        );
        if self.verified.lock().expect("verified lock").contains(&key) {
            return Ok(());
        }
        match self.trust.verify(&self.client, reference, digest).await {
            Ok(origin) => {
                tracing::info!(reference = %reference, %digest, key = %origin, "signature verified");
                self.verified.lock().expect("verified lock").insert(key);
                Ok(())
            }
            Err(error) => Err(OciError::Signature {
                reference: reference.clone(),
                digest: *digest,
                error,
            }),
        }
    }
}
