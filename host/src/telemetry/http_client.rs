//! The client of the OTLP/HTTP exporters (http/protobuf and http/json):
//! reqwest's blocking client with Wharf's rustls configuration, wrapped so
//! that a failed export says why.
//!
//! The SDK logs a failed HTTP export as `HTTP export failed: network error`
//! and keeps the cause (an unknown issuer, a refused connection) at debug
//! level; for a collector behind TLS that cause is the whole diagnosis. So
//! each failure's cause, with its source chain, is logged here once, until an
//! export succeeds again or the cause changes.

use std::sync::Mutex;
use std::time::Duration;

use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};

use super::TelemetryError;

/// An OTLP/HTTP client that logs why an export failed.
#[derive(Debug)]
pub struct ExportClient {
    inner: reqwest::blocking::Client,
    /// The cause last logged; `None` after a success.
    last_failure: Mutex<Option<String>>,
}

impl ExportClient {
    /// Builds the client, on a thread of its own as reqwest asks (its
    /// builder must not run inside an async runtime).
    pub fn new(timeout: Duration, tls: rustls::ClientConfig) -> Result<Self, TelemetryError> {
        let builder = reqwest::blocking::Client::builder()
            .timeout(timeout)
            .tls_backend_preconfigured(tls);
        let inner = std::thread::scope(|scope| {
            scope
                .spawn(|| builder.build())
                .join()
                .expect("building the HTTP client does not panic")
        })
        .map_err(TelemetryError::HttpClient)?;
        Ok(Self {
            inner,
            last_failure: Mutex::new(None),
        })
    }
}

#[async_trait::async_trait]
impl HttpClient for ExportClient {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let uri = request.uri().to_string();
        let result = self.inner.send_bytes(request).await;
        let mut last = self.last_failure.lock().expect("failure lock");
        match &result {
            Ok(_) => *last = None,
            Err(error) => {
                let cause = chain(error.as_ref());
                if last.as_deref() != Some(cause.as_str()) {
                    tracing::warn!("OTLP export to {uri} failed: {cause}");
                    *last = Some(cause);
                }
            }
        }
        result
    }
}

/// An error and its sources, `: `-separated.
fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn a_cause_is_told_with_its_sources() {
        let error = Outer(std::io::Error::other(
            "invalid peer certificate: UnknownIssuer",
        ));
        assert_eq!(
            chain(&error),
            "outer: invalid peer certificate: UnknownIssuer"
        );
    }
}
