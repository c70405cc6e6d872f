//! The HTTP envelope checks: Origin and Host, headers against the body's
//! `_meta`, body size and JSON, through Wharf's router in process.
//! Invariants: no panic; no 5xx; a disallowed `Host` or `Origin` is refused
//! (400 for an unreadable `Host`, else 403) before anything else; a POST body that is not JSON gets 400 with
//! -32700; every JSON answer is JSON.
#![no_main]
use std::sync::LazyLock;
use std::time::Duration;

use arbitrary::Arbitrary;
use http::{HeaderValue, Request};
use libfuzzer_sys::fuzz_target;
use wharf::fuzzing::{HttpHarness, HttpOptions, body};

const MAX_BODY: usize = 64 << 10;

static HARNESS: LazyLock<HttpHarness> = LazyLock::new(|| {
    HttpHarness::new(HttpOptions {
        max_body_bytes: MAX_BODY,
        request_timeout: Duration::from_secs(2),
        ..HttpOptions::default()
    })
});

const VERSIONS: [&str; 5] = [
    "2026-07-28",
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
];
const METHODS: [&str; 10] = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "server/discover",
    "logging/setLevel",
    "resources/list",
    "prompts/list",
    "subscriptions/listen",
    "notifications/initialized",
];

#[derive(Arbitrary, Debug)]
enum Text {
    Pick(u8),
    Own(String),
}

impl Text {
    fn of(&self, choices: &[&str]) -> String {
        match self {
            Text::Pick(i) => choices[usize::from(*i) % choices.len()].to_string(),
            Text::Own(s) => s.clone(),
        }
    }
}

#[derive(Arbitrary, Debug)]
enum Body {
    Raw(Vec<u8>),
    Request {
        id: Option<i64>,
        method: Text,
        version: Option<Text>,
        capabilities: bool,
        params: String,
    },
}

#[derive(Arbitrary, Debug)]
struct Case {
    post: bool,
    host: Option<Text>,
    origin: Option<Text>,
    version: Option<Text>,
    session: Option<String>,
    accept: Option<Text>,
    json_content: bool,
    body: Body,
}

const HOSTS: [&str; 6] = [
    "localhost",
    "127.0.0.1:8080",
    "[::1]:9",
    "evil.example",
    "LOCALHOST:1",
    "127.0.0.2",
];
const ORIGINS: [&str; 4] = [
    "http://localhost:5173",
    "https://evil.example",
    "null",
    "http://[::1]",
];
const ACCEPTS: [&str; 3] = [
    "application/json, text/event-stream",
    "application/json",
    "text/event-stream",
];

/// Whether `host` names this machine (name, then nothing or `:port`), by a
/// parser independent of Wharf's.
fn loopback(host: &str) -> bool {
    let host = host.trim().to_ascii_lowercase();
    ["localhost", "127.0.0.1", "[::1]"].iter().any(|name| {
        host.strip_prefix(name).is_some_and(|rest| {
            rest.is_empty()
                || rest
                    .strip_prefix(':')
                    .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        })
    })
}

fuzz_target!(|case: Case| {
    let body_bytes = match &case.body {
        Body::Raw(bytes) => bytes.clone(),
        Body::Request {
            id,
            method,
            version,
            capabilities,
            params,
        } => {
            let mut meta = serde_json::Map::new();
            if let Some(v) = version {
                meta.insert(
                    "io.modelcontextprotocol/protocolVersion".into(),
                    v.of(&VERSIONS).into(),
                );
            }
            if *capabilities {
                meta.insert(
                    "io.modelcontextprotocol/clientCapabilities".into(),
                    serde_json::json!({}),
                );
            }
            let mut params: serde_json::Value =
                serde_json::from_str(params).unwrap_or(serde_json::json!({}));
            if let Some(object) = params.as_object_mut() {
                object.insert("_meta".into(), meta.into());
            }
            let mut message = serde_json::json!({"jsonrpc": "2.0", "method": method.of(&METHODS), "params": params});
            if let Some(id) = id {
                message["id"] = (*id).into();
            }
            message.to_string().into_bytes()
        }
    };
    let mut request = Request::builder()
        .method(if case.post { "POST" } else { "GET" })
        .uri("/mcp");
    let host = case.host.as_ref().map(|h| h.of(&HOSTS));
    let origin = case.origin.as_ref().map(|o| o.of(&ORIGINS));
    for (name, value) in [
        ("host", host.clone()),
        ("origin", origin.clone()),
        (
            "mcp-protocol-version",
            case.version.as_ref().map(|v| v.of(&VERSIONS)),
        ),
        ("mcp-session-id", case.session.clone()),
        ("accept", case.accept.as_ref().map(|a| a.of(&ACCEPTS))),
        (
            "content-type",
            case.json_content.then(|| "application/json".to_string()),
        ),
    ] {
        if let Some(value) = value {
            let Ok(value) = HeaderValue::from_str(&value) else {
                return;
            };
            request = request.header(name, value);
        }
    }
    let Ok(request) = request.body(body(body_bytes.clone())) else {
        return;
    };
    let (response, answer) = HARNESS.answer(request, Duration::from_millis(200));
    let status = response.status().as_u16();
    assert!(
        status < 500,
        "status {status}: {}",
        String::from_utf8_lossy(&answer)
    );
    let host_ok = host.as_deref().is_some_and(loopback);
    match &host {
        None => assert_eq!(status, 400, "no Host"),
        Some(_) if !host_ok => assert!(
            matches!(status, 400 | 403),
            "a foreign Host passed with {status}"
        ),
        Some(_) => {}
    }
    if let Some(origin) = &origin
        && host_ok
        && status != 403
    {
        // Only loopback origins are allowed by default.
        let authority = origin.trim().split_once("://").map_or("", |(_, rest)| rest);
        let authority = authority.split('/').next().unwrap_or_default();
        assert!(loopback(authority), "a foreign Origin passed: {origin:?}");
    }
    let origin_ok = origin.is_none() || status != 403;
    if case.post
        && host_ok
        && origin_ok
        && body_bytes.len() <= MAX_BODY
        && serde_json::from_slice::<serde::de::IgnoredAny>(&body_bytes).is_err()
    {
        assert_eq!(status, 400, "a body that is not JSON");
        assert!(String::from_utf8_lossy(&answer).contains("-32700"));
    }
    let json = response
        .headers()
        .get("content-type")
        .is_some_and(|t| t.as_bytes().starts_with(b"application/json"));
    if json && !answer.is_empty() {
        serde_json::from_slice::<serde_json::Value>(&answer).expect("a JSON answer is JSON");
    }
});
