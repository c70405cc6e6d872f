//! A tiny OTLP/HTTP receiver on loopback for the telemetry tests: it accepts
//! every POST (keep-alive, `Content-Length` bodies), answers 200, and keeps
//! each request's path, headers and body. Spans and metrics are decoded with
//! the official protobuf definitions (the `opentelemetry-proto` crate's
//! types), so what is checked is what any OTLP collector would receive. No
//! collector build is published in the registries reachable here.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;

use crate::harness::PATIENCE;

/// One request received.
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
}

/// The receiver; it runs until the test process ends.
#[derive(Clone)]
pub struct Receiver {
    pub addr: SocketAddr,
    received: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let received = Arc::new(Mutex::new(Vec::new()));
        let store = received.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let store = store.clone();
                std::thread::spawn(move || serve(stream, &store));
            }
        });
        Self { addr, received }
    }

    /// `http://ADDR`, for `--otlp-endpoint`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn requests(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// Every span received so far.
    pub fn spans(&self) -> Vec<Span> {
        self.requests()
            .iter()
            .filter(|r| r.path == "/v1/traces")
            .flat_map(|r| {
                let request = ExportTraceServiceRequest::decode(r.body.as_slice()).unwrap();
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
            .filter(|r| r.path == "/v1/metrics")
            .map(|r| ExportMetricsServiceRequest::decode(r.body.as_slice()).unwrap())
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
}

fn serve(stream: TcpStream, store: &Mutex<Vec<Received>>) {
    let mut writer = stream.try_clone().unwrap();
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
        store.lock().unwrap().push(Received {
            path,
            headers,
            body,
        });
        let answer =
            b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n";
        if writer.write_all(answer).is_err() {
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
