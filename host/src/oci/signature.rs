//! Cosign-compatible signatures, verified in-process and failing closed.
//!
//! A signature of the manifest `sha256:HEX` lives in the same repository at
//! the tag `sha256-HEX.sig` (cosign's convention): an image manifest whose
//! layers are simple-signing payloads (media type
//! `application/vnd.dev.cosign.simplesigning.v1+json`), each with its
//! base64 ECDSA signature in the `dev.cosignproject.cosign/signature`
//! annotation. A payload counts when (1) its bytes are the blob its layer
//! names (checked by the client), (2) it names the very digest being loaded
//! as `critical.image.docker-manifest-digest`, and (3) its signature
//! verifies, ECDSA P-256 with SHA-256, under one of the trusted keys.
//!
//! Keys are PEM: `PUBLIC KEY` (SubjectPublicKeyInfo, what `cosign
//! generate-key-pair` writes to `cosign.pub`) and `PRIVATE KEY` (unencrypted
//! PKCS#8, what `wharf keygen` writes; cosign's own private keys are
//! encrypted and stay with cosign). The crypto is `ring`'s.
//!
//! The trust policy is a list of [`Verifier`]s; keyless signing (a Fulcio
//! certificate for an OIDC identity, logged in Rekor) would be one more
//! variant that checks the certificate chain to a Fulcio root and the
//! identity, then the same ECDSA step with the certificate's key.

use std::collections::BTreeMap;
use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use bytes::Bytes;
use ring::rand::SystemRandom;
use ring::signature::{
    ECDSA_P256_SHA256_ASN1, ECDSA_P256_SHA256_ASN1_SIGNING, EcdsaKeyPair, KeyPair,
    UnparsedPublicKey,
};
use serde::Deserialize;

use super::artifact::{Descriptor, ImageManifest};
use super::client::{OCI_MANIFEST, RegistryClient, RegistryError};
use super::reference::{Digest, Reference, Version};

/// The media type of a simple-signing payload layer.
pub const PAYLOAD_TYPE: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
/// The annotation holding a layer's signature.
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
/// The `critical.type` of a cosign payload.
const PAYLOAD_KIND: &str = "cosign container image signature";
/// DER prefix of a P-256 SubjectPublicKeyInfo, before the 65-byte point.
const P256_SPKI_PREFIX: [u8; 26] = [
    0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a,
    0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
];

/// Why a key file was refused.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum KeyError {
    #[error("cannot read the key file {path}: {reason}")]
    Read { path: String, reason: String },
    #[error("{0}: no `-----BEGIN {1}-----` block")]
    NoPem(String, &'static str),
    #[error("{0}: the PEM block is not valid base64")]
    Base64(String),
    #[error("{0}: not an ECDSA P-256 public key (SubjectPublicKeyInfo); cosign keys are P-256")]
    NotP256(String),
    #[error("{0}: not an unencrypted ECDSA P-256 PKCS#8 private key")]
    BadPrivateKey(String),
}

/// Why an artifact's signature was refused.
#[derive(Debug, thiserror::Error)]
pub enum SignatureError {
    #[error("it is not signed: there is no signature at {0}")]
    Unsigned(Reference),
    #[error("its signature could not be read: {0}")]
    Registry(#[from] RegistryError),
    #[error("no signature is valid: {}", .0.join("; "))]
    NoneValid(Vec<String>),
}

/// A public key that signatures may be made with.
#[derive(Debug, Clone)]
pub struct PublicKey {
    /// Where it came from, for log lines.
    pub origin: String,
    point: Vec<u8>,
}

/// One way a signature can be trusted. Keyless (Fulcio/Rekor) would be a
/// second variant; see the module doc.
#[derive(Debug, Clone)]
pub enum Verifier {
    Key(PublicKey),
}

/// What an OCI plugin must carry to load: with no verifiers, nothing.
#[derive(Debug, Clone, Default)]
pub struct TrustPolicy {
    verifiers: Vec<Verifier>,
}

/// A private key for `wharf sign`.
pub struct SigningKey {
    pair: EcdsaKeyPair,
}

impl PublicKey {
    /// Reads a PEM `PUBLIC KEY` file.
    pub fn from_file(path: &Path) -> Result<Self, KeyError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| KeyError::Read {
            path: origin.clone(),
            reason: e.to_string(),
        })?;
        Self::from_pem(&origin, &text)
    }

    /// Parses a PEM `PUBLIC KEY` block.
    pub fn from_pem(origin: &str, text: &str) -> Result<Self, KeyError> {
        let der = pem_block(origin, text, "PUBLIC KEY")?;
        let point = der
            .strip_prefix(&P256_SPKI_PREFIX[..])
            .filter(|p| p.len() == 65 && p[0] == 4)
            .ok_or_else(|| KeyError::NotP256(origin.into()))?;
        Ok(Self {
            origin: origin.into(),
            point: point.to_vec(),
        })
    }

    /// The PEM text of this key (SubjectPublicKeyInfo, as cosign writes it).
    pub fn to_pem(&self) -> String {
        let mut der = P256_SPKI_PREFIX.to_vec();
        der.extend_from_slice(&self.point);
        pem("PUBLIC KEY", &der)
    }

    /// Whether `signature` (ASN.1 DER) signs `message` under this key.
    pub fn verifies(&self, message: &[u8], signature: &[u8]) -> bool {
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_ASN1, &self.point)
            .verify(message, signature)
            .is_ok()
    }
}

impl SigningKey {
    /// A new random key pair; returns it and its PKCS#8 PEM text.
    pub fn generate() -> (Self, String) {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &rng)
            .expect("the system random source works");
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, pkcs8.as_ref(), &rng)
            .expect("ring reads back its own key");
        (Self { pair }, pem("PRIVATE KEY", pkcs8.as_ref()))
    }

    /// Reads a PEM `PRIVATE KEY` (PKCS#8) file.
    pub fn from_file(path: &Path) -> Result<Self, KeyError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| KeyError::Read {
            path: origin.clone(),
            reason: e.to_string(),
        })?;
        let der = pem_block(&origin, &text, "PRIVATE KEY")?;
        let pair =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &der, &SystemRandom::new())
                .map_err(|_| KeyError::BadPrivateKey(origin))?;
        Ok(Self { pair })
    }

    /// The matching public key.
    pub fn public_key(&self) -> PublicKey {
        PublicKey {
            origin: "generated".into(),
            point: self.pair.public_key().as_ref().to_vec(),
        }
    }

    /// The ASN.1 DER signature of `message`.
    pub fn sign(&self, message: &[u8]) -> Vec<u8> {
        self.pair
            .sign(&SystemRandom::new(), message)
            .expect("signing with a valid key")
            .as_ref()
            .to_vec()
    }
}

impl TrustPolicy {
    /// Trust signatures by any of `keys`.
    pub fn keys(keys: Vec<PublicKey>) -> Self {
        Self {
            verifiers: keys.into_iter().map(Verifier::Key).collect(),
        }
    }

    /// Whether plugins must be signed at all.
    pub fn requires_signatures(&self) -> bool {
        !self.verifiers.is_empty()
    }

    /// Which verifier, if any, accepts `signature` over `payload`.
    fn accepts(&self, payload: &[u8], signature: &[u8]) -> Option<&str> {
        self.verifiers.iter().find_map(|v| match v {
            Verifier::Key(key) => key
                .verifies(payload, signature)
                .then_some(key.origin.as_str()),
        })
    }

    /// Checks a detached signature (base64 DER, as `cosign sign-blob` writes
    /// it) of a local file's bytes; returns the key that made it.
    pub fn verify_blob(&self, bytes: &[u8], signature_text: &str) -> Result<&str, String> {
        let signature = BASE64
            .decode(signature_text.trim())
            .map_err(|_| "the signature is not base64".to_string())?;
        self.accepts(bytes, &signature)
            .ok_or_else(|| "the signature is by none of the trusted keys, or of other bytes".into())
    }

    /// Checks that `digest` (a manifest of `reference`'s repository) carries
    /// a valid signature by a trusted key; returns the key's origin.
    pub async fn verify(
        &self,
        client: &RegistryClient,
        reference: &Reference,
        digest: &Digest,
    ) -> Result<String, SignatureError> {
        let at = signature_reference(reference, digest);
        let manifest = match client.manifest(&at).await {
            Ok((_, bytes)) => bytes,
            Err(RegistryError::Status { status, .. }) if status == http::StatusCode::NOT_FOUND => {
                return Err(SignatureError::Unsigned(at));
            }
            Err(error) => return Err(error.into()),
        };
        let manifest = ImageManifest::parse(&manifest)
            .map_err(|e| SignatureError::NoneValid(vec![e.to_string()]))?;
        let mut reasons = Vec::new();
        for (i, layer) in manifest.layers.iter().enumerate() {
            match self.check_layer(client, &at, layer, digest).await {
                Ok(origin) => return Ok(origin),
                Err(reason) => reasons.push(format!("signature {}: {reason}", i + 1)),
            }
        }
        if reasons.is_empty() {
            return Err(SignatureError::Unsigned(at));
        }
        Err(SignatureError::NoneValid(reasons))
    }

    async fn check_layer(
        &self,
        client: &RegistryClient,
        at: &Reference,
        layer: &Descriptor,
        digest: &Digest,
    ) -> Result<String, String> {
        if layer.media_type != PAYLOAD_TYPE {
            return Err(format!(
                "a layer of type `{}`, not a payload",
                layer.media_type
            ));
        }
        let signature = layer
            .annotations
            .get(SIGNATURE_ANNOTATION)
            .ok_or("the payload has no signature annotation")?;
        let signature = BASE64
            .decode(signature.trim())
            .map_err(|_| "the signature is not base64".to_string())?;
        let blob = Digest::parse(&layer.digest).map_err(|e| e.to_string())?;
        let payload = client.blob(at, &blob).await.map_err(|e| e.to_string())?;
        let named = payload_digest(&payload)?;
        if named != *digest {
            return Err(format!("it signs {named}, not {digest}"));
        }
        self.accepts(&payload, &signature)
            .map(str::to_string)
            .ok_or_else(|| "it is signed by none of the trusted keys".to_string())
    }
}

/// Where the signatures of `digest` live: `sha256-HEX.sig` in the same repository.
pub fn signature_reference(reference: &Reference, digest: &Digest) -> Reference {
    reference.with_version(Version::Tag(format!("sha256-{}.sig", digest.hex())))
}

/// The simple-signing payload cosign signs for `digest` of `reference`.
pub fn payload(reference: &Reference, digest: &Digest) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "critical": {
            "identity": {"docker-reference": format!("{}/{}", reference.registry, reference.repository)},
            "image": {"docker-manifest-digest": digest.to_string()},
            "type": PAYLOAD_KIND,
        },
        "optional": null,
    }))
    .expect("JSON of strings")
}

/// The digest a payload names, if it is a cosign payload.
fn payload_digest(payload: &[u8]) -> Result<Digest, String> {
    #[derive(Deserialize)]
    struct Payload {
        critical: Critical,
    }
    #[derive(Deserialize)]
    struct Critical {
        image: Image,
        #[serde(rename = "type")]
        kind: String,
    }
    #[derive(Deserialize)]
    struct Image {
        #[serde(rename = "docker-manifest-digest")]
        digest: String,
    }
    let parsed: Payload = serde_json::from_slice(payload)
        .map_err(|e| format!("the payload is not a simple-signing payload: {e}"))?;
    if parsed.critical.kind != PAYLOAD_KIND {
        return Err(format!("the payload's type is `{}`", parsed.critical.kind));
    }
    Digest::parse(&parsed.critical.image.digest).map_err(|e| e.to_string())
}

/// Signs `digest` of `reference` and pushes the signature (cosign's layout),
/// keeping the signatures already there.
pub async fn sign(
    client: &RegistryClient,
    key: &SigningKey,
    reference: &Reference,
    digest: &Digest,
) -> Result<Reference, RegistryError> {
    let at = signature_reference(reference, digest);
    let payload = payload(reference, digest);
    let signature = BASE64.encode(key.sign(&payload));
    let payload_digest = client.push_blob(&at, Bytes::from(payload.clone())).await?;
    let config = serde_json::to_vec(&serde_json::json!({
        "architecture": "", "os": "", "config": {},
        "rootfs": {"type": "layers", "diff_ids": [payload_digest.to_string()]},
    }))
    .expect("JSON");
    client.push_blob(&at, Bytes::from(config.clone())).await?;
    let mut layer = Descriptor::of(PAYLOAD_TYPE, &payload);
    layer
        .annotations
        .insert(SIGNATURE_ANNOTATION.into(), signature);
    let mut layers = match client.manifest(&at).await {
        Ok((_, bytes)) => ImageManifest::parse(&bytes)
            .map(|m| m.layers)
            .unwrap_or_default(),
        Err(_) => Vec::new(),
    };
    layers.push(layer);
    let manifest = ImageManifest {
        schema_version: 2,
        media_type: Some(OCI_MANIFEST.into()),
        artifact_type: None,
        config: Descriptor::of("application/vnd.oci.image.config.v1+json", &config),
        layers,
        annotations: BTreeMap::new(),
    };
    let bytes = serde_json::to_vec(&manifest).expect("JSON");
    client
        .push_manifest(&at, OCI_MANIFEST, Bytes::from(bytes))
        .await?;
    Ok(at)
}

/// The DER bytes of the `label` block of a PEM text.
fn pem_block(origin: &str, text: &str, label: &'static str) -> Result<Vec<u8>, KeyError> {
    let begin = format!("-----BEGIN {label}-----");
    let end = format!("-----END {label}-----");
    let body = text
        .split_once(&begin)
        .and_then(|(_, rest)| rest.split_once(&end))
        .map(|(body, _)| body)
        .ok_or_else(|| KeyError::NoPem(origin.into(), label))?;
    let joined: String = body.split_whitespace().collect();
    BASE64
        .decode(joined)
        .map_err(|_| KeyError::Base64(origin.into()))
}

/// `der` as a PEM block, 64 characters a line.
fn pem(label: &str, der: &[u8]) -> String {
    let text = BASE64.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in text.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(line).expect("base64 is ASCII"));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

#[cfg(test)]
mod tests;
