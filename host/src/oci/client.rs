//! A small client of the OCI distribution API: the calls Wharf makes (get a
//! manifest, get a blob, upload a blob, put a manifest), on hyper's HTTP/1
//! client and rustls, which the tree already builds for wasmtime-wasi-http.
//!
//! HTTPS by default, with the Mozilla roots of `webpki-roots`; plain HTTP
//! only for a loopback registry or one named with `--insecure-registry`.
//! Every response body is read under a cap, and every blob is checked
//! against its digest before anyone sees its bytes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, StatusCode, Uri, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use super::auth::{Challenge, Credentials};
use super::reference::{Digest, Reference, Version};

/// Media types of an image manifest, asked for in this order.
pub const MANIFEST_TYPES: &str = "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json";
/// The OCI image manifest's media type (what Wharf pushes).
pub const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
/// The largest manifest read.
pub const MAX_MANIFEST_BYTES: usize = 4 << 20;
/// The largest blob read (a component, a signature payload).
pub const MAX_BLOB_BYTES: usize = 512 << 20;
/// How long one request may take, connection included.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// Redirects followed (registries often send blobs to a storage host).
const MAX_REDIRECTS: usize = 3;

/// Why a registry call failed.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("cannot reach the registry {registry}: {reason}")]
    Unreachable { registry: String, reason: String },
    #[error("{what}: the registry answered {status}{body}")]
    Status {
        what: String,
        status: StatusCode,
        body: String,
    },
    #[error("{what}: the answer is larger than {limit} bytes")]
    TooLarge { what: String, limit: usize },
    #[error("{what}: the registry sent bytes whose digest is {actual}, not {expected}")]
    DigestMismatch {
        what: String,
        expected: Digest,
        actual: Digest,
    },
    #[error("{what}: {reason}")]
    Protocol { what: String, reason: String },
}

/// Which registries may be spoken to over plain HTTP.
#[derive(Debug, Clone, Default)]
pub struct ClientOptions {
    /// Registries (`host` or `host:port`) reached over plain HTTP although
    /// not on loopback.
    pub insecure: Vec<String>,
    /// User names and passwords per registry.
    pub credentials: Credentials,
}

/// A connection-less client: each call opens its own connection (registry
/// calls are rare: start-up, a poll, a push).
#[derive(Clone)]
pub struct RegistryClient {
    options: ClientOptions,
    /// The `Authorization` that last worked, per registry (`host:port`).
    authorizations: Arc<Mutex<HashMap<String, String>>>,
}

impl RegistryClient {
    /// A client with the Mozilla root certificates.
    pub fn new(options: ClientOptions) -> Self {
        Self {
            options,
            authorizations: Arc::default(),
        }
    }

    /// `http` for loopback and `--insecure-registry`, else `https`.
    fn scheme(&self, reference: &Reference) -> &'static str {
        let host = reference.host();
        let loopback = host == "localhost"
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback());
        let named = self
            .options
            .insecure
            .iter()
            .any(|r| r == &reference.registry || r == host);
        if loopback || named { "http" } else { "https" }
    }

    fn url(&self, reference: &Reference, rest: &str) -> String {
        format!(
            "{}://{}/v2/{}/{rest}",
            self.scheme(reference),
            reference.registry,
            reference.repository
        )
    }

    /// The manifest `reference` names, and its digest (computed from the bytes;
    /// for a digest reference, checked against it).
    pub async fn manifest(&self, reference: &Reference) -> Result<(Digest, Bytes), RegistryError> {
        let what = format!("getting the manifest of {reference}");
        let name = match &reference.version {
            Version::Tag(tag) => tag.clone(),
            Version::Digest(digest) => digest.to_string(),
        };
        let url = self.url(reference, &format!("manifests/{name}"));
        let (status, _, body) = self
            .send(
                &what,
                Method::GET,
                &url,
                Some(MANIFEST_TYPES),
                None,
                MAX_MANIFEST_BYTES,
            )
            .await?;
        expect(&what, status, StatusCode::OK, &body)?;
        let actual = Digest::of(&body);
        if let Version::Digest(expected) = &reference.version
            && *expected != actual
        {
            return Err(RegistryError::DigestMismatch {
                what,
                expected: *expected,
                actual,
            });
        }
        Ok((actual, body))
    }

    /// The blob `digest` of `reference`'s repository, checked against it.
    pub async fn blob(
        &self,
        reference: &Reference,
        digest: &Digest,
    ) -> Result<Bytes, RegistryError> {
        let what = format!("getting the blob {digest} of {reference}");
        let url = self.url(reference, &format!("blobs/{digest}"));
        let (status, _, body) = self
            .send(&what, Method::GET, &url, None, None, MAX_BLOB_BYTES)
            .await?;
        expect(&what, status, StatusCode::OK, &body)?;
        let actual = Digest::of(&body);
        if actual != *digest {
            return Err(RegistryError::DigestMismatch {
                what,
                expected: *digest,
                actual,
            });
        }
        Ok(body)
    }

    /// Uploads `bytes` as a blob of `reference`'s repository (one monolithic
    /// upload: POST for a session, PUT with the digest); returns its digest.
    pub async fn push_blob(
        &self,
        reference: &Reference,
        bytes: Bytes,
    ) -> Result<Digest, RegistryError> {
        let digest = Digest::of(&bytes);
        let what = format!("uploading the blob {digest} to {reference}");
        let url = self.url(reference, "blobs/uploads/");
        let (status, headers, body) = self
            .send(
                &what,
                Method::POST,
                &url,
                None,
                Some(Bytes::new()),
                MAX_MANIFEST_BYTES,
            )
            .await?;
        expect(&what, status, StatusCode::ACCEPTED, &body)?;
        let location = headers
            .get(header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| RegistryError::Protocol {
                what: what.clone(),
                reason: "the upload session has no Location".into(),
            })?;
        let base = absolute(&url, location).map_err(|reason| RegistryError::Protocol {
            what: what.clone(),
            reason,
        })?;
        let separator = if base.contains('?') { '&' } else { '?' };
        let put = format!("{base}{separator}digest={digest}");
        let (status, _, body) = self
            .send(
                &what,
                Method::PUT,
                &put,
                None,
                Some(bytes),
                MAX_MANIFEST_BYTES,
            )
            .await?;
        expect(&what, status, StatusCode::CREATED, &body)?;
        Ok(digest)
    }

    /// Puts `manifest` (of `media_type`) at `reference`'s tag or digest;
    /// returns its digest.
    pub async fn push_manifest(
        &self,
        reference: &Reference,
        media_type: &str,
        manifest: Bytes,
    ) -> Result<Digest, RegistryError> {
        let digest = Digest::of(&manifest);
        let what = format!("putting the manifest {digest} at {reference}");
        let name = match &reference.version {
            Version::Tag(tag) => tag.clone(),
            Version::Digest(digest) => digest.to_string(),
        };
        let url = self.url(reference, &format!("manifests/{name}"));
        let (status, _, body) = self
            .send_typed(&what, Method::PUT, &url, media_type, manifest)
            .await?;
        expect(&what, status, StatusCode::CREATED, &body)?;
        Ok(digest)
    }
}

/// Fails unless the registry answered `wanted`; the error quotes the start of
/// the body (registries explain themselves there).
fn expect(
    what: &str,
    status: StatusCode,
    wanted: StatusCode,
    body: &[u8],
) -> Result<(), RegistryError> {
    if status == wanted {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&body[..body.len().min(300)]);
    let body = if text.trim().is_empty() {
        String::new()
    } else {
        format!(": {}", text.trim())
    };
    Err(RegistryError::Status {
        what: what.into(),
        status,
        body,
    })
}

mod request;

use request::absolute;

#[cfg(test)]
mod tests;
