//! The few outgoing HTTP requests a resource server makes: issuer metadata,
//! key sets (GET) and token introspection (POST), each answered with JSON.
//!
//! Why not an HTTP client crate: these are three small requests to a handful
//! of known servers, and hyper's client, rustls and the Mozilla root store are
//! already built for wasmtime-wasi-http; a general client would add a second
//! stack for no gain. One connection per request (no pool): key sets and
//! metadata are cached, so these are rare.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::Request;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio_rustls::rustls::pki_types::ServerName;
use url::Url;

use crate::outbound;

/// Longest one request may take, connecting included.
const TIMEOUT: Duration = Duration::from_secs(10);
/// Largest answer read; a key set or metadata document is a few kilobytes.
const MAX_ANSWER_BYTES: usize = 1 << 20;

/// Why a request to an authorization server failed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FetchError {
    #[error("{url}: {reason}")]
    Failed { url: String, reason: String },
}

fn failed(url: &Url, reason: impl std::fmt::Display) -> FetchError {
    FetchError::Failed {
        url: url.to_string(),
        reason: reason.to_string(),
    }
}

/// Whether `url` may be fetched: `https://`, or `http://` on a loopback
/// address (tests and local development), with no credentials in it.
pub fn check_url(url: &Url) -> Result<(), String> {
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!("{url}: credentials in the URL are not accepted"));
    }
    match url.scheme() {
        "https" => Ok(()),
        "http" if is_loopback(url) => Ok(()),
        "http" => Err(format!(
            "{url}: plain http:// is accepted only on a loopback address; use https://"
        )),
        other => Err(format!("{url}: unsupported scheme {other:?}")),
    }
}

fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

/// `GET url`, expecting 200 and a JSON answer.
pub async fn get_json(url: &Url) -> Result<serde_json::Value, FetchError> {
    let request = Request::get(url.as_str())
        .header(hyper::header::ACCEPT, "application/json")
        .body(Full::new(Bytes::new()));
    send(url, request).await
}

/// `POST url` with a form body and HTTP Basic credentials (RFC 7662's client
/// authentication), expecting 200 and a JSON answer.
pub async fn post_form(
    url: &Url,
    basic: &str,
    form: String,
) -> Result<serde_json::Value, FetchError> {
    let request = Request::post(url.as_str())
        .header(hyper::header::ACCEPT, "application/json")
        .header(
            hyper::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .header(hyper::header::AUTHORIZATION, basic)
        .body(Full::new(Bytes::from(form)));
    send(url, request).await
}

async fn send(
    url: &Url,
    request: Result<Request<Full<Bytes>>, hyper::http::Error>,
) -> Result<serde_json::Value, FetchError> {
    check_url(url).map_err(|reason| failed(url, reason))?;
    let mut request = request.map_err(|e| failed(url, e))?;
    let host = url.host_str().ok_or_else(|| failed(url, "no host"))?;
    let authority = match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    };
    request.headers_mut().insert(
        hyper::header::HOST,
        authority.parse().map_err(|e| failed(url, e))?,
    );
    *request.uri_mut() = url[url::Position::BeforePath..]
        .parse()
        .map_err(|e| failed(url, e))?;
    tokio::time::timeout(TIMEOUT, exchange(url, request))
        .await
        .map_err(|_| failed(url, format!("no answer within {} s", TIMEOUT.as_secs())))?
}

async fn exchange(
    url: &Url,
    request: Request<Full<Bytes>>,
) -> Result<serde_json::Value, FetchError> {
    let port = url
        .port_or_known_default()
        .ok_or_else(|| failed(url, "no port"))?;
    let host = url.host_str().ok_or_else(|| failed(url, "no host"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let tcp = TcpStream::connect((host, port))
        .await
        .map_err(|e| failed(url, format!("cannot connect: {e}")))?;
    let response = if url.scheme() == "https" {
        let name = ServerName::try_from(host.to_owned()).map_err(|e| failed(url, e))?;
        let tls = outbound::tls()
            .connect(name, tcp)
            .await
            .map_err(|e| failed(url, format!("TLS: {e}")))?;
        outbound::exchange(TokioIo::new(tls), request)
            .await
            .map_err(|e| failed(url, e))?
    } else {
        outbound::exchange(TokioIo::new(tcp), request)
            .await
            .map_err(|e| failed(url, e))?
    };
    let status = response.status();
    let body = Limited::new(response.into_body(), MAX_ANSWER_BYTES)
        .collect()
        .await
        .map_err(|e| failed(url, format!("reading the answer: {e}")))?
        .to_bytes();
    if !status.is_success() {
        return Err(failed(url, format!("answered {status}")));
    }
    serde_json::from_slice(&body).map_err(|e| failed(url, format!("answer is not JSON: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_only_on_loopback() {
        for ok in [
            "https://as.example.com/",
            "http://127.0.0.1:8080/",
            "http://[::1]:9/x",
            "http://localhost:3000",
        ] {
            assert_eq!(check_url(&Url::parse(ok).unwrap()), Ok(()), "{ok}");
        }
        assert_eq!(
            check_url(&Url::parse("http://as.example.com/").unwrap()),
            Err("http://as.example.com/: plain http:// is accepted only on a loopback address; use https://".into())
        );
        assert_eq!(
            check_url(&Url::parse("ftp://127.0.0.1/").unwrap()),
            Err("ftp://127.0.0.1/: unsupported scheme \"ftp\"".into())
        );
        assert_eq!(
            check_url(&Url::parse("https://u:p@as.example.com/").unwrap()),
            Err("https://u:p@as.example.com/: credentials in the URL are not accepted".into())
        );
    }

    #[tokio::test]
    async fn a_refused_connection_names_the_url() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let url = Url::parse(&format!("http://127.0.0.1:{port}/jwks")).unwrap();
        let FetchError::Failed { url: named, reason } = get_json(&url).await.unwrap_err();
        assert_eq!(named, url.to_string());
        assert!(reason.starts_with("cannot connect: "), "{reason}");
    }
}
