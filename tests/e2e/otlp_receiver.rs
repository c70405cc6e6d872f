//! A tiny OTLP receiver on loopback for the telemetry tests, over
//! http/protobuf or http/json (plain or TLS) or gRPC (`otlp_grpc.rs`): it
//! accepts every
//! export, answers success, and keeps each request's path, headers and
//! message. Spans and metrics are decoded with the official protobuf
//! definitions (the `opentelemetry-proto` crate's types, and their JSON
//! mapping for http/json), so what is checked
//! is what any OTLP collector would receive. No collector build is published
//! in the registries reachable here.
//!
//! The HTTP side accepts every POST (keep-alive, `Content-Length` bodies)
//! and answers 200 with an empty message in the request's encoding.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;

use crate::harness::PATIENCE;

/// The paths of trace and metric exports, over http/protobuf and gRPC.
const TRACES: [&str; 2] = [
    "/v1/traces",
    "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
];
const METRICS: [&str; 2] = [
    "/v1/metrics",
    "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export",
];

/// One request received (for gRPC, `body` is the message, unframed); `body`
/// is as sent, compressed if it was.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the body is gzipped (`Content-Encoding`, or for gRPC
    /// `grpc-encoding`: a message compressed with it).
    pub fn gzipped(&self) -> bool {
        self.header("content-encoding") == Some("gzip")
            || self.header("grpc-encoding") == Some("gzip")
    }

    /// The message, from protobuf or (http/json) from its JSON mapping.
    fn decode<T: Message + Default + serde::de::DeserializeOwned>(&self) -> T {
        let mut body = self.body.clone();
        if self.gzipped() {
            body.clear();
            flate2::read::GzDecoder::new(self.body.as_slice())
                .read_to_end(&mut body)
                .unwrap();
        }
        if self.header("content-type") == Some("application/json") {
            serde_json::from_slice(&body).unwrap()
        } else {
            T::decode(body.as_slice()).unwrap()
        }
    }
}

/// What the receiver keeps; shared with its connection threads or tasks.
pub type Store = Arc<Mutex<Vec<Received>>>;

/// The receiver; it runs until the test process ends.
#[derive(Clone)]
pub struct Receiver {
    pub addr: SocketAddr,
    scheme: &'static str,
    received: Store,
}

impl Receiver {
    /// OTLP/HTTP, plain.
    pub fn start() -> Self {
        Self::http(None)
    }

    /// OTLP/HTTP over TLS with this server configuration.
    pub fn start_https(tls: Arc<rustls::ServerConfig>) -> Self {
        Self::http(Some(tls))
    }

    /// OTLP/gRPC, plain (HTTP/2 with prior knowledge) or over TLS.
    pub fn start_grpc(tls: Option<Arc<rustls::ServerConfig>>) -> Self {
        let received = Store::default();
        let scheme = if tls.is_some() { "https" } else { "http" };
        let addr = crate::otlp_grpc::serve(tls, received.clone());
        Self {
            addr,
            scheme,
            received,
        }
    }

    fn http(tls: Option<Arc<rustls::ServerConfig>>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let received = Store::default();
        let store = received.clone();
        let scheme = if tls.is_some() { "https" } else { "http" };
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let store = store.clone();
                let tls = tls.clone();
                std::thread::spawn(move || match tls {
                    None => serve(stream, &store),
                    Some(tls) => {
                        let Ok(connection) = rustls::ServerConnection::new(tls) else {
                            return;
                        };
                        serve(rustls::StreamOwned::new(connection, stream), &store)
                    }
                });
            }
        });
        Self {
            addr,
            scheme,
            received,
        }
    }

    /// `http://ADDR` (`https://` over TLS), for `--otlp-endpoint`.
    pub fn url(&self) -> String {
        format!("{}://{}", self.scheme, self.addr)
    }

    pub fn requests(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// Every span received so far.
    pub fn spans(&self) -> Vec<Span> {
        self.requests()
            .iter()
            .filter(|r| TRACES.contains(&r.path.as_str()))
            .flat_map(|r| {
                let request: ExportTraceServiceRequest = r.decode();
                request
                    .resource_spans
                    .into_iter()
                    .flat_map(|rs| rs.scope_spans)
                    .flat_map(|ss| ss.spans)
            })
            .collect()
    }

    /// Every metric export received so far.
    pub fn metrics(&self) -> Vec<ExportMetricsServiceRequest> {
        self.requests()
            .iter()
            .filter(|r| METRICS.contains(&r.path.as_str()))
            .map(|r| r.decode::<ExportMetricsServiceRequest>())
            .collect()
    }

    /// Waits until `done` holds of the spans received.
    pub fn wait_for_spans(&self, done: impl Fn(&[Span]) -> bool) -> Vec<Span> {
        let started = Instant::now();
        loop {
            let spans = self.spans();
            if done(&spans) || started.elapsed() > PATIENCE {
                return spans;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The names of every metric received so far, once `name` is among them.
    pub fn wait_for_metric(&self, name: &str) -> Vec<String> {
        let started = Instant::now();
        loop {
            let names: Vec<String> = self
                .metrics()
                .iter()
                .flat_map(|m| &m.resource_metrics)
                .flat_map(|rm| &rm.scope_metrics)
                .flat_map(|sm| &sm.metrics)
                .map(|m| m.name.clone())
                .collect();
            if names.iter().any(|n| n == name) || started.elapsed() > PATIENCE {
                return names;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

fn serve(stream: impl Read + Write, store: &Mutex<Vec<Received>>) {
    let mut reader = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
        let mut headers = Vec::new();
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
            }
        }
        let length = headers
            .iter()
            .find(|(n, _)| n == "content-length")
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let json = headers
            .iter()
            .any(|(n, v)| n == "content-type" && v == "application/json");
        store.lock().unwrap().push(Received {
            path,
            headers,
            body,
        });
        let answer: &[u8] = if json {
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
        } else {
            b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n"
        };
        let writer = reader.get_mut();
        if writer
            .write_all(answer)
            .and_then(|()| writer.flush())
            .is_err()
        {
            return;
        }
    }
}

/// Lower-case hex of an id.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A span's attribute as a string (string, int or bool values).
pub fn attribute(span: &Span, key: &str) -> Option<String> {
    value_of(&span.attributes, key)
}

pub fn value_of(attributes: &[KeyValue], key: &str) -> Option<String> {
    let value = attributes.iter().find(|kv| kv.key == key)?.value.as_ref()?;
    as_string(value)
}

fn as_string(value: &AnyValue) -> Option<String> {
    match value.value.as_ref()? {
        any_value::Value::StringValue(s) => Some(s.clone()),
        any_value::Value::IntValue(i) => Some(i.to_string()),
        any_value::Value::BoolValue(b) => Some(b.to_string()),
        any_value::Value::DoubleValue(d) => Some(d.to_string()),
        _ => None,
    }
}
