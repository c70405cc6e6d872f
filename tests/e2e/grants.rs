//! Manifests: what a plugin gets when its `NAME.toml` grants it, and nothing more.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;

use serde_json::json;

use crate::harness::*;

/// A folder with misbehave, echo, a data directory and `misbehave.toml`.
fn folder_with(manifest: &str) -> tempfile::TempDir {
    let dir = plugin_dir(&["echo", "misbehave"]);
    std::fs::create_dir(dir.path().join("data")).unwrap();
    std::fs::write(dir.path().join("data/hello.txt"), "hello from the host").unwrap();
    std::fs::write(dir.path().join("misbehave.toml"), manifest).unwrap();
    dir
}

fn text_of(wharf: &mut Wharf, id: i64, tool: &str, arguments: serde_json::Value) -> String {
    first_text(&call(wharf, id, tool, arguments)).to_string()
}

#[test]
fn a_read_only_directory_is_readable_and_nothing_else() {
    let dir = folder_with("[[dir]]\nhost = \"data\"\nguest = \"/data\"\n");
    std::os::unix::fs::symlink("/etc/passwd", dir.path().join("data/passwd")).unwrap();
    std::os::unix::fs::symlink("/etc", dir.path().join("data/etc")).unwrap();
    let mut wharf = Wharf::start_in(dir.path(), &[]);
    let read = |wharf: &mut Wharf, id, path: &str| {
        text_of(wharf, id, "misbehave_read_file", json!({"path": path}))
    };
    assert_eq!(
        read(&mut wharf, 1, "/data/hello.txt"),
        "hello from the host"
    );
    for (id, path) in [
        "/etc/passwd",
        "/data/../etc/passwd",
        "/data/passwd",
        "/data/etc/passwd",
        "../etc/passwd",
    ]
    .into_iter()
    .enumerate()
    {
        let text = read(&mut wharf, id as i64 + 2, path);
        assert!(!text.contains("root:"), "{path} leaked: {text}");
    }
    let text = text_of(
        &mut wharf,
        10,
        "misbehave_write_file",
        json!({"path": "/data/new.txt", "text": "x"}),
    );
    assert_ne!(text, "written");
    assert!(!dir.path().join("data/new.txt").exists());
    still_serving(&mut wharf, 11);
}

#[test]
fn a_read_write_directory_is_writable() {
    let dir = folder_with("[[dir]]\nhost = \"data\"\nguest = \"/data\"\nmode = \"read-write\"\n");
    let mut wharf = Wharf::start_in(dir.path(), &[]);
    let text = text_of(
        &mut wharf,
        1,
        "misbehave_write_file",
        json!({"path": "/data/new.txt", "text": "from the guest"}),
    );
    assert_eq!(text, "written");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("data/new.txt")).unwrap(),
        "from the guest"
    );
}

#[test]
fn only_granted_environment_variables_are_visible() {
    let dir = folder_with("[env]\npass = [\"WHARF_E2E_PASSED\"]\nset = { FIXED = \"yes\" }\n");
    let mut wharf = Wharf::start_in_env(
        dir.path(),
        &[],
        &[
            ("WHARF_E2E_PASSED", "passed"),
            ("WHARF_E2E_SECRET", "secret"),
        ],
    );
    let env = |wharf: &mut Wharf, id, name: &str| {
        text_of(wharf, id, "misbehave_env", json!({"name": name}))
    };
    assert_eq!(env(&mut wharf, 1, "WHARF_E2E_PASSED"), "passed");
    assert_eq!(env(&mut wharf, 2, "FIXED"), "yes");
    assert_eq!(
        env(&mut wharf, 3, "WHARF_E2E_SECRET"),
        "environment variable not found"
    );
    assert_eq!(env(&mut wharf, 4, "PATH"), "environment variable not found");
}

#[test]
fn config_values_reach_the_plugin() {
    let dir = folder_with("[config]\ngreeting = \"hello\"\n");
    let mut wharf = Wharf::start_in(dir.path(), &[]);
    let text = text_of(
        &mut wharf,
        1,
        "misbehave_config",
        json!({"key": "greeting"}),
    );
    assert_eq!(text, "hello");
    let text = text_of(&mut wharf, 2, "misbehave_config", json!({"key": "other"}));
    assert_eq!(text, "(none)");
}

#[test]
fn manifest_limits_override_the_command_line() {
    let dir = folder_with("[limits]\nmemory-mib = 16\n");
    let mut wharf = Wharf::start_in(dir.path(), &["--memory-mib", "256"]);
    let result = call(&mut wharf, 1, "misbehave_alloc", json!({"mib": 32}));
    assert_eq!(
        first_text(&result),
        "Tool `misbehave_alloc` failed: the plugin exceeded its memory limit of 16 MiB and was stopped"
    );
    let result = call(&mut wharf, 2, "misbehave_alloc", json!({"mib": 4}));
    assert_eq!(result["isError"], false, "{result}");
}

#[test]
fn an_invalid_manifest_keeps_only_its_plugin_out() {
    let dir = folder_with("[limits]\nmemory-mb = 16\n");
    let mut wharf = Wharf::start_in(dir.path(), &[]);
    still_serving(&mut wharf, 1);
    let response = wharf.modern(2, "tools/list", json!({}));
    let tools = result_of(&response)["tools"].as_array().unwrap().clone();
    assert!(
        tools
            .iter()
            .all(|t| !t["name"].as_str().unwrap().starts_with("misbehave_"))
    );
    wharf.wait_for_log("misbehave.toml, key `limits.memory-mb`: unknown field `memory-mb`");
}

/// A one-shot HTTP server on 127.0.0.1 that answers `hello` and counts requests.
fn http_server() -> (String, std::sync::mpsc::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { break };
            stream.set_read_timeout(Some(Duration::from_secs(5))).ok();
            let mut request = Vec::new();
            let mut buf = [0u8; 1024];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buf[..n]),
                }
            }
            let _ = tx.send(String::from_utf8_lossy(&request).into_owned());
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
            );
        }
    });
    (addr, rx)
}

#[test]
fn an_allowed_host_is_reached_and_others_are_refused() {
    let (allowed, allowed_hits) = http_server();
    let (other, other_hits) = http_server();
    let dir = folder_with(&format!("[http]\nallow = [\"{allowed}\"]\n"));
    let mut wharf = Wharf::start_in(dir.path(), &[]);
    let result = call(
        &mut wharf,
        1,
        "misbehave_fetch",
        json!({"url": format!("http://{allowed}/path?q=1")}),
    );
    assert_eq!(first_text(&result), "200 hello", "{result}");
    let request = allowed_hits.recv_timeout(Duration::from_secs(5)).unwrap();
    assert!(
        request.starts_with("GET /path?q=1 HTTP/1.1\r\n"),
        "{request}"
    );

    let result = call(
        &mut wharf,
        2,
        "misbehave_fetch",
        json!({"url": format!("http://{other}/")}),
    );
    assert_eq!(result["isError"], true);
    assert_eq!(
        first_text(&result),
        format!(
            "Tool `misbehave_fetch` failed: the plugin's HTTP request to `{other}` was refused: \
             that host is not in its allow-list (`[http] allow` in its manifest)"
        )
    );
    assert!(other_hits.recv_timeout(Duration::from_millis(200)).is_err());
}

#[test]
fn without_a_manifest_every_request_is_refused() {
    let (addr, hits) = http_server();
    let mut wharf = Wharf::start(&["echo", "misbehave"], &[]);
    let result = call(
        &mut wharf,
        1,
        "misbehave_fetch",
        json!({"url": format!("http://{addr}/")}),
    );
    assert_eq!(result["isError"], true);
    assert!(
        first_text(&result).contains(&format!("HTTP request to `{addr}` was refused")),
        "{result}"
    );
    assert!(hits.recv_timeout(Duration::from_millis(200)).is_err());
    still_serving(&mut wharf, 2);
}
