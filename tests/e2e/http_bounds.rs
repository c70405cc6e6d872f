//! HTTP under abuse: each resource bound with its exact error (sessions,
//! streams, connections, header and idle time), and the legacy session rules
//! that requests naming a legacy revision in `_meta` used to skip.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::*;
use crate::http_client::{Response, post, send};

const LEGACY: &str = "2025-11-25";

/// Asserts a JSON-RPC refusal: HTTP status, id, code -32600 and message.
fn assert_refusal(response: Response, status: u16, id: Value, message: &str) {
    assert_eq!(response.status, status, "{:?}", response.headers);
    assert_eq!(response.content_type(), "application/json");
    let body = response.json();
    assert_eq!(body["id"], id, "{body}");
    assert_eq!(body["error"]["code"], -32600, "{body}");
    assert_eq!(body["error"]["message"], message, "{body}");
}

const SESSION_REQUIRED: &str = "Bad Request: a legacy request needs the Mcp-Session-Id of its \
     session; send initialize first";
const UNKNOWN_SESSION: &str = "Not Found: no such session (it ended, expired or never existed); \
     send initialize to start a new one";

fn initialize_body() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": LEGACY, "capabilities": {},
        "clientInfo": {"name": "bounds", "version": "1"}}})
}

/// A legacy session past its handshake; returns its id.
fn legacy_session(addr: SocketAddr) -> String {
    let response = post(addr, &[], &initialize_body());
    assert_eq!(response.status, 200);
    let session = response
        .header("mcp-session-id")
        .expect("a session")
        .to_string();
    drop(response.events());
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", LEGACY),
    ];
    assert_eq!(post(addr, &headers, &initialized).status, 202);
    session
}

/// A request whose `_meta` names the legacy revision, with the keys that made
/// rmcp serve it statelessly.
fn legacy_meta_request(id: i64, method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": LEGACY,
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[test]
fn an_initialize_past_max_sessions_is_refused_503_until_one_ends() {
    let (_wharf, addr) = serve_http(&["echo"], &["--max-sessions", "2"]);
    let first = legacy_session(addr);
    let _second = legacy_session(addr);
    let refused = post(addr, &[], &initialize_body());
    assert_eq!(refused.header("retry-after"), Some("30"));
    assert_refusal(
        refused,
        503,
        json!(0),
        "Service Unavailable: the server already holds its limit of 2 sessions \
         (--max-sessions); retry later, or end unused sessions with DELETE",
    );
    let headers = [
        ("Mcp-Session-Id", first.as_str()),
        ("MCP-Protocol-Version", LEGACY),
    ];
    assert_eq!(send(addr, "DELETE", "/mcp", &headers, b"").status, 200);
    legacy_session(addr);
}

#[test]
fn a_legacy_meta_needs_a_live_session() {
    let (_wharf, addr) = serve_http(&["echo"], &[]);
    let list = legacy_meta_request(3, "tools/list", json!({}));
    let version = [("MCP-Protocol-Version", LEGACY)];
    assert_refusal(post(addr, &version, &list), 400, json!(3), SESSION_REQUIRED);
    let nope = [("MCP-Protocol-Version", LEGACY), ("Mcp-Session-Id", "nope")];
    assert_refusal(post(addr, &nope, &list), 404, json!(3), UNKNOWN_SESSION);

    // With a live session it is served, in that session.
    let session = legacy_session(addr);
    let live = [
        ("MCP-Protocol-Version", LEGACY),
        ("Mcp-Session-Id", session.as_str()),
    ];
    let response = post(addr, &live, &list);
    assert_eq!(response.status, 200);
    let events = response.events();
    let answer = events.iter().find(|e| e["id"] == 3).expect("an answer");
    assert!(result_of(answer)["tools"].is_array(), "{answer}");
}

#[test]
fn set_level_without_a_session_is_refused() {
    let (_wharf, addr) = serve_http(&["echo"], &[]);
    let version = [("MCP-Protocol-Version", LEGACY)];
    let with_meta = legacy_meta_request(4, "logging/setLevel", json!({"level": "debug"}));
    assert_refusal(
        post(addr, &version, &with_meta),
        400,
        json!(4),
        SESSION_REQUIRED,
    );
    let plain = json!({"jsonrpc": "2.0", "id": 5, "method": "logging/setLevel",
        "params": {"level": "debug"}});
    assert_refusal(
        post(addr, &version, &plain),
        400,
        json!(5),
        SESSION_REQUIRED,
    );
}

#[test]
fn a_second_delete_of_a_session_is_404() {
    let (_wharf, addr) = serve_http(&["echo"], &[]);
    let session = legacy_session(addr);
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", LEGACY),
    ];
    assert_eq!(send(addr, "DELETE", "/mcp", &headers, b"").status, 200);
    let again = send(addr, "DELETE", "/mcp", &headers, b"");
    assert_refusal(again, 404, Value::Null, UNKNOWN_SESSION);
}

/// A 2026-07-28 `subscriptions/listen` request.
fn listen(addr: SocketAddr, id: i64) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
        "params": modern(json!({"notifications": {"toolsListChanged": true}}))});
    let headers = [
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "subscriptions/listen"),
    ];
    post(addr, &headers, &body)
}

#[test]
fn a_stream_past_max_streams_is_refused_503() {
    let (_wharf, addr) = serve_http(&["echo"], &["--max-streams", "1"]);
    let mut open = listen(addr, 1);
    assert_eq!(open.status, 200);
    assert!(open.next_event().is_some(), "no acknowledgement");
    let refused = listen(addr, 2);
    assert_eq!(refused.header("retry-after"), Some("5"));
    assert_refusal(
        refused,
        503,
        json!(2),
        "Service Unavailable: the server already has its limit of 1 open streams \
         (--max-streams); retry later, or close an unused stream",
    );
    // Once the client leaves, its place is free again.
    drop(open);
    let deadline = Instant::now() + PATIENCE;
    loop {
        let again = listen(addr, 3);
        if again.status == 200 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the stream's place was never freed"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// How long until the server closes `stream` (reads see its end), at most
/// `within`; `None` if it is still open then.
fn closed_within(stream: &mut TcpStream, within: Duration) -> Option<Duration> {
    let started = Instant::now();
    stream.set_read_timeout(Some(within)).unwrap();
    let mut buffer = [0; 4096];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => return Some(started.elapsed()),
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return None;
            }
            // Reset by the server: closed too.
            Err(_) => return Some(started.elapsed()),
        }
    }
}

#[test]
fn a_slowloris_head_is_closed_after_the_header_timeout() {
    let (_wharf, addr) = serve_http(&["echo"], &["--header-timeout-ms", "600"]);
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .write_all(format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\n").as_bytes())
        .unwrap();
    let started = Instant::now();
    // A header line every 200 ms, never the end of the head.
    let mut closed = false;
    for line in 0..50 {
        std::thread::sleep(Duration::from_millis(200));
        if stream
            .write_all(format!("X-Slow-{line}: a\r\n").as_bytes())
            .is_err()
        {
            closed = true;
            break;
        }
        if closed_within(&mut stream, Duration::from_millis(1)).is_some() {
            closed = true;
            break;
        }
    }
    assert!(closed, "the slowloris connection stayed open");
    let elapsed = started.elapsed();
    assert!(elapsed >= Duration::from_millis(500), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
}

#[test]
fn idle_connections_are_closed_new_or_kept_alive() {
    let (_wharf, addr) = serve_http(&["echo"], &["--header-timeout-ms", "500"]);
    // A connection that never sends a byte.
    let mut silent = TcpStream::connect(addr).unwrap();
    let after = closed_within(&mut silent, Duration::from_secs(10)).expect("still open");
    assert!(after >= Duration::from_millis(400), "{after:?}");

    // A kept-alive connection, idle after its answer.
    let mut kept = TcpStream::connect(addr).unwrap();
    kept.write_all(format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .unwrap();
    let mut head = [0; 12];
    kept.read_exact(&mut head).unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
    closed_within(&mut kept, Duration::from_secs(10)).expect("the idle connection stayed open");
}

#[test]
fn connections_past_max_connections_wait_until_one_closes() {
    let flags = ["--max-connections", "2", "--header-timeout-ms", "60000"];
    let (_wharf, addr) = serve_http(&["echo"], &flags);
    let first = TcpStream::connect(addr).unwrap();
    let _second = TcpStream::connect(addr).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let mut third = TcpStream::connect(addr).unwrap();
    third
        .write_all(
            format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
        .unwrap();
    third
        .set_read_timeout(Some(Duration::from_millis(1000)))
        .unwrap();
    let mut head = [0; 12];
    assert!(
        third.read_exact(&mut head).is_err(),
        "served past the limit"
    );
    drop(first);
    third.set_read_timeout(Some(PATIENCE)).unwrap();
    third.read_exact(&mut head).unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
}

#[test]
fn an_open_listen_stream_outlives_the_header_timeout() {
    let (wharf, addr) = serve_http(&["echo"], &["--header-timeout-ms", "300"]);
    let mut stream = listen(addr, 7);
    assert_eq!(stream.status, 200);
    assert!(stream.next_event().is_some(), "no acknowledgement");
    std::thread::sleep(Duration::from_millis(1500));
    let calc = std::fs::read(plugin_file("calc")).unwrap();
    let temp = wharf.dir().join("calc.partial");
    std::fs::write(&temp, calc).unwrap();
    std::fs::rename(&temp, wharf.dir().join("calc.wasm")).unwrap();
    let note = stream.next_event().expect("the stream was cut");
    assert_eq!(note["method"], "notifications/tools/list_changed");
}

/// A client that never reads its answer: once the kernel's buffers are full
/// and the server has written nothing for the write-stall timeout, the
/// connection is closed (and logged), and the server serves others.
#[test]
fn a_client_that_never_reads_its_answer_is_cut_off_after_the_write_stall_timeout() {
    let flags = [
        "--max-body-bytes",
        "40000000",
        "--max-output-bytes",
        "40000000",
        "--write-stall-timeout-ms",
        "500",
    ];
    let (wharf, addr) = serve_http(&["echo"], &flags);
    // 12 MB of text, answered at least once in full: more than loopback's
    // socket buffers hold (4 MiB to send, the unread receive window).
    let text = "x".repeat(12_000_000);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": modern(json!({"name": "echo_echo", "arguments": {"text": text}}))})
    .to_string();
    let mut stream = TcpStream::connect(addr).unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {MODERN}\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: echo_echo\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    wharf.wait_for_log("a client took none of its response for the write-stall timeout");
    // What was buffered before the cut can still be read; then the end.
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut received = 0usize;
    let mut buffer = vec![0; 1 << 16];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => received += n,
        }
    }
    assert!(
        received < text.len(),
        "the whole answer came ({received} bytes)"
    );
    assert_eq!(post_list_tools(addr), 200, "the server stopped serving");
}

/// The status of a plain 2026-07-28 `tools/list`.
fn post_list_tools(addr: SocketAddr) -> u16 {
    let body =
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": modern(json!({}))});
    post(
        addr,
        &[
            ("MCP-Protocol-Version", MODERN),
            ("Mcp-Method", "tools/list"),
        ],
        &body,
    )
    .status
}
