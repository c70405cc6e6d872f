//! Wharf as an OAuth 2.1 resource server against a real authorization server:
//! `oidc-provider` (npm, installed by `npm ci` in tests/oauth, which
//! `cargo xtask test` runs) on loopback, issuing JWT access tokens by the
//! client-credentials grant with a resource indicator naming Wharf.
//!
//! Raw HTTP on purpose: the statuses, `WWW-Authenticate` challenges and the
//! metadata document are what a client's OAuth support reads.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};

use crate::harness::{MODERN, Wharf, modern};
use crate::http_client::{Response, post, send};

/// The authorization server's process, stopped when dropped.
struct AuthorizationServer {
    child: Child,
    issuer: String,
}

impl AuthorizationServer {
    fn start(resource: &str) -> Self {
        let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/oauth");
        assert!(
            folder.join("node_modules/oidc-provider").is_dir(),
            "tests/oauth/node_modules is missing: run `npm ci` in tests/oauth (cargo xtask test does)"
        );
        let mut child = Command::new("node")
            .arg("authorization-server.mjs")
            .arg(resource)
            .current_dir(&folder)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start node (Node.js 20+ is needed)");
        let mut line = String::new();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        stdout
            .read_line(&mut line)
            .expect("the authorization server's first line");
        // Drained, not closed: a later write to a closed pipe kills node (EPIPE).
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        let issuer = serde_json::from_str::<Value>(&line)
            .unwrap_or_else(|e| panic!("{e}: {line:?}"))["issuer"]
            .as_str()
            .unwrap()
            .to_owned();
        Self { child, issuer }
    }

    fn addr(&self) -> SocketAddr {
        self.issuer.trim_start_matches("http://").parse().unwrap()
    }

    /// A JWT access token by the client-credentials grant.
    fn token(&self, resource: &str, scope: &str) -> String {
        self.token_for("wharf-test", resource, scope)
    }

    /// An access token of `client` (`wharf-test`: a JWT; `opaque-test`: opaque).
    fn token_for(&self, client: &str, resource: &str, scope: &str) -> String {
        let basic =
            base64::engine::general_purpose::STANDARD.encode(format!("{client}:{client}-secret"));
        let body = format!(
            "grant_type=client_credentials&resource={}&scope={}",
            encode(resource),
            encode(scope)
        );
        let response = send(
            self.addr(),
            "POST",
            "/token",
            &[
                ("Authorization", &format!("Basic {basic}")),
                ("Content-Type", "application/x-www-form-urlencoded"),
            ],
            body.as_bytes(),
        );
        let answer = response.json();
        answer["access_token"]
            .as_str()
            .unwrap_or_else(|| panic!("no token: {answer}"))
            .to_owned()
    }

    /// A token with exactly `claims`, signed with the server's current key.
    fn mint(&self, claims: Value) -> String {
        let response = send(
            self.addr(),
            "POST",
            "/test/mint",
            &[("Content-Type", "application/json")],
            claims.to_string().as_bytes(),
        );
        response.json()["access_token"].as_str().unwrap().to_owned()
    }

    /// A new signing key; the old one is gone from the key set.
    fn rotate(&self) -> String {
        let response = send(self.addr(), "POST", "/test/rotate", &[], b"");
        response.json()["kid"].as_str().unwrap().to_owned()
    }
}

impl Drop for AuthorizationServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A loopback port free right now, for a public URL known before Wharf starts.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn call(addr: SocketAddr, token: Option<&str>, method: &str, extra: Value) -> Response {
    let bearer = token.map(|t| format!("Bearer {t}"));
    let name = extra.get("name").and_then(Value::as_str).map(str::to_owned);
    let mut headers = vec![("MCP-Protocol-Version", MODERN), ("Mcp-Method", method)];
    if let Some(name) = &name {
        headers.push(("Mcp-Name", name));
    }
    if let Some(bearer) = &bearer {
        headers.push(("Authorization", bearer));
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": modern(extra)});
    post(addr, &headers, &body)
}

fn echo() -> Value {
    json!({"name": "echo_echo", "arguments": {"text": "hi"}})
}

fn add() -> Value {
    json!({"name": "calc_add", "arguments": {"a": 1, "b": 2}})
}

fn tool_names(response: Response) -> Vec<String> {
    assert_eq!(response.status, 200);
    let body = response.json();
    body["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{body}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// The challenge of a 401 refusal of `token`, checked to be `invalid_token`.
fn refused(addr: SocketAddr, token: &str, metadata: &str) -> String {
    let response = call(addr, Some(token), "tools/call", echo());
    assert_eq!(response.status, 401);
    let challenge = response.header("www-authenticate").unwrap().to_owned();
    let prefix = "Bearer error=\"invalid_token\", error_description=\"";
    let suffix = format!("\", resource_metadata=\"{metadata}\"");
    assert!(
        challenge.starts_with(prefix) && challenge.ends_with(&suffix),
        "{challenge}"
    );
    challenge[prefix.len()..challenge.len() - suffix.len()].to_owned()
}

#[test]
fn tokens_from_a_real_authorization_server_are_checked_with_per_tool_scopes() {
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let metadata = format!("http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp");
    let server = AuthorizationServer::start(&resource);
    let wharf = Wharf::start_with_manifests(
        &["echo", "calc"],
        &[
            ("echo", "[auth]\nscopes = [\"tools\"]\n"),
            (
                "calc",
                "[auth]\nscopes = [\"tools\"]\n[auth.tools]\nadd = [\"files:write\"]\n",
            ),
        ],
        &[
            "--http",
            &format!("127.0.0.1:{port}"),
            "--auth-issuer",
            &server.issuer,
            "--public-url",
            &resource,
        ],
    );
    let addr = wharf.http_addr();

    // The metadata document, open to anyone, in both forms.
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let response = send(addr, "GET", path, &[], b"");
        assert_eq!(response.status, 200, "{path}");
        assert_eq!(
            response.json(),
            json!({
                "resource": resource,
                "authorization_servers": [server.issuer],
                "bearer_methods_supported": ["header"],
                "scopes_supported": ["files:write", "tools"],
            })
        );
    }

    // No token: 401 pointing at the metadata.
    let response = call(addr, None, "tools/list", json!({}));
    assert_eq!(response.status, 401);
    assert_eq!(
        response.header("www-authenticate"),
        Some(format!("Bearer resource_metadata=\"{metadata}\"").as_str())
    );

    // A good token with `tools`: echo works, calc_add is hidden and refused.
    let reader = server.token(&resource, "tools");
    let response = call(addr, Some(&reader), "tools/call", echo());
    assert_eq!(response.status, 200);
    assert_eq!(response.json()["result"]["content"][0]["text"], "hi");
    let listed = tool_names(call(addr, Some(&reader), "tools/list", json!({})));
    assert!(listed.contains(&"echo_echo".to_owned()), "{listed:?}");
    assert!(listed.contains(&"calc_divide".to_owned()), "{listed:?}");
    assert!(!listed.contains(&"calc_add".to_owned()), "{listed:?}");
    let response = call(addr, Some(&reader), "tools/call", add());
    assert_eq!(response.status, 403);
    assert_eq!(
        response.header("www-authenticate"),
        Some(
            format!(
                "Bearer error=\"insufficient_scope\", scope=\"files:write\", resource_metadata=\"{metadata}\", error_description=\"the token lacks the scope \\\"files:write\\\"\""
            )
            .as_str()
        )
    );

    // Step-up: a token with the scope calls it.
    let writer = server.token(&resource, "tools files:write");
    let response = call(addr, Some(&writer), "tools/call", add());
    assert_eq!(response.status, 200);
    assert!(
        tool_names(call(addr, Some(&writer), "tools/list", json!({})))
            .contains(&"calc_add".to_owned())
    );

    // Wrong audience, expired, foreign issuer, a tampered signature.
    let other = server.token("http://127.0.0.1:1/mcp", "tools");
    assert_eq!(
        refused(addr, &other, &metadata),
        format!("the token's audience is not {resource}")
    );
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let expired = server.mint(json!({
        "iss": server.issuer, "aud": resource, "sub": "s", "scope": "tools",
        "iat": now - 600, "exp": now - 300,
    }));
    assert_eq!(refused(addr, &expired, &metadata), "the token has expired");
    let foreign = server.mint(json!({
        "iss": "http://127.0.0.1:1", "aud": resource, "scope": "tools", "exp": now + 300,
    }));
    assert_eq!(
        refused(addr, &foreign, &metadata),
        "issuer \\\"http://127.0.0.1:1\\\" is not trusted"
    );
    let (signed, signature) = reader.rsplit_once('.').unwrap();
    let flipped = if signature.starts_with('A') { "B" } else { "A" };
    let tampered = format!("{signed}.{flipped}{}", &signature[1..]);
    assert_eq!(refused(addr, &tampered, &metadata), "invalid signature");

    // Key rotation at the provider: a token signed with the new key works
    // once Wharf's key cache may refresh (at most every 5 s), without a restart.
    let kid = server.rotate();
    assert_eq!(kid, "key-2");
    std::thread::sleep(Duration::from_millis(5_100));
    let rotated = server.token(&resource, "tools");
    let response = call(addr, Some(&rotated), "tools/call", echo());
    assert_eq!(response.status, 200);
    // The old key is gone from the set: its tokens no longer pass.
    assert_eq!(
        refused(addr, &reader, &metadata),
        "no key \\\"key-1\\\" in the issuer's key set"
    );

    // `alg: none` and HMAC tokens never get as far as a key.
    let unsigned = |alg: &str| {
        let b64 = |v: Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
        format!(
            "{}.{}.",
            b64(json!({"alg": alg, "kid": "key-2"})),
            b64(json!({"iss": server.issuer, "aud": resource, "scope": "tools", "exp": now + 300}))
        )
    };
    for alg in ["none", "HS256"] {
        assert_eq!(
            refused(addr, &unsigned(alg), &metadata),
            format!(
                "algorithm \\\"{alg}\\\" is not accepted: only public-key signatures (RS, PS, ES, EdDSA)"
            )
        );
    }

    // The token is never logged.
    assert!(!wharf.stderr().contains(&writer[..40]));
}

#[test]
fn opaque_tokens_are_checked_by_introspection() {
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let metadata = format!("http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp");
    let server = AuthorizationServer::start(&resource);
    let introspection = format!("{}/token/introspection", server.issuer);
    let wharf = Wharf::start_with_manifests(
        &["echo", "calc", "textstats"],
        &[
            ("calc", "[auth]\nscopes = [\"files:write\"]\n"),
            ("textstats", "[auth]\nscopes = [\"files:write\"]\n"),
        ],
        &[
            "--http",
            &format!("127.0.0.1:{port}"),
            "--auth-introspection",
            &introspection,
            "--auth-client-id",
            "wharf-test",
            "--auth-client-secret",
            "wharf-test-secret",
            "--public-url",
            &resource,
        ],
    );
    let addr = wharf.http_addr();

    let opaque = server.token_for("opaque-test", &resource, "tools");
    assert!(!opaque.contains('.'), "an opaque token: {opaque}");
    let response = call(addr, Some(&opaque), "tools/call", echo());
    assert_eq!(response.status, 200);
    assert_eq!(response.json()["result"]["content"][0]["text"], "hi");
    assert_eq!(
        tool_names(call(addr, Some(&opaque), "tools/list", json!({}))),
        ["echo_echo"]
    );
    assert_eq!(call(addr, Some(&opaque), "tools/call", add()).status, 403);

    // A plugin's [auth] scopes cover its prompts too: hidden, and refused.
    let listed = call(addr, Some(&opaque), "prompts/list", json!({})).json();
    assert_eq!(listed["result"]["prompts"], json!([]), "{listed}");
    assert_eq!(listed["result"]["cacheScope"], "private");
    let get = json!({"name": "textstats_summarize", "arguments": {"text": "x"}});
    let refused_get = call(addr, Some(&opaque), "prompts/get", get.clone()).json();
    assert_eq!(
        refused_get["error"]["message"],
        "Forbidden: the token lacks the scope \"files:write\" needed by prompt `textstats_summarize`",
        "{refused_get}"
    );
    let complete = json!({
        "ref": {"type": "ref/prompt", "name": "textstats_summarize"},
        "argument": {"name": "length", "value": ""},
    });
    let refused_completion = call(addr, Some(&opaque), "completion/complete", complete).json();
    assert_eq!(
        refused_completion["error"]["message"],
        "Forbidden: the token lacks the scope \"files:write\" needed by prompt `textstats_summarize`",
        "{refused_completion}"
    );
    let writer = server.token_for("opaque-test", &resource, "tools files:write");
    let listed = call(addr, Some(&writer), "prompts/list", json!({})).json();
    assert_eq!(
        listed["result"]["prompts"][0]["name"],
        "textstats_summarize"
    );

    let other = server.token_for("opaque-test", "http://127.0.0.1:1/mcp", "tools");
    assert_eq!(
        refused(addr, &other, &metadata),
        format!("the token's audience is not {resource}")
    );
    assert_eq!(
        refused(addr, "not-a-token-the-server-issued", &metadata),
        "the token is not active"
    );
}

/// `[auth.tools]` naming a tool the plugin lacks keeps the plugin out (a
/// typo would leave the tool it meant with fewer scopes); the others load.
#[test]
fn scopes_for_a_tool_the_plugin_lacks_keep_it_out() {
    let mut wharf = Wharf::start_with_manifests(
        &["echo", "calc"],
        &[("calc", "[auth.tools]\nsum = [\"files:write\"]\n")],
        &[],
    );
    wharf.wait_for_log("calc.toml, key `auth.tools.sum`: the plugin has no tool `sum`");
    let response = wharf.modern(1, "tools/list", json!({}));
    let names: Vec<&str> = response["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["echo_echo"]);
}

/// `[auth] caller = true` lets a plugin learn who calls it (the token's subject
/// and scopes, never the token); without it the plugin learns nothing, and
/// over stdio there is no caller to learn. The audit trail names the caller
/// either way.
#[test]
fn only_a_plugin_granted_the_caller_learns_who_calls_it() {
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let server = AuthorizationServer::start(&resource);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let token = server.mint(json!({
        "iss": server.issuer, "aud": resource, "sub": "alice", "client_id": "notes-app",
        "scope": "tools files:read", "exp": now + 300,
    }));
    let logs = tempfile::tempdir().unwrap();
    let audit = logs.path().join("audit.log");
    let caller = json!({"name": "misbehave_caller", "arguments": {}});
    for (manifest, expected) in [
        (
            "[auth]\ncaller = true\n",
            r#"Some("alice") ["files:read", "tools"]"#,
        ),
        ("", "(none)"),
    ] {
        let wharf = Wharf::start_with_manifests(
            &["misbehave"],
            &[("misbehave", manifest)],
            &[
                "--http",
                &format!("127.0.0.1:{port}"),
                "--auth-issuer",
                &server.issuer,
                "--public-url",
                &resource,
                "--audit-log",
                audit.to_str().unwrap(),
            ],
        );
        let response = call(
            wharf.http_addr(),
            Some(&token),
            "tools/call",
            caller.clone(),
        );
        assert_eq!(response.status, 200, "{manifest:?}");
        let body = response.json();
        assert_eq!(body["result"]["content"][0]["text"], expected, "{body}");
        assert!(!body.to_string().contains(&token));
    }
    let calls: Vec<Value> = std::fs::read_to_string(&audit)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|line| line["tool"] == "misbehave_caller")
        .collect();
    assert_eq!(calls.len(), 2);
    for line in calls {
        assert_eq!(
            line["caller"],
            json!({"auth": "oauth", "subject": "alice", "client_id": "notes-app"}),
            "{line}"
        );
    }

    // Over stdio no token let the request in: the granted plugin learns nothing.
    let mut wharf = Wharf::start_with_manifests(
        &["misbehave"],
        &[("misbehave", "[auth]\ncaller = true\n")],
        &[],
    );
    let response = wharf.modern(1, "tools/call", caller);
    assert_eq!(
        response["result"]["content"][0]["text"], "(none)",
        "{response}"
    );
}

/// A legacy session opened with an access token serves that caller only: the
/// same id with another user's token, or another client's, is an unknown
/// session (404), as if it did not exist.
#[test]
fn a_legacy_session_belongs_to_the_caller_that_opened_it() {
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let server = AuthorizationServer::start(&resource);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let token = |sub: &str, client: &str| {
        server.mint(json!({
            "iss": server.issuer, "aud": resource, "sub": sub, "client_id": client,
            "scope": "tools", "exp": now + 300,
        }))
    };
    let (alice, bob, alice_elsewhere) = (
        token("alice", "app"),
        token("bob", "app"),
        token("alice", "other-app"),
    );
    let wharf = Wharf::start_with_manifests(
        &["echo"],
        &[],
        &[
            "--http",
            &format!("127.0.0.1:{port}"),
            "--auth-issuer",
            &server.issuer,
            "--public-url",
            &resource,
        ],
    );
    let addr = wharf.http_addr();
    let as_alice = format!("Bearer {alice}");
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "legacy", "version": "1"}}});
    let response = post(addr, &[("Authorization", &as_alice)], &init);
    assert_eq!(response.status, 200);
    let session = response.header("mcp-session-id").unwrap().to_owned();
    response.events();
    let in_session = |bearer: &str, body: &Value| {
        let bearer = format!("Bearer {bearer}");
        post(
            addr,
            &[
                ("Authorization", bearer.as_str()),
                ("Mcp-Session-Id", session.as_str()),
                ("MCP-Protocol-Version", "2025-06-18"),
            ],
            body,
        )
    };
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(in_session(&alice, &initialized).status, 202);
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    for stranger in [&bob, &alice_elsewhere] {
        let response = in_session(stranger, &list);
        assert_eq!(response.status, 404);
        assert_eq!(
            response.json(),
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32600,
                "message": "Not Found: no such session (it ended, expired or never existed); \
                            send initialize to start a new one"}})
        );
    }
    let events = in_session(&alice, &list).events();
    assert!(
        events.iter().any(|e| e["result"]["tools"].is_array()),
        "{events:?}"
    );
}
