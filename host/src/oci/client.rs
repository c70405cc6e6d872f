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
    tls: tokio_rustls::TlsConnector,
    /// The `Authorization` that last worked, per registry (`host:port`).
    authorizations: Arc<Mutex<HashMap<String, String>>>,
}

impl RegistryClient {
    /// A client with the Mozilla root certificates.
    pub fn new(options: ClientOptions) -> Self {
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("ring supports the default TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
        Self {
            options,
            tls: tokio_rustls::TlsConnector::from(Arc::new(config)),
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

    async fn send_typed(
        &self,
        what: &str,
        method: Method,
        url: &str,
        content_type: &str,
        body: Bytes,
    ) -> Result<(StatusCode, HeaderMap, Bytes), RegistryError> {
        self.request(
            what,
            method,
            url,
            None,
            Some((content_type, body)),
            MAX_MANIFEST_BYTES,
        )
        .await
    }

    async fn send(
        &self,
        what: &str,
        method: Method,
        url: &str,
        accept: Option<&str>,
        body: Option<Bytes>,
        limit: usize,
    ) -> Result<(StatusCode, HeaderMap, Bytes), RegistryError> {
        let body = body.map(|b| ("application/octet-stream", b));
        self.request(what, method, url, accept, body, limit).await
    }

    /// One request, following redirects of a GET, under [`REQUEST_TIMEOUT`];
    /// a 401 from the registry is answered once (see [`super::auth`]).
    async fn request(
        &self,
        what: &str,
        method: Method,
        url: &str,
        accept: Option<&str>,
        body: Option<(&str, Bytes)>,
        limit: usize,
    ) -> Result<(StatusCode, HeaderMap, Bytes), RegistryError> {
        let origin = authority(url);
        let mut url = url.to_string();
        let mut authorized = false;
        // Redirects, and one more turn for the 401.
        for _ in 0..=MAX_REDIRECTS + 1 {
            // Credentials go to the registry only, never to a storage host it redirects to.
            let at_origin = authority(&url) == origin;
            let authorization = if at_origin {
                self.authorizations
                    .lock()
                    .expect("authorizations lock")
                    .get(&origin)
                    .cloned()
            } else {
                None
            };
            let attempt = self.once(
                what,
                method.clone(),
                &url,
                Asking {
                    accept,
                    authorization: authorization.as_deref(),
                },
                body.clone(),
                limit,
            );
            let (status, headers, bytes) =
                tokio::time::timeout(REQUEST_TIMEOUT, attempt)
                    .await
                    .map_err(|_| unreachable(&url, "no answer within 60 s".into()))??;
            if status == StatusCode::UNAUTHORIZED && at_origin && !authorized {
                authorized = true;
                if let Some(value) = self.authorize(what, &origin, &headers).await? {
                    self.authorizations
                        .lock()
                        .expect("authorizations lock")
                        .insert(origin.clone(), value);
                    continue;
                }
            }
            if status.is_redirection()
                && method == Method::GET
                && let Some(location) = headers.get(header::LOCATION).and_then(|v| v.to_str().ok())
            {
                url = absolute(&url, location).map_err(|reason| RegistryError::Protocol {
                    what: what.into(),
                    reason,
                })?;
                continue;
            }
            return Ok((status, headers, bytes));
        }
        Err(RegistryError::Protocol {
            what: what.into(),
            reason: format!("more than {MAX_REDIRECTS} redirects"),
        })
    }

    /// The `Authorization` that answers a 401's challenge, if there is one:
    /// the credentials for `Basic`, a token from the realm for `Bearer`.
    async fn authorize(
        &self,
        what: &str,
        registry: &str,
        headers: &HeaderMap,
    ) -> Result<Option<String>, RegistryError> {
        let basic = self.options.credentials.basic(registry);
        let challenge = headers
            .get(header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .and_then(Challenge::parse);
        let (realm, service, scope) = match challenge {
            Some(Challenge::Basic) => return Ok(basic),
            Some(Challenge::Bearer {
                realm,
                service,
                scope,
            }) => (realm, service, scope),
            None => return Ok(None),
        };
        let mut query = Vec::new();
        for (key, value) in [("service", service), ("scope", scope)] {
            if let Some(value) = value {
                query.push(format!("{key}={}", value.replace(' ', "%20")));
            }
        }
        let separator = if realm.contains('?') { '&' } else { '?' };
        let url = if query.is_empty() {
            realm
        } else {
            format!("{realm}{separator}{}", query.join("&"))
        };
        let what = format!("{what}: getting a token from {url}");
        let (status, _, body) = self
            .once(
                &what,
                Method::GET,
                &url,
                Asking {
                    accept: None,
                    authorization: basic.as_deref(),
                },
                None,
                MAX_MANIFEST_BYTES,
            )
            .await?;
        expect(&what, status, StatusCode::OK, &body)?;
        #[derive(serde::Deserialize)]
        struct Token {
            token: Option<String>,
            access_token: Option<String>,
        }
        let token: Token = serde_json::from_slice(&body).map_err(|e| RegistryError::Protocol {
            what: what.clone(),
            reason: e.to_string(),
        })?;
        let token = token
            .token
            .or(token.access_token)
            .ok_or(RegistryError::Protocol {
                what,
                reason: "the answer has no token".into(),
            })?;
        Ok(Some(format!("Bearer {token}")))
    }

    async fn once(
        &self,
        what: &str,
        method: Method,
        url: &str,
        asking: Asking<'_>,
        body: Option<(&str, Bytes)>,
        limit: usize,
    ) -> Result<(StatusCode, HeaderMap, Bytes), RegistryError> {
        let Asking {
            accept,
            authorization,
        } = asking;
        let uri: Uri = url.parse().map_err(|e| RegistryError::Protocol {
            what: what.into(),
            reason: format!("bad URL {url}: {e}"),
        })?;
        let tls = uri.scheme_str() == Some("https");
        let host = uri
            .host()
            .unwrap_or_default()
            .trim_matches(['[', ']'])
            .to_string();
        let port = uri.port_u16().unwrap_or(if tls { 443 } else { 80 });
        let stream = TcpStream::connect((host.as_str(), port))
            .await
            .map_err(|e| unreachable(url, e.to_string()))?;
        let authority = uri.authority().map(|a| a.to_string()).unwrap_or_default();
        let mut request = Request::builder()
            .method(method)
            .uri(uri.path_and_query().map(|p| p.as_str()).unwrap_or("/"))
            .header(header::HOST, authority)
            .header(
                header::USER_AGENT,
                concat!("wharf/", env!("CARGO_PKG_VERSION")),
            );
        if let Some(accept) = accept {
            request = request.header(header::ACCEPT, accept);
        }
        if let Some(authorization) = authorization {
            request = request.header(header::AUTHORIZATION, authorization);
        }
        let payload = match body {
            Some((content_type, bytes)) => {
                request = request.header(header::CONTENT_TYPE, content_type);
                bytes
            }
            None => Bytes::new(),
        };
        let request = request
            .body(Full::new(payload))
            .map_err(|e| RegistryError::Protocol {
                what: what.into(),
                reason: e.to_string(),
            })?;
        let response = if tls {
            let name = rustls::pki_types::ServerName::try_from(host.clone())
                .map_err(|e| unreachable(url, e.to_string()))?;
            let stream = self
                .tls
                .connect(name, stream)
                .await
                .map_err(|e| unreachable(url, format!("TLS: {e}")))?;
            exchange(url, TokioIo::new(stream), request).await?
        } else {
            exchange(url, TokioIo::new(stream), request).await?
        };
        let (parts, body) = response.into_parts();
        let bytes = Limited::new(body, limit)
            .collect()
            .await
            .map_err(|e| {
                if e.is::<http_body_util::LengthLimitError>() {
                    RegistryError::TooLarge {
                        what: what.into(),
                        limit,
                    }
                } else {
                    unreachable(url, e.to_string())
                }
            })?
            .to_bytes();
        Ok((parts.status, parts.headers, bytes))
    }
}

/// The request headers that vary: what is accepted, and the authorization.
struct Asking<'a> {
    accept: Option<&'a str>,
    authorization: Option<&'a str>,
}

/// Sends one request on a fresh HTTP/1 connection.
async fn exchange<T>(
    url: &str,
    io: TokioIo<T>,
    request: Request<Full<Bytes>>,
) -> Result<http::Response<hyper::body::Incoming>, RegistryError>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|e| unreachable(url, e.to_string()))?;
    tokio::spawn(async move {
        if let Err(error) = connection.await {
            tracing::debug!("registry connection ended: {error}");
        }
    });
    sender
        .send_request(request)
        .await
        .map_err(|e| unreachable(url, e.to_string()))
}

/// `host:port` of a URL (what credentials are keyed by).
fn authority(url: &str) -> String {
    url.parse::<Uri>()
        .ok()
        .and_then(|u| u.authority().map(|a| a.to_string()))
        .unwrap_or_default()
}

fn unreachable(url: &str, reason: String) -> RegistryError {
    let registry = url
        .parse::<Uri>()
        .ok()
        .and_then(|u| u.authority().map(|a| a.to_string()))
        .unwrap_or_else(|| url.to_string());
    RegistryError::Unreachable { registry, reason }
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

/// `location` (absolute, or a path on the same host) as an absolute URL.
fn absolute(base: &str, location: &str) -> Result<String, String> {
    if location.starts_with("http://") || location.starts_with("https://") {
        return Ok(location.to_string());
    }
    if !location.starts_with('/') {
        return Err(format!("unexpected Location `{location}`"));
    }
    let uri: Uri = base.parse().map_err(|e| format!("bad URL {base}: {e}"))?;
    Ok(format!(
        "{}://{}{location}",
        uri.scheme_str().unwrap_or("https"),
        uri.authority().map(|a| a.as_str()).unwrap_or_default()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(insecure: &[&str]) -> RegistryClient {
        RegistryClient::new(ClientOptions {
            insecure: insecure.iter().map(|s| s.to_string()).collect(),
            credentials: Credentials::default(),
        })
    }

    #[test]
    fn plain_http_only_for_loopback_or_a_named_registry() {
        let r = |s: &str| Reference::parse(s).unwrap();
        let c = client(&["reg.lan:5000"]);
        assert_eq!(c.scheme(&r("oci://127.0.0.1:5000/a:1")), "http");
        assert_eq!(c.scheme(&r("oci://localhost:5000/a:1")), "http");
        assert_eq!(c.scheme(&r("oci://[::1]:5000/a:1")), "http");
        assert_eq!(c.scheme(&r("oci://reg.lan:5000/a:1")), "http");
        assert_eq!(c.scheme(&r("oci://reg.lan:5001/a:1")), "https");
        assert_eq!(c.scheme(&r("oci://ghcr.io/a:1")), "https");
    }

    #[test]
    fn a_relative_location_keeps_the_registry() {
        assert_eq!(
            absolute(
                "http://h:5/v2/a/blobs/uploads/",
                "/v2/a/blobs/uploads/x?s=1"
            )
            .unwrap(),
            "http://h:5/v2/a/blobs/uploads/x?s=1"
        );
        assert_eq!(absolute("http://h/", "https://s/x").unwrap(), "https://s/x");
        assert_eq!(
            absolute("http://h/", "x").unwrap_err(),
            "unexpected Location `x`"
        );
    }
}
