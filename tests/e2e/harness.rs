//! Starts `wharf serve` on a folder of plugins and talks JSON-RPC lines to it.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long any single expected message may take (plugin compilation included).
pub const PATIENCE: Duration = Duration::from_secs(60);

/// The protocol revision of the stateless era.
pub const MODERN: &str = "2026-07-28";

/// Plugins built into `target/test-plugins` rather than `target/plugins`.
const TEST_ONLY_PLUGINS: &[&str] = &["misbehave", "shapes", "conformance"];

/// Where `cargo xtask plugins` puts a plugin (`example` or `test` kind).
pub fn plugin_file(name: &str) -> PathBuf {
    let (var, default) = if TEST_ONLY_PLUGINS.contains(&name) {
        ("WHARF_TEST_HOSTILE_PLUGINS", "target/test-plugins")
    } else {
        ("WHARF_TEST_PLUGINS", "target/plugins")
    };
    let dir = std::env::var_os(var).map(PathBuf::from).unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(default)
    });
    let file = dir.join(format!("{name}.wasm"));
    assert!(
        file.is_file(),
        "{} is missing: run `cargo xtask plugins` (or `cargo xtask test`) first",
        file.display()
    );
    file
}

/// A folder holding copies of the named plugins.
pub fn plugin_dir(names: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for name in names {
        std::fs::copy(plugin_file(name), dir.path().join(format!("{name}.wasm")))
            .expect("copy plugin");
    }
    dir
}

/// A compile cache shared by the test processes (entries are written atomically).
pub fn cache_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/e2e-cache")
}

/// `_meta` for a 2026-07-28 request with no client capabilities.
pub fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "wharf-e2e", "version": "0"}
    })
}

/// `params` for a 2026-07-28 request: `extra` plus the `_meta` envelope.
pub fn modern(extra: Value) -> Value {
    let mut params = extra;
    params
        .as_object_mut()
        .expect("params are an object")
        .insert("_meta".into(), meta());
    params
}

/// `wharf serve --http 127.0.0.1:0` on copies of the named plugins, and the
/// address it bound.
pub fn serve_http(plugins: &[&str], flags: &[&str]) -> (Wharf, std::net::SocketAddr) {
    let mut all = vec!["--http", "127.0.0.1:0"];
    all.extend_from_slice(flags);
    let wharf = Wharf::start(plugins, &all);
    let addr = wharf.http_addr();
    (wharf, addr)
}

/// A running `wharf serve` process.
pub struct Wharf {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    /// Messages received while waiting for something else.
    backlog: Vec<Value>,
    stderr: Arc<Mutex<String>>,
    _dir: Option<tempfile::TempDir>,
}

impl Wharf {
    /// Serves the named plugins (copied to a fresh folder) with extra CLI flags.
    pub fn start(plugins: &[&str], flags: &[&str]) -> Self {
        let dir = plugin_dir(plugins);
        let mut wharf = Self::start_in(dir.path(), flags);
        wharf._dir = Some(dir);
        wharf
    }

    /// Serves the named plugins with manifests (`(plugin, toml text)`) beside them.
    pub fn start_with_manifests(
        plugins: &[&str],
        manifests: &[(&str, &str)],
        flags: &[&str],
    ) -> Self {
        let dir = plugin_dir(plugins);
        for (name, text) in manifests {
            std::fs::write(dir.path().join(format!("{name}.toml")), text).expect("write manifest");
        }
        let mut wharf = Self::start_in(dir.path(), flags);
        wharf._dir = Some(dir);
        wharf
    }

    /// Keeps `dir` (the served folder) until the process is dropped.
    pub fn keep_dir(&mut self, dir: tempfile::TempDir) {
        self._dir = Some(dir);
    }

    /// Serves the plugins already in `dir`.
    pub fn start_in(dir: &Path, flags: &[&str]) -> Self {
        Self::start_in_env(dir, flags, &[])
    }

    /// Serves the plugins already in `dir`, with extra environment variables.
    pub fn start_in_env(dir: &Path, flags: &[&str], env: &[(&str, &str)]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_wharf"))
            .arg("serve")
            .arg("--plugins")
            .arg(dir)
            .args(flags)
            .envs(env.iter().copied())
            .env("WHARF_LOG", "wharf=debug,warn")
            .env("WHARF_CACHE_DIR", cache_dir())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start wharf");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("wharf wrote a non-JSON line {line:?}: {e}"));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        let pipe = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines() {
                let Ok(line) = line else { break };
                let mut all = sink.lock().unwrap();
                all.push_str(&line);
                all.push('\n');
            }
        });
        let wharf = Self {
            stdin: child.stdin.take(),
            child,
            lines,
            backlog: Vec::new(),
            stderr,
            _dir: None,
        };
        // Plugins compile before serving starts; tests that time calls or race them
        // against each other must not count compilation.
        wharf.wait_for_log("plugins loaded");
        wharf
    }

    /// The plugin folder of a server started with [`Wharf::start`].
    pub fn dir(&self) -> &Path {
        self._dir
            .as_ref()
            .expect("started with Wharf::start")
            .path()
    }

    /// Opens a `subscriptions/listen` stream for tool list changes and waits for
    /// its acknowledgement.
    pub fn listen(&mut self, id: &str) -> Value {
        self.listen_for(id, json!({"toolsListChanged": true}))
    }

    /// Opens a `subscriptions/listen` stream with this notification filter and
    /// waits for its acknowledgement.
    pub fn listen_for(&mut self, id: &str, filter: Value) -> Value {
        self.send(
            json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
            "params": modern(json!({"notifications": filter}))}),
        );
        self.next_matching(|m| {
            m["method"] == "notifications/subscriptions/acknowledged"
                && m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == id
        })
    }

    /// A legacy `initialize` + `notifications/initialized` handshake.
    pub fn initialize(&mut self, version: &str) -> Value {
        let response = self.request(
            json!("init"),
            "initialize",
            json!({
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "wharf-e2e", "version": "0"}
            }),
        );
        self.notify("notifications/initialized", json!({}));
        result_of(&response).clone()
    }

    /// Writes one raw line (a newline is added).
    pub fn send_raw(&mut self, line: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Writes one message.
    pub fn send(&mut self, message: Value) {
        self.send_raw(message.to_string().as_bytes());
    }

    /// Sends a request and returns its response (result or error), keeping any
    /// other message that arrives meanwhile in the backlog.
    pub fn request(&mut self, id: Value, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response(&id)
    }

    /// A 2026-07-28 request with the standard `_meta`.
    pub fn modern(&mut self, id: i64, method: &str, extra: Value) -> Value {
        self.request(json!(id), method, modern(extra))
    }

    /// Waits for the response with this id.
    pub fn response(&mut self, id: &Value) -> Value {
        self.next_matching(|m| m.get("id") == Some(id) && m.get("method").is_none())
    }

    /// Sends a notification (no response expected).
    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Waits for the first message (backlog first) that `matches`.
    pub fn next_matching(&mut self, matches: impl Fn(&Value) -> bool) -> Value {
        if let Some(at) = self.backlog.iter().position(&matches) {
            return self.backlog.remove(at);
        }
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(message) if matches(&message) => return message,
                Ok(message) => self.backlog.push(message),
                Err(RecvTimeoutError::Timeout) => panic!(
                    "no matching message within {PATIENCE:?}; backlog {:?}; stderr:\n{}",
                    self.backlog,
                    self.stderr()
                ),
                Err(RecvTimeoutError::Disconnected) => panic!(
                    "wharf closed stdout; backlog {:?}; stderr:\n{}",
                    self.backlog,
                    self.stderr()
                ),
            }
        }
    }

    /// Every message that arrives within `window`, backlog included.
    pub fn drain(&mut self, window: Duration) -> Vec<Value> {
        let mut all = std::mem::take(&mut self.backlog);
        let deadline = Instant::now() + window;
        while let Ok(message) = self
            .lines
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            all.push(message);
        }
        all
    }

    /// What wharf has logged so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits until the log contains `needle`.
    pub fn wait_for_log(&self, needle: &str) {
        let deadline = Instant::now() + PATIENCE;
        while !self.stderr().contains(needle) {
            assert!(
                Instant::now() < deadline,
                "log never said {needle:?}:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Closes stdin and waits for a clean exit.
    pub fn close(mut self) -> std::process::ExitStatus {
        self.close_and_wait()
    }

    /// Closes stdin, as a client that leaves does, and waits for the exit;
    /// the log stays readable.
    pub fn close_and_wait(&mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        self.wait_exit(Duration::from_secs(10))
            .expect("wharf did not exit after stdin closed")
    }

    /// Where `wharf serve --http` listens: read from its log line
    /// `listening on http://ADDR/mcp` (so tests can ask for port 0).
    pub fn http_addr(&self) -> std::net::SocketAddr {
        const NEEDLE: &str = "listening on http://";
        self.wait_for_log(NEEDLE);
        let log = self.stderr();
        let at = log.find(NEEDLE).unwrap() + NEEDLE.len();
        let end = log[at..].find('/').unwrap();
        log[at..at + end].parse().expect("socket address in log")
    }

    /// The process id (to send it signals).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits (at most `within`) for the process to exit.
    pub fn wait_exit(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// The server's resident memory in KiB (`VmRSS` in `/proc/PID/status`).
    pub fn rss_kib(&self) -> u64 {
        self.proc_status("VmRSS")
            .and_then(|value| value.trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS in /proc/PID/status")
    }

    /// A field of `/proc/PID/status`, e.g. `THP_enabled`.
    pub fn proc_status(&self, field: &str) -> Option<String> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .expect("read /proc/PID/status");
        status
            .lines()
            .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
            .map(|value| value.trim().to_string())
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

impl Drop for Wharf {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Calls a tool (2026-07-28) and returns its result object.
pub fn call(wharf: &mut Wharf, id: i64, tool: &str, arguments: Value) -> Value {
    let response = wharf.modern(
        id,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    );
    result_of(&response).clone()
}

/// Sends a tool call (2026-07-28) without waiting for its response.
pub fn send_call(wharf: &mut Wharf, id: i64, tool: &str, arguments: Value) {
    wharf.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": modern(json!({"name": tool, "arguments": arguments}))}));
}

/// The text of the first content item of a tool result.
pub fn first_text(result: &Value) -> &str {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content in {result}"))
}

/// The error object of a response, or a panic naming what came instead.
pub fn error_of(response: &Value) -> &Value {
    response
        .get("error")
        .unwrap_or_else(|| panic!("expected an error, got {response}"))
}

/// The result object of a response, or a panic naming what came instead.
pub fn result_of(response: &Value) -> &Value {
    response
        .get("result")
        .unwrap_or_else(|| panic!("expected a result, got {response}"))
}

/// The server still answers a normal call (`echo_echo` must be loaded).
pub fn still_serving(wharf: &mut Wharf, id: i64) {
    let result = call(wharf, id, "echo_echo", json!({"text": "alive"}));
    assert_eq!(first_text(&result), "alive");
}
