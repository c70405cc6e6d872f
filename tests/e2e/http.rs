//! Streamable HTTP: both eras on `/mcp`, every refusal with its exact status and
//! code, SSE, cancellation by disconnect, concurrency, shutdown, status endpoints.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::*;
use crate::http_client::{Response, post, send};

/// A 2026-07-28 request with matching standard headers.
fn modern_post(addr: SocketAddr, id: i64, method: &str, extra: Value) -> Response {
    modern_post_with(addr, id, method, extra, &[])
}

fn modern_post_with(
    addr: SocketAddr,
    id: i64,
    method: &str,
    extra: Value,
    headers: &[(&str, &str)],
) -> Response {
    let name = extra.get("name").and_then(Value::as_str).map(str::to_owned);
    let mut all = vec![("MCP-Protocol-Version", MODERN), ("Mcp-Method", method)];
    if let Some(name) = &name {
        all.push(("Mcp-Name", name));
    }
    all.extend_from_slice(headers);
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": modern(extra)});
    post(addr, &all, &body)
}

fn echo(text: &str) -> Value {
    json!({"name": "echo_echo", "arguments": {"text": text}})
}

/// Asserts a JSON-RPC error response with this HTTP status and code.
fn assert_refused(response: Response, status: u16, code: i64) -> Value {
    assert_eq!(response.status, status, "{:?}", response.headers);
    let body = response.json();
    assert_eq!(error_of(&body)["code"], code, "{body}");
    body
}

/// Over HTTP too, each call's instance is its own (see the stdio test in
/// `sandbox`), whichever serving thread made it.
#[test]
fn no_http_call_sees_what_an_earlier_call_left_in_memory() {
    let (_wharf, addr) = serve_http(&["misbehave"], &[]);
    for id in 1..=6 {
        let calls = json!({"name": "misbehave_calls", "arguments": {}});
        let body = modern_post(addr, id, "tools/call", calls).json();
        assert_eq!(first_text(result_of(&body)), "1", "call {id}: {body}");
    }
}

#[test]
fn modern_requests_get_json_answers() {
    let (_wharf, addr) = serve_http(&["echo"], &[]);
    let response = modern_post(addr, 1, "tools/call", echo("over http"));
    assert_eq!(response.status, 200);
    assert_eq!(response.content_type(), "application/json");
    assert!(response.header("mcp-session-id").is_none());
    let body = response.json();
    assert_eq!(body["id"], 1);
    let result = result_of(&body);
    assert_eq!(result["resultType"], "complete");
    assert_eq!(first_text(result), "over http");

    let list = modern_post(addr, 2, "tools/list", json!({})).json();
    assert_eq!(result_of(&list)["tools"][0]["name"], "echo_echo");
    assert_eq!(result_of(&list)["cacheScope"], "public");
    let discover = modern_post(addr, 3, "server/discover", json!({})).json();
    assert!(
        result_of(&discover)["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!(MODERN))
    );
}

#[test]
fn progress_travels_on_the_request_sse_stream() {
    let (_wharf, addr) = serve_http(&["misbehave"], &[]);
    let mut params = modern(json!({"name": "misbehave_log", "arguments": {}}));
    params["_meta"]["progressToken"] = json!("tok");
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params});
    let headers = [
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "misbehave_log"),
    ];
    let response = post(addr, &headers, &body);
    assert_eq!(response.status, 200);
    assert_eq!(response.content_type(), "text/event-stream");
    assert_eq!(response.header("x-accel-buffering"), Some("no"));
    let mut events = response.events();
    let result = events.pop().expect("a result");
    assert_eq!(result["id"], 7);
    assert_eq!(first_text(result_of(&result)), "logged");
    // A burst of three: the first and the last at least (see PROGRESS_INTERVAL).
    assert!((2..=3).contains(&events.len()), "{events:?}");
    for event in &events {
        assert_eq!(event["method"], "notifications/progress", "{event}");
        assert_eq!(event["params"]["progressToken"], "tok");
    }
    assert_eq!(events[0]["params"]["progress"], 1.0);
    assert_eq!(events[events.len() - 1]["params"]["progress"], 3.0);
}

#[test]
fn header_and_envelope_errors_have_exact_statuses() {
    let (_wharf, addr) = serve_http(&["echo"], &[]);
    // Mcp-Method disagrees with the body.
    let mismatch = modern_post_with(
        addr,
        1,
        "tools/call",
        echo("x"),
        &[("Mcp-Method", "tools/list")],
    );
    assert_refused(mismatch, 400, -32020);
    // MCP-Protocol-Version disagrees with _meta.
    let body =
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": modern(json!({}))});
    let headers = [
        ("MCP-Protocol-Version", "2025-11-25"),
        ("Mcp-Method", "tools/list"),
    ];
    assert_refused(post(addr, &headers, &body), 400, -32020);
    // No _meta at all on a modern request.
    let bare = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}});
    let headers = [
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "tools/list"),
    ];
    let refused = assert_refused(post(addr, &headers, &bare), 400, -32602);
    assert_eq!(refused["id"], 3);
    // An unsupported version, in header and body alike.
    let mut params = modern(json!({}));
    params["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("1900-01-01");
    let old = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": params});
    let headers = [
        ("MCP-Protocol-Version", "1900-01-01"),
        ("Mcp-Method", "tools/list"),
    ];
    let refused = assert_refused(post(addr, &headers, &old), 400, -32022);
    assert_eq!(refused["error"]["data"]["requested"], "1900-01-01");
    assert!(
        refused["error"]["data"]["supported"]
            .as_array()
            .unwrap()
            .contains(&json!(MODERN))
    );
    // Unknown and removed methods.
    assert_refused(modern_post(addr, 5, "ping", json!({})), 404, -32601);
    let set_level = modern_post(addr, 6, "logging/setLevel", json!({"level": "debug"}));
    assert_refused(set_level, 404, -32601);
    let subscribe = modern_post(addr, 7, "resources/subscribe", json!({"uri": "a://b"}));
    assert_refused(subscribe, 404, -32601);
    assert_refused(modern_post(addr, 6, "no/such", json!({})), 404, -32601);
    let init = modern(json!({
        "protocolVersion": MODERN, "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"}
    }));
    let init = json!({"jsonrpc": "2.0", "id": 8, "method": "initialize", "params": init});
    let headers = [
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "initialize"),
    ];
    let refused = assert_refused(post(addr, &headers, &init), 404, -32601);
    assert_eq!(refused["id"], 8);
    // Not JSON.
    let garbage = send(
        addr,
        "POST",
        "/mcp",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ],
        b"{nope",
    );
    assert_refused(garbage, 400, -32700);
    // Methods the endpoint does not serve.
    assert_eq!(send(addr, "PUT", "/mcp", &[], b"").status, 405);
    let modern_get = [
        ("Accept", "text/event-stream"),
        ("MCP-Protocol-Version", MODERN),
    ];
    assert_eq!(send(addr, "GET", "/mcp", &modern_get, b"").status, 405);
    let modern_delete = [("MCP-Protocol-Version", MODERN)];
    assert_eq!(
        send(addr, "DELETE", "/mcp", &modern_delete, b"").status,
        405
    );
}

#[test]
fn origin_and_host_are_checked() {
    let (_wharf, addr) = serve_http(&["echo"], &["--allowed-origin", "https://app.example.com"]);
    let call =
        |headers: &[(&str, &str)]| modern_post_with(addr, 1, "tools/call", echo("o"), headers);
    assert_refused(call(&[("Origin", "https://evil.example")]), 403, -32600);
    assert_refused(call(&[("Origin", "null")]), 403, -32600);
    assert_refused(call(&[("Host", "evil.example")]), 403, -32600);
    assert_eq!(call(&[("Origin", "http://localhost:5173")]).status, 200);
    assert_eq!(call(&[("Origin", "https://app.example.com")]).status, 200);
    assert_eq!(call(&[("Host", "localhost")]).status, 200);
    let healthz = send(
        addr,
        "GET",
        "/healthz",
        &[("Origin", "https://evil.example")],
        b"",
    );
    assert_eq!(healthz.status, 403);
}

#[test]
fn bearer_token_is_required_when_configured() {
    let (_wharf, addr) = serve_http(&["echo"], &["--auth-token", "s3cret"]);
    let missing = modern_post(addr, 1, "tools/call", echo("a"));
    assert_eq!(
        missing.header("www-authenticate"),
        Some(r#"Bearer realm="wharf""#)
    );
    assert_refused(missing, 401, -32600);
    let wrong = modern_post_with(
        addr,
        1,
        "tools/call",
        echo("a"),
        &[("Authorization", "Bearer nope")],
    );
    assert!(
        wrong
            .header("www-authenticate")
            .unwrap()
            .contains("invalid_token")
    );
    assert_refused(wrong, 401, -32600);
    let right = modern_post_with(
        addr,
        1,
        "tools/call",
        echo("a"),
        &[("Authorization", "Bearer s3cret")],
    );
    assert_eq!(right.status, 200);
    assert_eq!(send(addr, "GET", "/metrics", &[], b"").status, 401);
    assert_eq!(send(addr, "GET", "/healthz", &[], b"").status, 200);
}

#[test]
fn oversized_bodies_are_refused() {
    let (_wharf, addr) = serve_http(&["echo"], &["--max-body-bytes", "1000"]);
    let big = "x".repeat(2000);
    assert_refused(modern_post(addr, 1, "tools/call", echo(&big)), 413, -32600);
    assert_eq!(
        modern_post(addr, 2, "tools/call", echo("small")).status,
        200
    );
}

/// Borrowed header pairs for [`post`] and [`send`].
fn headers<'a>(all: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    all.iter().map(|(n, v)| (*n, v.as_str())).collect()
}

/// Legacy `initialize` over HTTP; returns the session id.
fn initialize(addr: SocketAddr) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "legacy", "version": "1"}}});
    let response = post(addr, &[], &body);
    assert_eq!(response.status, 200);
    let session = response
        .header("mcp-session-id")
        .expect("session id")
        .to_string();
    assert!(
        session.bytes().all(|b| (0x21..=0x7e).contains(&b)),
        "{session}"
    );
    let events = response.events();
    assert_eq!(result_of(&events[0])["protocolVersion"], "2025-06-18");
    session
}

/// A legacy session past its handshake (`initialize`, then
/// `notifications/initialized`); returns its id.
fn legacy_session(addr: SocketAddr) -> String {
    let session = initialize(addr);
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(addr, &headers, &initialized).status, 202);
    session
}

#[test]
fn legacy_sessions_live_from_initialize_to_delete() {
    let (_wharf, addr) = serve_http(&["echo"], &[]);
    let session = initialize(addr);
    let with = |extra: &[(&'static str, &str)]| -> Vec<(&'static str, String)> {
        let mut all = vec![
            ("Mcp-Session-Id", session.clone()),
            ("MCP-Protocol-Version", "2025-06-18".to_string()),
        ];
        all.extend(extra.iter().map(|(n, v)| (*n, v.to_string())));
        all
    };
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(addr, &headers(&with(&[])), &initialized).status, 202);

    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "echo_echo", "arguments": {"text": "legacy"}}});
    let response = post(addr, &headers(&with(&[])), &call);
    assert_eq!(response.status, 200);
    let events = response.events();
    let answer = events.iter().find(|e| e["id"] == 1).expect("a response");
    assert_eq!(first_text(result_of(answer)), "legacy");

    // The session's GET stream opens.
    let stream = send(
        addr,
        "GET",
        "/mcp",
        &headers(&with(&[("Accept", "text/event-stream")])),
        b"",
    );
    assert_eq!(stream.status, 200);
    assert_eq!(stream.content_type(), "text/event-stream");
    drop(stream);

    // An unknown session is 404; no session at all is 400.
    let unknown = [
        ("Mcp-Session-Id", "no-such-session"),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    assert_eq!(post(addr, &unknown, &call).status, 404);
    assert_eq!(post(addr, &[], &call).status, 400);

    // DELETE ends it; afterwards the id is unknown.
    let deleted = send(addr, "DELETE", "/mcp", &headers(&with(&[])), b"");
    // 200, as the official SDK clients expect (rmcp alone answers 202).
    assert_eq!(deleted.status, 200);
    assert_eq!(post(addr, &headers(&with(&[])), &call).status, 404);
}

/// A quick legacy call's SSE answer (head, priming event, message and end)
/// leaves Wharf in one write, so a client's first read has all of it; without
/// the hold (see `http::coalesce`) the priming event went out alone first.
#[test]
fn a_quick_legacy_answer_arrives_in_one_piece() {
    use std::io::{Read, Write};
    let (_wharf, addr) = serve_http(&["echo"], &[]);
    let session = legacy_session(addr);
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let calls = 10;
    let mut whole = 0;
    for id in 1..=calls {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "echo_echo", "arguments": {"text": format!("piece {id}")}}})
        .to_string();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMcp-Session-Id: {session}\r\n\
             MCP-Protocol-Version: 2025-06-18\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).unwrap();
        let mut answer = Vec::new();
        let mut buffer = [0; 65536];
        let mut reads = 0;
        // Read until the end of this answer (chunked, or a Content-Length).
        while !answer.ends_with(b"\r\n0\r\n\r\n") {
            let read = stream.read(&mut buffer).expect("the rest of the answer");
            assert!(
                read > 0,
                "closed mid-answer: {}",
                String::from_utf8_lossy(&answer)
            );
            answer.extend_from_slice(&buffer[..read]);
            reads += 1;
        }
        let text = String::from_utf8_lossy(&answer);
        assert!(text.starts_with("HTTP/1.1 200"), "{text}");
        assert!(text.contains("data: \n"), "no priming event: {text}");
        assert!(text.contains(&format!("piece {id}")), "{text}");
        if reads == 1 {
            whole += 1;
        }
    }
    // A call that outlasts its thread's other work (the first, a slow CI
    // machine) may still go out in two; most must not.
    assert!(
        whole * 2 > calls,
        "only {whole} of {calls} answers came in one piece"
    );
}

#[test]
fn legacy_sessions_expire_when_idle() {
    let (_wharf, addr) = serve_http(&["echo"], &["--session-idle-secs", "1"]);
    let session = initialize(addr);
    std::thread::sleep(Duration::from_millis(2500));
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    assert_eq!(post(addr, &headers, &call).status, 404);
}

#[test]
fn closing_the_response_cancels_the_call() {
    let (wharf, addr) = serve_http(&["misbehave"], &["--timeout-ms", "60000"]);
    let spin = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": modern(json!({"name": "misbehave_spin", "arguments": {}}))});
    let body = spin.to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {MODERN}\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: misbehave_spin\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    std::io::Write::write_all(&mut stream, request.as_bytes()).unwrap();
    // Let the guest start spinning, then hang up: the call must stop long
    // before its 60 s limit.
    std::thread::sleep(Duration::from_millis(500));
    let closed = Instant::now();
    drop(stream);
    wharf.wait_for_log("call failed: the call was cancelled");
    assert!(closed.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_request_past_its_time_limit_is_answered_408_and_cancelled() {
    let args = ["--timeout-ms", "60000", "--request-timeout-ms", "300"];
    let (wharf, addr) = serve_http(&["misbehave"], &args);
    let spin = json!({"name": "misbehave_spin", "arguments": {}});
    let started = Instant::now();
    assert_refused(modern_post(addr, 1, "tools/call", spin), 408, -32600);
    assert!(started.elapsed() < Duration::from_secs(10));
    wharf.wait_for_log("call failed: the call was cancelled");
}

#[test]
fn plugin_changes_reach_listen_streams_and_legacy_get_streams() {
    let (wharf, addr) = serve_http(&["echo"], &[]);
    let mut listen = modern_post(
        addr,
        7,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true, "promptsListChanged": true}}),
    );
    assert_eq!(listen.status, 200);
    assert_eq!(listen.content_type(), "text/event-stream");
    let ack = listen.next_event().expect("an acknowledgement");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true, "promptsListChanged": true})
    );

    let session = legacy_session(addr);
    let legacy = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let mut get_headers = legacy.to_vec();
    get_headers.push(("Accept", "text/event-stream"));
    let mut stream = send(addr, "GET", "/mcp", &get_headers, b"");
    assert_eq!(stream.status, 200);

    let calc = std::fs::read(plugin_file("calc")).unwrap();
    let temp = wharf.dir().join("calc.partial");
    std::fs::write(&temp, calc).unwrap();
    std::fs::rename(&temp, wharf.dir().join("calc.wasm")).unwrap();

    let note = listen
        .next_event()
        .expect("a list_changed on the listen stream");
    assert_eq!(note["method"], "notifications/tools/list_changed");
    assert_eq!(
        note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );
    let note = stream
        .next_event()
        .expect("a list_changed on the GET stream");
    assert_eq!(note["method"], "notifications/tools/list_changed");

    let response = modern_post(addr, 8, "tools/list", json!({}));
    let names: Vec<Value> = response.json()["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert!(names.contains(&json!("calc_add")), "{names:?}");
}
