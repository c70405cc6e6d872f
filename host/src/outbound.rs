//! Outgoing HTTP(S), one request per fresh HTTP/1 connection: what the OAuth
//! fetches (`oauth/fetch.rs`) and the OCI registry client (`oci/client`)
//! share. A leaf: hyper's client and rustls with the Mozilla roots of
//! `webpki-roots`, so trust is the same on every machine.

use std::sync::{Arc, LazyLock};

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls;

/// TLS with the Mozilla roots, built once.
static TLS: LazyLock<TlsConnector> = LazyLock::new(|| {
    let roots = rustls::RootCertStore::from_iter(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("ring supports the default TLS versions")
    .with_root_certificates(roots)
    .with_no_client_auth();
    TlsConnector::from(Arc::new(config))
});

/// The TLS connector every outgoing HTTPS request uses.
pub fn tls() -> &'static TlsConnector {
    &TLS
}

/// Sends `request` on `io`, a connection just opened (plain or TLS), and
/// returns the response head; the connection is driven in the background
/// until the body has been read.
pub async fn exchange<T>(
    io: TokioIo<T>,
    request: Request<Full<Bytes>>,
) -> Result<Response<Incoming>, hyper::Error>
where
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(io).await?;
    tokio::spawn(async move {
        if let Err(error) = connection.await {
            tracing::debug!("outgoing connection ended: {error}");
        }
    });
    sender.send_request(request).await
}
