//! OTLP export over each wire Wharf speaks, to a real receiver on loopback:
//! gRPC (plain, and TLS with a private CA and a client certificate),
//! http/json, and http/protobuf over TLS with a private CA, each signal on
//! its own protocol if asked; what a bad TLS setting does at start, and an export that cannot
//! verify the collector.

use serde_json::json;

use crate::harness::{MODERN, Wharf, first_text, plugin_dir, result_of};
use crate::otlp_receiver::{Receiver, attribute, hex};
use crate::otlp_tls::TestCa;
use crate::telemetry::{FAST_EXPORT, PARENT_ID, SERVER, TRACE_ID, named, span, traced_call};

const GRPC_TRACES: &str = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";

#[test]
fn a_grpc_collector_receives_the_call_in_the_clients_trace() {
    let receiver = Receiver::start_grpc(None);
    let plugins = plugin_dir(&["echo"]);
    let mut env = FAST_EXPORT.to_vec();
    env.push(("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"));
    let endpoint = receiver.url();
    let mut wharf = Wharf::start_in_env(plugins.path(), &["--otlp-endpoint", &endpoint], &env);
    let result = traced_call(&mut wharf, 1, "echo_echo", json!({"text": "hi"}));
    assert_eq!(first_text(&result), "hi");

    // The server span: in the client's trace, under its span, attributed.
    let server = span(&receiver, "tools/call echo_echo");
    assert_eq!(hex(&server.trace_id), TRACE_ID);
    assert_eq!(hex(&server.parent_span_id), PARENT_ID);
    assert_eq!(server.kind, SERVER);
    for (key, value) in [
        ("mcp.method.name", "tools/call"),
        ("gen_ai.tool.name", "echo_echo"),
        ("gen_ai.operation.name", "execute_tool"),
        ("jsonrpc.request.id", "1"),
        ("mcp.protocol.version", MODERN),
        ("network.transport", "pipe"),
        ("wharf.plugin.name", "echo"),
    ] {
        assert_eq!(attribute(&server, key).as_deref(), Some(value), "{key}");
    }
    // The guest's execution, a child of it.
    let spans = receiver.wait_for_spans(|spans| {
        named(spans, "guest call")
            .iter()
            .any(|s| s.parent_span_id == server.span_id)
    });
    let guest: Vec<_> = named(&spans, "guest call")
        .into_iter()
        .filter(|s| s.parent_span_id == server.span_id)
        .collect();
    assert_eq!(guest.len(), 1, "{spans:#?}");
    assert_eq!(hex(&guest[0].trace_id), TRACE_ID);

    // It came as a gRPC call.
    let export = receiver
        .requests()
        .into_iter()
        .find(|r| r.path == GRPC_TRACES)
        .unwrap();
    assert_eq!(export.header("content-type"), Some("application/grpc"));

    // And the metrics.
    let names = receiver.wait_for_metric("mcp.server.operation.duration");
    for name in [
        "mcp.server.operation.duration",
        "wharf.tool.calls",
        "wharf.calls.in_flight",
        "wharf.plugins.loaded",
    ] {
        assert!(names.iter().any(|n| n == name), "{name}: {names:?}");
    }
}

#[test]
fn an_http_json_collector_receives_the_otlp_json_mapping() {
    let receiver = Receiver::start();
    let plugins = plugin_dir(&["echo"]);
    let mut env = FAST_EXPORT.to_vec();
    env.push(("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"));
    let endpoint = receiver.url();
    let mut wharf = Wharf::start_in_env(plugins.path(), &["--otlp-endpoint", &endpoint], &env);
    traced_call(&mut wharf, 1, "echo_echo", json!({"text": "json"}));
    let server = span(&receiver, "tools/call echo_echo");
    assert_eq!(hex(&server.trace_id), TRACE_ID);
    assert_eq!(hex(&server.parent_span_id), PARENT_ID);
    assert_eq!(
        attribute(&server, "gen_ai.tool.name").as_deref(),
        Some("echo_echo")
    );
    let export = receiver
        .requests()
        .into_iter()
        .find(|r| r.path == "/v1/traces")
        .unwrap();
    assert_eq!(export.header("content-type"), Some("application/json"));
    // OTLP/JSON writes ids as hex strings, not base64.
    let body: serde_json::Value = serde_json::from_slice(&export.body).unwrap();
    let spans = &body["resourceSpans"][0]["scopeSpans"][0]["spans"];
    assert!(
        spans
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["traceId"] == TRACE_ID),
        "{body}"
    );
    let names = receiver.wait_for_metric("wharf.tool.calls");
    assert!(names.iter().any(|n| n == "wharf.tool.calls"), "{names:?}");
}

#[test]
fn grpc_over_tls_trusts_a_private_ca_and_presents_a_client_certificate() {
    let ca = TestCa::new();
    let receiver = Receiver::start_grpc(Some(ca.server(&[b"h2"], true)));
    let (client_cert, client_key) = ca.client_files();
    let ca_file = ca.ca_file();
    let plugins = plugin_dir(&["echo"]);
    let mut env = FAST_EXPORT.to_vec();
    let endpoint = receiver.url();
    assert!(endpoint.starts_with("https://127.0.0.1:"), "{endpoint}");
    env.extend([
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip"),
        ("OTEL_EXPORTER_OTLP_CERTIFICATE", &ca_file),
        ("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", &client_cert),
        ("OTEL_EXPORTER_OTLP_CLIENT_KEY", &client_key),
    ]);
    let mut wharf = Wharf::start_in_env(plugins.path(), &[], &env);
    traced_call(&mut wharf, 1, "echo_echo", json!({"text": "tls"}));
    let server = span(&receiver, "tools/call echo_echo");
    assert_eq!(hex(&server.trace_id), TRACE_ID);
    let names = receiver.wait_for_metric("wharf.tool.calls");
    assert!(names.iter().any(|n| n == "wharf.tool.calls"), "{names:?}");
    // Gzipped, as OTEL_EXPORTER_OTLP_COMPRESSION asked.
    assert!(receiver.requests().iter().all(|r| r.gzipped()));
}

#[test]
fn each_signal_takes_its_own_protocol_and_https_trusts_a_private_ca() {
    let ca = TestCa::new();
    let traces = Receiver::start_https(ca.server(&[b"http/1.1"], false));
    let metrics = Receiver::start_grpc(None);
    let ca_file = ca.ca_file();
    let traces_url = format!("{}/v1/traces", traces.url());
    let metrics_url = metrics.url();
    let plugins = plugin_dir(&["echo"]);
    let mut env = FAST_EXPORT.to_vec();
    env.extend([
        ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", traces_url.as_str()),
        ("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", &ca_file),
        ("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "gzip"),
        ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", &metrics_url),
        ("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "grpc"),
    ]);
    let mut wharf = Wharf::start_in_env(plugins.path(), &[], &env);
    traced_call(&mut wharf, 1, "echo_echo", json!({"text": "mixed"}));
    let server = span(&traces, "tools/call echo_echo");
    assert_eq!(hex(&server.parent_span_id), PARENT_ID);
    let names = metrics.wait_for_metric("wharf.tool.calls");
    assert!(names.iter().any(|n| n == "wharf.tool.calls"), "{names:?}");
    // Each signal went where it was sent, and nowhere else; traces gzipped,
    // metrics not, as asked.
    assert!(traces.metrics().is_empty());
    assert!(metrics.spans().is_empty());
    assert!(traces.requests().iter().all(|r| r.gzipped()));
    assert!(metrics.requests().iter().all(|r| !r.gzipped()));
}

#[test]
fn a_collector_the_ca_does_not_vouch_for_gets_nothing_and_calls_go_on() {
    let ca = TestCa::new();
    let receiver = Receiver::start_https(ca.server(&[b"http/1.1"], false));
    let plugins = plugin_dir(&["echo"]);
    let endpoint = receiver.url();
    let mut wharf = Wharf::start_in_env(
        plugins.path(),
        &["--otlp-endpoint", &endpoint],
        &FAST_EXPORT,
    );
    let result = traced_call(&mut wharf, 1, "echo_echo", json!({"text": "still"}));
    assert_eq!(first_text(&result), "still");
    // The cause is logged, once.
    wharf.wait_for_log(&format!(
        "OTLP export to {endpoint}/v1/traces failed: error sending request"
    ));
    wharf.wait_for_log("invalid peer certificate: UnknownIssuer");
    assert!(receiver.requests().is_empty());
    let result = wharf.modern(
        2,
        "tools/call",
        json!({"name": "echo_echo", "arguments": {"text": "on"}}),
    );
    assert_eq!(first_text(result_of(&result)), "on");
}

#[test]
fn a_bad_tls_file_stops_the_server_at_start() {
    let plugins = plugin_dir(&["echo"]);
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.pem");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_wharf"))
        .args(["serve", "--plugins"])
        .arg(plugins.path())
        .args(["--otlp-endpoint", "https://127.0.0.1:4317"])
        .env("OTEL_EXPORTER_OTLP_CERTIFICATE", &missing)
        .env("WHARF_CACHE_DIR", crate::harness::cache_dir())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    let expected = format!(
        "OTEL_EXPORTER_OTLP_CERTIFICATE={}: cannot read it (No such file or directory (os error 2))",
        missing.display()
    );
    assert!(stderr.contains(&expected), "{stderr}");
}

#[test]
fn what_the_sdk_says_about_its_environment_at_start_is_logged() {
    let receiver = Receiver::start();
    let plugins = plugin_dir(&["echo"]);
    let endpoint = receiver.url();
    let wharf = Wharf::start_in_env(
        plugins.path(),
        &["--otlp-endpoint", &endpoint],
        &[("OTEL_TRACES_SAMPLER", "traceidratio")],
    );
    wharf.wait_for_log(
        "OTEL_TRACES_SAMPLER is set to 'traceidratio' but OTEL_TRACES_SAMPLER_ARG environment variable is missing or invalid",
    );
}
