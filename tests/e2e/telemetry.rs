//! OpenTelemetry export (`--otlp-endpoint`): the spans and metrics a real
//! OTLP/HTTP receiver on loopback decodes, over stdio and HTTP, parented by
//! the client's trace; the child spans of a tool call, plugin logs as span
//! events, the plugin's outbound request carrying the trace, and the audit
//! line of the same call carrying the same trace id.

use std::path::Path;

use opentelemetry_proto::tonic::trace::v1::Span;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::harness::{MODERN, Wharf, first_text, meta, modern, plugin_dir, plugin_file, result_of};
use crate::http_client::post;
use crate::otlp_receiver::{Receiver, attribute, hex, value_of};

pub const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
pub const PARENT_ID: &str = "00f067aa0ba902b7";
const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const HEADER_TRACE_ID: &str = "0af7651916cd43dd8448eb211c80319c";
const HEADER_PARENT_ID: &str = "b7ad6b7169203331";
const HEADER_TRACEPARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

/// OTLP's `SPAN_KIND_SERVER`.
pub const SERVER: i32 = 2;

/// Export quickly, so the tests need not wait for the SDK's 5 s batches.
pub const FAST_EXPORT: [(&str, &str); 2] = [
    ("OTEL_BSP_SCHEDULE_DELAY", "50"),
    ("OTEL_METRIC_EXPORT_INTERVAL", "200"),
];

fn digest(plugin: &str) -> String {
    hex(&Sha256::digest(std::fs::read(plugin_file(plugin)).unwrap()))
}

pub fn named<'a>(spans: &'a [Span], name: &str) -> Vec<&'a Span> {
    spans.iter().filter(|s| s.name == name).collect()
}

/// The one span named `name`, once received.
pub fn span(receiver: &Receiver, name: &str) -> Span {
    let spans = receiver.wait_for_spans(|spans| !named(spans, name).is_empty());
    let found = named(&spans, name);
    assert_eq!(found.len(), 1, "{name}: {spans:#?}");
    found[0].clone()
}

/// A call with `_meta.traceparent`.
pub fn traced_call(wharf: &mut Wharf, id: i64, tool: &str, arguments: Value) -> Value {
    let mut params = modern(json!({"name": tool, "arguments": arguments}));
    params["_meta"]["traceparent"] = json!(TRACEPARENT);
    let response = wharf.request(json!(id), "tools/call", params);
    result_of(&response).clone()
}

fn audit_trace_ids(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|line| line["event"] == "call")
        .map(|line| line["trace_id"].clone())
        .collect()
}

#[test]
fn a_stdio_call_continues_the_clients_trace_with_its_phases() {
    let receiver = Receiver::start();
    let plugins = plugin_dir(&["echo", "misbehave"]);
    std::fs::write(
        plugins.path().join("misbehave.toml"),
        format!("[http]\nallow = [\"{}\"]\n", receiver.addr),
    )
    .unwrap();
    let logs = tempfile::tempdir().unwrap();
    let audit = logs.path().join("audit.log");
    let mut wharf = Wharf::start_in_env(
        plugins.path(),
        &[
            "--otlp-endpoint",
            &receiver.url(),
            "--audit-log",
            audit.to_str().unwrap(),
        ],
        &FAST_EXPORT,
    );
    let result = traced_call(&mut wharf, 1, "echo_echo", json!({"text": "hi"}));
    assert_eq!(first_text(&result), "hi");

    // The server span: in the client's trace, under its span.
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
        ("wharf.plugin.digest", &digest("echo")),
    ] {
        assert_eq!(attribute(&server, key).as_deref(), Some(value), "{key}");
    }
    assert_eq!(attribute(&server, "error.type"), None);
    assert_eq!(attribute(&server, "mcp.session.id"), None);

    // Its phases, each a child of it.
    let spans = receiver.wait_for_spans(|spans| spans.len() >= 5);
    for phase in [
        "validate arguments",
        "instantiate",
        "guest call",
        "convert output",
    ] {
        let children: Vec<_> = named(&spans, phase)
            .into_iter()
            .filter(|s| s.parent_span_id == server.span_id)
            .collect();
        assert_eq!(children.len(), 1, "{phase}: {spans:#?}");
        assert_eq!(hex(&children[0].trace_id), TRACE_ID);
    }
    let guest = named(&spans, "guest call")[0];
    assert_eq!(
        attribute(guest, "wharf.plugin.name").as_deref(),
        Some("echo")
    );

    // Plugin log lines are events of the call's span.
    traced_call(&mut wharf, 2, "misbehave_log", json!({}));
    let logged = span(&receiver, "tools/call misbehave_log");
    let events: Vec<&str> = logged.events.iter().map(|e| e.name.as_str()).collect();
    assert!(events.contains(&"misbehave logs at info"), "{events:?}");
    let info = logged
        .events
        .iter()
        .find(|e| e.name == "misbehave logs at info")
        .unwrap();
    assert_eq!(
        value_of(&info.attributes, "log.severity").as_deref(),
        Some("info")
    );

    // The plugin's outbound request carries the call's trace.
    let url = format!("http://{}/fetched", receiver.addr);
    let fetched = traced_call(&mut wharf, 3, "misbehave_fetch", json!({"url": url}));
    assert_eq!(first_text(&fetched), "200 ", "{fetched}");
    let fetch = span(&receiver, "tools/call misbehave_fetch");
    let outbound = receiver
        .requests()
        .into_iter()
        .find(|r| r.path == "/fetched")
        .unwrap();
    assert_eq!(
        outbound.header("traceparent"),
        Some(format!("00-{TRACE_ID}-{}-01", hex(&fetch.span_id)).as_str())
    );

    // Without a traceparent: a new root, whose id the audit line carries.
    let result = wharf.modern(
        4,
        "tools/call",
        json!({"name": "echo_echo", "arguments": {"text": "x"}}),
    );
    assert_eq!(first_text(result_of(&result)), "x");
    let spans = receiver.wait_for_spans(|spans| named(spans, "tools/call echo_echo").len() >= 2);
    let root = named(&spans, "tools/call echo_echo")
        .into_iter()
        .find(|s| hex(&s.trace_id) != TRACE_ID)
        .unwrap();
    assert!(root.parent_span_id.is_empty());

    // A JSON-RPC error is the span's error.type.
    let unknown = wharf.modern(5, "tools/call", json!({"name": "nope", "arguments": {}}));
    assert_eq!(unknown["error"]["code"], -32602);
    let failed = span(&receiver, "tools/call nope");
    assert_eq!(attribute(&failed, "error.type").as_deref(), Some("-32602"));

    assert_eq!(
        audit_trace_ids(&audit)[..4],
        [
            json!(TRACE_ID),
            json!(TRACE_ID),
            json!(TRACE_ID),
            json!(hex(&root.trace_id))
        ]
    );

    // The metrics of /metrics, pushed over OTLP.
    let names = receiver.wait_for_metric("mcp.server.operation.duration");
    for name in [
        "mcp.server.operation.duration",
        "wharf.tool.calls",
        "wharf.tool.errors",
        "wharf.calls.in_flight",
        "wharf.plugins.loaded",
        "wharf.reloads",
    ] {
        assert!(names.iter().any(|n| n == name), "{name}: {names:?}");
    }
}

#[test]
fn http_requests_are_parented_by_meta_then_by_the_header() {
    let receiver = Receiver::start();
    let plugins = plugin_dir(&["echo"]);
    let mut env = FAST_EXPORT.to_vec();
    let endpoint = receiver.url();
    env.push(("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint));
    env.push(("OTEL_SERVICE_NAME", "wharf-under-test"));
    let wharf = Wharf::start_in_env(plugins.path(), &["--http", "127.0.0.1:0"], &env);
    let addr = wharf.http_addr();
    let body = |id: i64, traceparent: Option<&str>| {
        let mut params = json!({"name": "echo_echo", "arguments": {"text": "h"}, "_meta": meta()});
        if let Some(traceparent) = traceparent {
            params["_meta"]["traceparent"] = json!(traceparent);
        }
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
    };
    let headers = [
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "echo_echo"),
        ("traceparent", HEADER_TRACEPARENT),
    ];
    assert_eq!(post(addr, &headers, &body(1, None)).status, 200);
    assert_eq!(
        post(addr, &headers, &body(2, Some(TRACEPARENT))).status,
        200
    );

    // A legacy session's requests carry its id.
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "legacy", "version": "1"}}});
    let response = post(addr, &[], &init);
    let session = response.header("mcp-session-id").unwrap().to_string();
    response.events();
    let legacy = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(addr, &legacy, &initialized).status, 202);
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
    let events = post(addr, &legacy, &list).events();
    assert!(events.iter().any(|e| e["id"] == 3), "{events:?}");

    let spans = receiver.wait_for_spans(|spans| {
        named(spans, "tools/call echo_echo").len() >= 2
            && !named(spans, "tools/list").is_empty()
            && !named(spans, "initialize").is_empty()
    });
    let calls = named(&spans, "tools/call echo_echo");
    let by_id = |id: &str| {
        *calls
            .iter()
            .find(|s| attribute(s, "jsonrpc.request.id").as_deref() == Some(id))
            .unwrap()
    };
    let (first, second) = (by_id("1"), by_id("2"));
    assert_eq!(hex(&first.trace_id), HEADER_TRACE_ID);
    assert_eq!(hex(&first.parent_span_id), HEADER_PARENT_ID);
    assert_eq!(hex(&second.trace_id), TRACE_ID);
    assert_eq!(hex(&second.parent_span_id), PARENT_ID);
    assert_eq!(
        attribute(first, "network.transport").as_deref(),
        Some("tcp")
    );
    // The session's initialize has its span too, with the version agreed.
    let initialize = named(&spans, "initialize");
    assert_eq!(initialize.len(), 1, "{spans:#?}");
    assert_eq!(
        attribute(initialize[0], "mcp.protocol.version").as_deref(),
        Some("2025-06-18")
    );
    assert_eq!(
        attribute(initialize[0], "network.transport").as_deref(),
        Some("tcp")
    );
    let list = named(&spans, "tools/list")[0];
    assert_eq!(attribute(list, "mcp.session.id"), Some(session));
    assert_eq!(
        attribute(list, "mcp.protocol.version").as_deref(),
        Some("2025-06-18")
    );
    assert!(list.parent_span_id.is_empty());

    // The resource names the service as OTEL_SERVICE_NAME says.
    let traces = receiver
        .requests()
        .into_iter()
        .find(|r| r.path == "/v1/traces")
        .unwrap();
    use prost::Message;
    let request =
        opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest::decode(
            traces.body.as_slice(),
        )
        .unwrap();
    let resource = request.resource_spans[0].resource.as_ref().unwrap();
    assert_eq!(
        value_of(&resource.attributes, "service.name").as_deref(),
        Some("wharf-under-test")
    );
}

#[test]
fn every_request_of_a_legacy_stdio_session_gets_its_span() {
    let receiver = Receiver::start();
    let plugins = plugin_dir(&["guide"]);
    let endpoint = receiver.url();
    let mut wharf = Wharf::start_in_env(
        plugins.path(),
        &["--otlp-endpoint", &endpoint],
        &FAST_EXPORT,
    );
    wharf.initialize("2025-11-25");
    let uri = json!({"uri": "guide+guide://readme"});
    for (id, method, params) in [
        (1, "ping", json!({})),
        (2, "logging/setLevel", json!({"level": "info"})),
        (3, "resources/subscribe", uri.clone()),
        (4, "resources/unsubscribe", uri.clone()),
    ] {
        let response = wharf.request(json!(id), method, params);
        assert_eq!(result_of(&response), &json!({}), "{method}");
    }
    let methods = [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
    ];
    let spans =
        receiver.wait_for_spans(|spans| methods.iter().all(|m| !named(spans, m).is_empty()));
    for (method, id) in methods.iter().zip(["init", "1", "2", "3", "4"]) {
        let found = named(&spans, method);
        assert_eq!(found.len(), 1, "{method}: {spans:#?}");
        let span = found[0];
        assert_eq!(span.kind, SERVER, "{method}");
        assert_eq!(attribute(span, "mcp.method.name").as_deref(), Some(*method));
        assert_eq!(attribute(span, "jsonrpc.request.id").as_deref(), Some(id));
        assert_eq!(
            attribute(span, "mcp.protocol.version").as_deref(),
            Some("2025-11-25"),
            "{method}"
        );
        assert_eq!(
            attribute(span, "network.transport").as_deref(),
            Some("pipe")
        );
    }
    for method in ["resources/subscribe", "resources/unsubscribe"] {
        assert_eq!(
            attribute(named(&spans, method)[0], "mcp.resource.uri").as_deref(),
            Some("guide+guide://readme")
        );
    }

    // A 2026-07-28 subscription's span lasts as long as its stream.
    let mut modern = Wharf::start_in_env(
        plugins.path(),
        &["--otlp-endpoint", &endpoint],
        &FAST_EXPORT,
    );
    modern.listen("sub");
    modern.notify("notifications/cancelled", json!({"requestId": "sub"}));
    let listen = span(&receiver, "subscriptions/listen");
    assert_eq!(
        attribute(&listen, "jsonrpc.request.id").as_deref(),
        Some("sub")
    );
    assert_eq!(
        attribute(&listen, "mcp.protocol.version").as_deref(),
        Some(MODERN)
    );
}

#[test]
fn an_unknown_otlp_protocol_stops_the_server_at_start() {
    let plugins = plugin_dir(&["echo"]);
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_wharf"))
        .args(["serve", "--plugins"])
        .arg(plugins.path())
        .args(["--otlp-endpoint", "http://127.0.0.1:4318"])
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "thrift")
        .env("WHARF_CACHE_DIR", crate::harness::cache_dir())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "OTEL_EXPORTER_OTLP_PROTOCOL=thrift: not an OTLP protocol (grpc, http/protobuf or http/json)"
        ),
        "{stderr}"
    );
}
