//! Several Wharf processes serving as replicas of one service: a multi
//! round-trip request that moves between them (one `--state-key-file`), bad
//! key files, the plugin set digest each reports, and the drain on SIGTERM
//! (`/readyz` 503, calls finish, streams end cleanly, exit 0).

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::harness::*;
use crate::http_client::{Response, post, send};

const MULTI_ROUND: &str = "conformance_test_input_required_result_multi_round";

/// A key file of 44 bytes and a newline, as `head -c 32 /dev/urandom | base64` makes.
fn key_file(dir: &Path, name: &str, key: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("{key}\n")).unwrap();
    path.to_str().unwrap().to_owned()
}

/// A 2026-07-28 POST of `method` with `params` (plus `_meta` declaring
/// `capabilities`).
fn modern_post(
    addr: SocketAddr,
    id: i64,
    method: &str,
    params: Value,
    capabilities: Value,
) -> Response {
    let mut params = modern(params);
    params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = capabilities;
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let mut headers = vec![("MCP-Protocol-Version", MODERN), ("Mcp-Method", method)];
    if let Some(name) = &name {
        headers.push(("Mcp-Name", name));
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    post(addr, &headers, &body)
}

/// One round of the conformance fixture's two-question tool on `addr`.
fn round(addr: SocketAddr, id: i64, extra: Value) -> Value {
    let mut params = json!({"name": MULTI_ROUND, "arguments": {}});
    for (key, value) in extra.as_object().unwrap() {
        params[key] = value.clone();
    }
    let response = modern_post(addr, id, "tools/call", params, json!({"elicitation": {}}));
    assert_eq!(response.status, 200);
    response.json()
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

#[test]
fn a_round_trip_moves_between_replicas_that_share_a_key_file() {
    let keys = tempfile::tempdir().unwrap();
    let shared = key_file(
        keys.path(),
        "shared.key",
        "c2hhcmVkIGJ5IGV2ZXJ5IHJlcGxpY2Egb2YgdGhpcyBkZXBsb3k=",
    );
    let (a, a_addr) = serve_http(&["conformance"], &["--state-key-file", &shared]);
    // The second replica takes the file from the environment, as a Secret would give it.
    let dir = plugin_dir(&["conformance"]);
    let b = Wharf::start_in_env(
        dir.path(),
        &["--http", "127.0.0.1:0"],
        &[("WHARF_STATE_KEY_FILE", &shared)],
    );
    let b_addr = b.http_addr();
    let (lone, lone_addr) = serve_http(&["conformance"], &[]);
    for replica in [&a, &b] {
        replica.wait_for_log("requestState sealed with the key of --state-key-file");
    }
    lone.wait_for_log(
        "requestState sealed with a random key of this process: replicas behind a load \
         balancer need one shared --state-key-file",
    );

    // Round one on A, round two on B, round three back on A.
    let first = round(a_addr, 1, json!({}));
    let first = result_of(&first);
    assert_eq!(first["resultType"], "input_required", "{first}");
    let second = round(
        b_addr,
        2,
        json!({"inputResponses": {"step1": accept(json!({"name": "Ada"}))},
               "requestState": first["requestState"]}),
    );
    let second = result_of(&second);
    assert_eq!(second["resultType"], "input_required", "{second}");
    assert_eq!(
        second["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["step2"]
    );
    let third = round(
        a_addr,
        3,
        json!({"inputResponses": {"step2": accept(json!({"color": "blue"}))},
               "requestState": second["requestState"]}),
    );
    assert_eq!(result_of(&third)["resultType"], "complete", "{third}");
    assert_eq!(first_text(result_of(&third)), "Ada likes blue");

    // A replica with a key of its own cannot open the state.
    let foreign = round(
        lone_addr,
        4,
        json!({"inputResponses": {"step2": accept(json!({"color": "blue"}))},
               "requestState": second["requestState"]}),
    );
    assert_eq!(
        error_of(&foreign),
        &json!({"code": -32602,
                "message": "Invalid params: requestState failed verification (altered, or from another request)",
                "data": {"requestState": "rejected"}})
    );
}

/// Runs `wharf serve --http` with `flags` and returns its exit status and log.
fn fails_to_start(flags: &[&str]) -> (std::process::ExitStatus, String) {
    let dir = plugin_dir(&["echo"]);
    let output = Command::new(env!("CARGO_BIN_EXE_wharf"))
        .arg("serve")
        .arg("--plugins")
        .arg(dir.path())
        .args(["--http", "127.0.0.1:0"])
        .args(flags)
        .env("WHARF_CACHE_DIR", cache_dir())
        .env_remove("WHARF_STATE_KEY_FILE")
        .output()
        .expect("run wharf");
    (output.status, String::from_utf8(output.stderr).unwrap())
}

#[test]
fn a_missing_short_or_unreadable_key_file_stops_the_server() {
    let keys = tempfile::tempdir().unwrap();
    let missing = keys.path().join("absent.key");
    let short = key_file(keys.path(), "short.key", &"k".repeat(31));
    let directory = keys.path().display().to_string();
    for (file, error) in [
        (
            missing.display().to_string(),
            format!("Error: state key file {}: no such file", missing.display()),
        ),
        (
            short.clone(),
            format!(
                "Error: state key file {short} holds 31 bytes; a key needs at least 32 \
                 (make one with `head -c 32 /dev/urandom | base64 > FILE`)"
            ),
        ),
        (
            directory.clone(),
            format!("Error: cannot read state key file {directory}: Is a directory (os error 21)"),
        ),
    ] {
        let (status, log) = fails_to_start(&["--state-key-file", &file]);
        assert_eq!(status.code(), Some(1), "{log}");
        assert!(
            log.lines().any(|line| line == error),
            "{error:?} not in:\n{log}"
        );
        assert!(!log.contains("listening on"), "{log}");
    }
}

/// The digest Wharf must report for these plugin files (no manifests).
fn expected_digest(plugins: &[&str]) -> String {
    let mut names = plugins.to_vec();
    names.sort();
    let mut hasher = Sha256::new();
    for name in names {
        let file = Sha256::digest(std::fs::read(plugin_file(name)).unwrap());
        let hex: String = file.iter().map(|b| format!("{b:02x}")).collect();
        hasher.update(format!("{name}\0{hex}\0-\n"));
    }
    let digest: String = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{digest}")
}

/// The digest as `/healthz`, `/readyz` and `server/discover` report it, which
/// must agree.
fn reported_digest(addr: SocketAddr) -> String {
    let health = send(addr, "GET", "/healthz", &[], b"");
    assert_eq!(health.status, 200);
    let health = health.json();
    let ready = send(addr, "GET", "/readyz", &[], b"");
    assert_eq!(ready.status, 200);
    let ready = ready.json();
    let discover = modern_post(addr, 1, "server/discover", json!({}), json!({})).json();
    let digest = health["pluginSetDigest"]
        .as_str()
        .expect("a digest")
        .to_owned();
    assert_eq!(ready, json!({"status": "ready", "pluginSetDigest": digest}));
    assert_eq!(
        result_of(&discover)["_meta"]["wharf/pluginSetDigest"],
        digest,
        "{discover}"
    );
    digest
}

#[test]
fn replicas_of_one_folder_report_one_plugin_set_digest_which_follows_reloads() {
    let (a, a_addr) = serve_http(&["echo", "calc"], &[]);
    let (_b, b_addr) = serve_http(&["calc", "echo"], &[]);
    let both = expected_digest(&["calc", "echo"]);
    assert_eq!(reported_digest(a_addr), both);
    assert_eq!(reported_digest(b_addr), both);

    std::fs::remove_file(a.dir().join("calc.wasm")).unwrap();
    a.wait_for_log("plugin removed");
    assert_eq!(reported_digest(a_addr), expected_digest(&["echo"]));
    assert_eq!(reported_digest(b_addr), both);
}

fn call(addr: SocketAddr, id: i64, name: &str, arguments: Value) -> Response {
    modern_post(
        addr,
        id,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
        json!({}),
    )
}

#[test]
fn sigterm_drains_calls_finish_streams_end_cleanly_and_the_exit_is_clean() {
    let flags = ["--timeout-ms", "2500", "--drain-delay-ms", "1500"];
    let (mut wharf, addr) = serve_http(&["echo", "misbehave"], &flags);
    let mut listen = modern_post(
        addr,
        7,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
        json!({}),
    );
    assert_eq!(listen.status, 200);
    let ack = listen.next_event().expect("an acknowledgement");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");

    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "legacy", "version": "1"}}});
    let initialized = post(addr, &[], &init);
    let session = initialized
        .header("mcp-session-id")
        .expect("a session")
        .to_owned();
    let legacy = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(addr, &legacy, &note).status, 202);
    let mut get = legacy.to_vec();
    get.push(("Accept", "text/event-stream"));
    let legacy_stream = send(addr, "GET", "/mcp", &get, b"");
    assert_eq!(legacy_stream.status, 200);

    let spinner = std::thread::spawn(move || call(addr, 1, "misbehave_spin", json!({})).json());
    std::thread::sleep(Duration::from_millis(400));
    let signalled = Instant::now();
    let killed = Command::new("kill")
        .args(["-TERM", &wharf.pid().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    wharf.wait_for_log("draining: /readyz answers 503");

    // Not ready at once, still alive, still serving during the drain delay,
    // and every answer closes its connection.
    let ready = send(addr, "GET", "/readyz", &[], b"");
    assert_eq!(ready.status, 503);
    assert_eq!(ready.header("connection"), Some("close"));
    let digest = expected_digest(&["echo", "misbehave"]);
    assert_eq!(
        ready.json(),
        json!({"status": "draining", "pluginSetDigest": digest})
    );
    let health = send(addr, "GET", "/healthz", &[], b"");
    assert_eq!(health.status, 200);
    assert_eq!(health.json()["draining"], true);
    let echo = call(addr, 2, "echo_echo", json!({"text": "late"}));
    assert_eq!(echo.status, 200);
    assert_eq!(echo.header("connection"), Some("close"));
    assert_eq!(first_text(result_of(&echo.json())), "late");

    // The call in flight runs to its own time limit and its answer arrives.
    let spun = spinner.join().unwrap();
    assert_eq!(result_of(&spun)["isError"], true, "{spun}");

    // The streams end as HTTP bodies end, with nothing more on them.
    let mut listen_rest = Vec::new();
    while let Some(event) = listen.next_event() {
        listen_rest.push(event);
    }
    assert_eq!(listen_rest, Vec::<Value>::new());
    assert!(listen.ended_cleanly(), "the listen stream broke off");
    let mut legacy_stream = legacy_stream;
    let mut legacy_rest = Vec::new();
    while let Some(event) = legacy_stream.next_event() {
        legacy_rest.push(event);
    }
    assert_eq!(legacy_rest, Vec::<Value>::new());
    assert!(
        legacy_stream.ended_cleanly(),
        "the legacy GET stream broke off"
    );

    let status = wharf
        .wait_exit(Duration::from_secs(15))
        .unwrap_or_else(|| panic!("wharf did not exit:\n{}", wharf.stderr()));
    assert!(status.success(), "{status}:\n{}", wharf.stderr());
    let took = signalled.elapsed();
    // Drain delay 1.5 s, then the spinner's last ~1 s, then the streams.
    assert!(took < Duration::from_secs(10), "the drain took {took:?}");
    assert!(
        took >= Duration::from_millis(1500),
        "the drain took only {took:?}"
    );
    assert!(
        wharf
            .stderr()
            .contains("drained: streams and sessions ended")
    );
    assert!(std::net::TcpStream::connect(addr).is_err());
}

/// A legacy `initialize` on `addr`; returns the session id.
fn initialize(addr: SocketAddr) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "legacy", "version": "1"}}});
    let response = post(addr, &[], &body);
    assert_eq!(response.status, 200);
    response
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned()
}

#[test]
fn a_session_route_names_the_replica_in_every_session_id() {
    let (_a, a_addr) = serve_http(&["echo"], &["--session-route", "wharf-0"]);
    let (_b, b_addr) = serve_http(&["echo"], &[]);
    let session = initialize(a_addr);
    let (route, random) = session.split_once('.').expect("a routed id");
    assert_eq!(route, "wharf-0");
    assert_eq!(random.len(), 32, "{session}");
    let legacy = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(a_addr, &legacy, &note).status, 202);
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
    let listed = post(a_addr, &legacy, &list);
    assert_eq!(listed.status, 200);
    let listed = listed.events();
    assert_eq!(result_of(&listed[0])["tools"][0]["name"], "echo_echo");
    // Another replica does not know the session: 404, and the client starts anew.
    assert_eq!(post(b_addr, &legacy, &list).status, 404);

    let (status, log) = fails_to_start(&["--session-route", "a.b"]);
    assert_eq!(status.code(), Some(2), "{log}");
    assert!(
        log.contains(
            "invalid value 'a.b' for '--session-route <NAME>': a session route is 1 to 63 \
             ASCII letters, digits, '-' or '_'"
        ),
        "{log}"
    );
}
