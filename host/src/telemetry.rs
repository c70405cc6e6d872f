//! OpenTelemetry export over OTLP (http/protobuf, http/json or grpc, plain or
//! TLS): one
//! span per MCP request with child spans for the phases of a tool call, and
//! the server's metrics.
//!
//! Strategy: Wharf's spans are ordinary `tracing` spans under one target,
//! [`SPAN_TARGET`]. When export is on, `cli/process.rs` adds the
//! `tracing-opentelemetry` layer built here, filtered to that target, and the
//! stderr log filters it out; when it is off, no layer wants the target, so
//! every span macro stops at tracing's cached "never" for its call site (no
//! field is evaluated, nothing is allocated: `docs/observability.md` has the
//! measured overhead). Spans go to a batch processor on its own thread and
//! metrics to a periodic reader on another; each sends with the exporter of
//! its signal (`exporters.rs`: a blocking HTTP client, or a gRPC channel on a
//! one-thread runtime of its own); nothing on the request path waits for the
//! collector.
//!
//! Configuration is the SDK's standard environment (`OTEL_EXPORTER_OTLP_*`,
//! `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER`,
//! `OTEL_BSP_*`, `OTEL_METRIC_EXPORT_INTERVAL`), with the protocol and TLS
//! variables read here (`exporters.rs`, `tls.rs`); `--otlp-endpoint` is a
//! shorthand for `OTEL_EXPORTER_OTLP_ENDPOINT`. Export is on when either names
//! an endpoint, unless `OTEL_SDK_DISABLED=true`.

pub mod exporters;
mod http_client;
pub mod metrics;
pub mod request_span;
pub mod tls;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::Level;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::registry::LookupSpan;

pub use crate::trace_context::SPAN_TARGET;
use exporters::{METRICS, Plan, TRACES, Wire};
pub use request_span::{request_span, traced};

/// The service name when neither `OTEL_SERVICE_NAME` nor
/// `OTEL_RESOURCE_ATTRIBUTES` gives one.
const SERVICE_NAME: &str = "wharf";

/// Why export could not start; the server does not start either.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    #[error("{variable}={value}: not an OTLP protocol (grpc, http/protobuf or http/json)")]
    Protocol {
        variable: &'static str,
        value: String,
    },
    #[error("{variable}={value}: not a compression this build sends (gzip or none)")]
    Compression {
        variable: &'static str,
        value: String,
    },
    #[error("--otlp-endpoint {0}: not an http:// or https:// URL")]
    Endpoint(String),
    #[error("{variable}={path}: {reason}")]
    TlsFile {
        variable: &'static str,
        path: String,
        reason: String,
    },
    #[error("{set} is set but {missing} is not: a client certificate needs its key")]
    ClientKeyPair {
        set: &'static str,
        missing: &'static str,
    },
    #[error("cannot build the OTLP HTTP client: {0}")]
    HttpClient(reqwest::Error),
    #[error("cannot start the thread of the OTLP gRPC exporter: {0}")]
    Runtime(std::io::Error),
    #[error("cannot set up the OTLP exporter: {0}")]
    Exporter(#[from] opentelemetry_otlp::ExporterBuildError),
}

/// The running exporters; [`Telemetry::shutdown`] flushes them.
pub struct Telemetry {
    tracer_provider: SdkTracerProvider,
    meter_provider: SdkMeterProvider,
    /// The runtime of the gRPC channels, when a signal goes over gRPC.
    grpc: Option<tokio::runtime::Runtime>,
}

impl Telemetry {
    /// Starts export if `endpoint` (`--otlp-endpoint`) or the environment
    /// names an endpoint; `None` when export is off.
    pub fn start(endpoint: Option<&str>) -> Result<Option<Self>, TelemetryError> {
        Self::start_with(endpoint, |name| std::env::var(name).ok())
    }

    fn start_with(
        endpoint: Option<&str>,
        getenv: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>, TelemetryError> {
        let set = |name: &str| getenv(name).filter(|value| !value.trim().is_empty());
        if set("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
            return Ok(None);
        }
        let from_env = [
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
        ]
        .iter()
        .any(|name| set(name).is_some());
        if endpoint.is_none() && !from_env {
            return Ok(None);
        }
        let base = match endpoint {
            Some(url) if !url.starts_with("http://") && !url.starts_with("https://") => {
                return Err(TelemetryError::Endpoint(url.to_string()));
            }
            Some(url) => Some(url.trim_end_matches('/')),
            None => None,
        };
        let traces = Plan::read(&TRACES, base, &getenv)?;
        let metrics = Plan::read(&METRICS, base, &getenv)?;
        let grpc = [&traces, &metrics]
            .iter()
            .any(|plan| plan.wire == Wire::Grpc)
            .then(exporters::grpc_runtime)
            .transpose()?;

        let resource = resource(&getenv);
        let tracer_provider = SdkTracerProvider::builder()
            .with_batch_exporter(traces.span_exporter(grpc.as_ref())?)
            .with_resource(resource.clone())
            .build();
        let meter_provider = SdkMeterProvider::builder()
            .with_reader(PeriodicReader::builder(metrics.metric_exporter(grpc.as_ref())?).build())
            .with_resource(resource)
            .build();
        Ok(Some(Self {
            tracer_provider,
            meter_provider,
            grpc,
        }))
    }

    /// The `tracing` layer that turns [`SPAN_TARGET`] spans into OTLP spans.
    pub fn layer<S>(&self) -> impl Layer<S>
    where
        S: tracing::Subscriber + for<'span> LookupSpan<'span>,
    {
        let tracer = self.tracer_provider.tracer("wharf");
        tracing_opentelemetry::layer()
            .with_tracer(tracer)
            .with_filter(Targets::new().with_target(SPAN_TARGET, Level::TRACE))
    }

    /// Exports `metrics` (the figures of `/metrics`) over OTLP too.
    pub fn export_metrics(&self, metrics: &std::sync::Arc<crate::metrics::Metrics>) {
        let meter = opentelemetry::metrics::MeterProvider::meter(&self.meter_provider, "wharf");
        metrics::export(&meter, metrics);
    }

    /// Sends what is buffered and stops the exporters (at exit).
    pub fn shutdown(self) {
        if let Err(error) = self.tracer_provider.shutdown() {
            tracing::warn!("flushing the OTLP spans at exit failed: {error}");
        }
        if let Err(error) = self.meter_provider.shutdown() {
            tracing::warn!("flushing the OTLP metrics at exit failed: {error}");
        }
        if let Some(grpc) = self.grpc {
            grpc.shutdown_background();
        }
    }
}

/// The SDK's resource (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`), named
/// `wharf` unless those name the service.
fn resource(getenv: &impl Fn(&str) -> Option<String>) -> Resource {
    let named = getenv("OTEL_SERVICE_NAME").is_some_and(|name| !name.is_empty())
        || getenv("OTEL_RESOURCE_ATTRIBUTES")
            .is_some_and(|attributes| attributes.contains("service.name="));
    let builder = Resource::builder();
    if named {
        builder.build()
    } else {
        builder.with_service_name(SERVICE_NAME).build()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn start(flag: Option<&str>, env: &[(&str, &str)]) -> Result<Option<Telemetry>, String> {
        let env: HashMap<String, String> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Telemetry::start_with(flag, |name| env.get(name).cloned()).map_err(|e| e.to_string())
    }

    #[test]
    fn export_is_off_without_an_endpoint_or_when_disabled() {
        assert!(start(None, &[]).unwrap().is_none());
        assert!(
            start(None, &[("OTEL_EXPORTER_OTLP_ENDPOINT", " ")])
                .unwrap()
                .is_none()
        );
        assert!(
            start(
                Some("http://127.0.0.1:4318"),
                &[("OTEL_SDK_DISABLED", "true")]
            )
            .unwrap()
            .is_none()
        );
    }

    #[test]
    fn grpc_and_http_protobuf_are_exported_per_signal() {
        for env in [
            vec![("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")],
            vec![("OTEL_EXPORTER_OTLP_PROTOCOL", " http/protobuf ")],
            vec![
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
                ("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/protobuf"),
            ],
        ] {
            let telemetry = start(Some("https://127.0.0.1:4317"), &env)
                .unwrap()
                .unwrap();
            let expect_grpc = env.iter().any(|(_, v)| *v == "grpc");
            assert_eq!(telemetry.grpc.is_some(), expect_grpc, "{env:?}");
            telemetry.shutdown();
        }
    }

    #[test]
    fn http_json_is_exported_and_unknown_protocols_are_refused() {
        let telemetry = start(
            None,
            &[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
                ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json"),
            ],
        )
        .unwrap()
        .unwrap();
        assert!(telemetry.grpc.is_none());
        telemetry.shutdown();
        assert_eq!(
            start(
                Some("http://127.0.0.1:4318"),
                &[
                    ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
                    ("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "thrift")
                ]
            )
            .err()
            .unwrap(),
            "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL=thrift: not an OTLP protocol (grpc, http/protobuf or http/json)"
        );
    }

    #[test]
    fn gzip_is_sent_and_other_compressions_are_refused() {
        for value in ["gzip", "GZIP", "none"] {
            let telemetry = start(
                Some("http://127.0.0.1:4318"),
                &[("OTEL_EXPORTER_OTLP_COMPRESSION", value)],
            )
            .unwrap()
            .unwrap();
            telemetry.shutdown();
        }
        assert_eq!(
            start(
                Some("http://127.0.0.1:4318"),
                &[
                    ("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip"),
                    ("OTEL_EXPORTER_OTLP_METRICS_COMPRESSION", "zstd")
                ]
            )
            .err()
            .unwrap(),
            "OTEL_EXPORTER_OTLP_METRICS_COMPRESSION=zstd: not a compression this build sends (gzip or none)"
        );
    }

    #[test]
    fn the_endpoint_flag_must_be_a_url() {
        assert_eq!(
            start(Some("127.0.0.1:4318"), &[]).err().unwrap(),
            "--otlp-endpoint 127.0.0.1:4318: not an http:// or https:// URL"
        );
    }
}
