//! The OTLP exporter of each signal (traces, metrics): which wire protocol it
//! speaks, where it sends, and its TLS client.
//!
//! The protocol is the signal's `OTEL_EXPORTER_OTLP_{TRACES,METRICS}_PROTOCOL`,
//! else `OTEL_EXPORTER_OTLP_PROTOCOL`, else http/protobuf (the OTLP default).
//! - **http/protobuf**, **http/json**: a blocking reqwest client with the rustls
//!   configuration of [`ClientTls`] (`http_client.rs`), which the SDK's batch processor (spans)
//!   and periodic reader (metrics) call on their own threads.
//! - **grpc**: a tonic channel. It needs a tokio runtime for its connection
//!   task, and the serving runtimes are no place for it (stdio's busy-polls
//!   one thread), so gRPC export gets a one-thread runtime of its own
//!   ([`grpc_runtime`]); the SDK threads only wait on the channel.
//!
//! `--otlp-endpoint URL` is the base URL of both signals: HTTP sends
//! to `URL/v1/traces` and `URL/v1/metrics`, gRPC to `URL` (the service names
//! the method). Without it, the SDK reads the `OTEL_EXPORTER_OTLP_*ENDPOINT`
//! variables itself, as it reads the headers, timeouts and compression (gzip,
//! checked here first).

use std::time::Duration;

use opentelemetry_otlp::{
    MetricExporter, Protocol, SpanExporter, WithExportConfig, WithHttpConfig, WithTonicConfig,
};

use super::TelemetryError;
use super::http_client::ExportClient;
use super::tls::{ClientTls, TlsVariables};

/// The OTLP default export timeout (`OTEL_EXPORTER_OTLP_TIMEOUT`).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// An OTLP wire protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    HttpProtobuf,
    HttpJson,
    Grpc,
}

/// A signal: what its variables are called, and its http/protobuf path.
pub struct Signal {
    protocol: [&'static str; 2],
    timeout: [&'static str; 2],
    compression: [&'static str; 2],
    tls: TlsVariables,
    path: &'static str,
}

/// The general variable of each pair, second in each.
macro_rules! signal {
    ($signal:literal, $path:literal) => {
        Signal {
            protocol: [
                concat!("OTEL_EXPORTER_OTLP_", $signal, "_PROTOCOL"),
                "OTEL_EXPORTER_OTLP_PROTOCOL",
            ],
            timeout: [
                concat!("OTEL_EXPORTER_OTLP_", $signal, "_TIMEOUT"),
                "OTEL_EXPORTER_OTLP_TIMEOUT",
            ],
            compression: [
                concat!("OTEL_EXPORTER_OTLP_", $signal, "_COMPRESSION"),
                "OTEL_EXPORTER_OTLP_COMPRESSION",
            ],
            tls: TlsVariables {
                certificate: [
                    concat!("OTEL_EXPORTER_OTLP_", $signal, "_CERTIFICATE"),
                    "OTEL_EXPORTER_OTLP_CERTIFICATE",
                ],
                client_certificate: [
                    concat!("OTEL_EXPORTER_OTLP_", $signal, "_CLIENT_CERTIFICATE"),
                    "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE",
                ],
                client_key: [
                    concat!("OTEL_EXPORTER_OTLP_", $signal, "_CLIENT_KEY"),
                    "OTEL_EXPORTER_OTLP_CLIENT_KEY",
                ],
            },
            path: $path,
        }
    };
}

pub const TRACES: Signal = signal!("TRACES", "/v1/traces");

impl Signal {
    /// The variables naming its TLS files.
    pub fn tls_variables(&self) -> &TlsVariables {
        &self.tls
    }
}
pub const METRICS: Signal = signal!("METRICS", "/v1/metrics");

/// How one signal is exported, read and checked from the environment.
pub struct Plan {
    pub wire: Wire,
    /// From `--otlp-endpoint`; else the SDK reads the variables.
    endpoint: Option<String>,
    timeout: Duration,
    tls: ClientTls,
}

impl Plan {
    pub fn read(
        signal: &Signal,
        base: Option<&str>,
        getenv: &impl Fn(&str) -> Option<String>,
    ) -> Result<Self, TelemetryError> {
        let wire = wire(signal, getenv)?;
        check_compression(signal, getenv)?;
        let endpoint = base.map(|base| match wire {
            Wire::HttpProtobuf | Wire::HttpJson => format!("{base}{}", signal.path),
            Wire::Grpc => base.to_string(),
        });
        let timeout = first(&signal.timeout, getenv)
            .and_then(|(_, millis)| millis.trim().parse().ok())
            .map_or(DEFAULT_TIMEOUT, Duration::from_millis);
        Ok(Self {
            wire,
            endpoint,
            timeout,
            tls: ClientTls::read(&signal.tls, getenv)?,
        })
    }

    pub fn span_exporter(
        &self,
        grpc: Option<&tokio::runtime::Runtime>,
    ) -> Result<SpanExporter, TelemetryError> {
        Ok(match self.wire {
            Wire::HttpProtobuf | Wire::HttpJson => {
                self.http(SpanExporter::builder().with_http())?.build()?
            }
            Wire::Grpc => {
                let _runtime = grpc.expect("a gRPC plan has its runtime").enter();
                self.grpc(SpanExporter::builder().with_tonic()).build()?
            }
        })
    }

    pub fn metric_exporter(
        &self,
        grpc: Option<&tokio::runtime::Runtime>,
    ) -> Result<MetricExporter, TelemetryError> {
        Ok(match self.wire {
            Wire::HttpProtobuf | Wire::HttpJson => {
                self.http(MetricExporter::builder().with_http())?.build()?
            }
            Wire::Grpc => {
                let _runtime = grpc.expect("a gRPC plan has its runtime").enter();
                self.grpc(MetricExporter::builder().with_tonic()).build()?
            }
        })
    }

    fn http<B: WithExportConfig + WithHttpConfig>(&self, builder: B) -> Result<B, TelemetryError> {
        let protocol = match self.wire {
            Wire::HttpJson => Protocol::HttpJson,
            _ => Protocol::HttpBinary,
        };
        let builder = builder
            .with_protocol(protocol)
            .with_http_client(ExportClient::new(self.timeout, self.tls.rustls())?);
        Ok(match &self.endpoint {
            Some(url) => builder.with_endpoint(url),
            None => builder,
        })
    }

    fn grpc<B: WithExportConfig + WithTonicConfig>(&self, builder: B) -> B {
        let builder = builder.with_tls_config(self.tls.tonic());
        match &self.endpoint {
            Some(url) => builder.with_endpoint(url),
            None => builder,
        }
    }
}

/// A one-thread runtime for the gRPC channels.
pub fn grpc_runtime() -> Result<tokio::runtime::Runtime, TelemetryError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("wharf-otlp-grpc")
        .enable_all()
        .build()
        .map_err(TelemetryError::Runtime)
}

/// The signal's protocol.
fn wire(signal: &Signal, getenv: &impl Fn(&str) -> Option<String>) -> Result<Wire, TelemetryError> {
    let Some((variable, value)) = first(&signal.protocol, getenv) else {
        return Ok(Wire::HttpProtobuf);
    };
    match value.trim() {
        "http/protobuf" => Ok(Wire::HttpProtobuf),
        "grpc" => Ok(Wire::Grpc),
        "http/json" => Ok(Wire::HttpJson),
        _ => Err(TelemetryError::Protocol { variable, value }),
    }
}

/// Refuses a compression this build cannot send. The SDK reads the variable
/// itself and would only warn (before logging starts, so unseen) and send
/// uncompressed; gzip, the one the OTLP specification names, is built.
fn check_compression(
    signal: &Signal,
    getenv: &impl Fn(&str) -> Option<String>,
) -> Result<(), TelemetryError> {
    match first(&signal.compression, getenv) {
        Some((variable, value))
            if !["gzip", "none"].contains(&value.trim().to_ascii_lowercase().as_str()) =>
        {
            Err(TelemetryError::Compression { variable, value })
        }
        _ => Ok(()),
    }
}

/// The first variable of `pair` set to something.
fn first(
    pair: &[&'static str; 2],
    getenv: &impl Fn(&str) -> Option<String>,
) -> Option<(&'static str, String)> {
    pair.iter().find_map(|variable| {
        getenv(variable)
            .filter(|value| !value.trim().is_empty())
            .map(|value| (*variable, value))
    })
}
