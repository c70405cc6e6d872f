//! Plugins from an OCI registry: the CNCF distribution registry (Debian's
//! `docker-registry`) started on loopback by each test, artifacts pushed by
//! an independent client (the `oras` Python package) and by `wharf push`,
//! signatures made by `wharf sign` and tampered with by hand.
//!
//! Needs `docker-registry` on PATH (`.ci/run` installs it) and the venv of
//! tests/oci/requirements.txt (`cargo xtask test` makes it and passes its
//! python as `WHARF_TEST_ORAS_PYTHON`; default `target/oci/venv/bin/python`).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::*;

/// A distribution registry on a loopback port, with its storage in a temp folder.
struct Registry {
    child: Child,
    /// `127.0.0.1:PORT`.
    addr: String,
    root: tempfile::TempDir,
    /// Files the config names (the htpasswd file).
    keep: Option<tempfile::TempDir>,
}

impl Registry {
    fn start() -> Self {
        Self::start_with("")
    }

    /// A registry that wants `user:password` (HTTP basic, an htpasswd file).
    fn start_with_user(user_password: &str) -> Self {
        let root = tempfile::tempdir().unwrap();
        let file = root.path().join("htpasswd");
        oras(&["htpasswd", user_password, file.to_str().unwrap()]);
        let auth = format!(
            "auth:\n  htpasswd:\n    realm: wharf-test\n    path: {}\n",
            file.display()
        );
        let mut registry = Self::start_with(&auth);
        registry.keep = Some(root);
        registry
    }

    /// A registry whose config ends with `extra` (YAML).
    fn start_with(extra: &str) -> Self {
        let root = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let addr = format!("127.0.0.1:{port}");
        let config = root.path().join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: {addr}\n{extra}",
                root.path().join("data").display()
            ),
        )
        .unwrap();
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect(
                "start docker-registry: install Debian's `docker-registry` package (.ci/run does)",
            );
        let registry = Self {
            child,
            addr,
            root,
            keep: None,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while !registry.answers() {
            assert!(Instant::now() < deadline, "the registry did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        registry
    }

    /// Whether `GET /v2/` answers (200, or 401 when it wants a user).
    fn answers(&self) -> bool {
        let Ok(mut stream) = TcpStream::connect(&self.addr) else {
            return false;
        };
        let request = format!(
            "GET /v2/ HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            self.addr
        );
        let mut answer = String::new();
        stream.write_all(request.as_bytes()).is_ok()
            && stream.read_to_string(&mut answer).is_ok()
            && (answer.starts_with("HTTP/1.1 200") || answer.starts_with("HTTP/1.1 401"))
    }

    fn reference(&self, path: &str) -> String {
        format!("oci://{}/{path}", self.addr)
    }

    /// The stored bytes of blob `digest` (`sha256:HEX`).
    fn blob_file(&self, digest: &str) -> PathBuf {
        let hex = digest.strip_prefix("sha256:").unwrap();
        self.root
            .path()
            .join("data/docker/registry/v2/blobs/sha256")
            .join(&hex[..2])
            .join(hex)
            .join("data")
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Runs the oras helper; returns its stdout.
fn oras(args: &[&str]) -> String {
    let python = std::env::var_os("WHARF_TEST_ORAS_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/oci/venv/bin/python")
        });
    assert!(
        python.is_file(),
        "{} is missing: run `cargo xtask test`, or make a venv with tests/oci/requirements.txt",
        python.display()
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/oci/oras_tool.py");
    run(Command::new(python).arg(script).args(args))
}

/// Runs `wharf ARGS` (push, sign, keygen); returns its stdout.
fn wharf(args: &[&str], dir: &Path) -> String {
    run(Command::new(env!("CARGO_BIN_EXE_wharf"))
        .args(args)
        .current_dir(dir))
}

fn run(command: &mut Command) -> String {
    let output = command.output().expect("run");
    assert!(
        output.status.success(),
        "{command:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

/// The tool names served.
fn tool_names(wharf: &mut Wharf) -> Vec<String> {
    let response = wharf.modern(900, "tools/list", json!({}));
    let mut names: Vec<String> = result_of(&response)["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

/// `host:port/repo:tag` of an `oci://` reference, as oras writes it.
fn bare(reference: &str) -> &str {
    reference.strip_prefix("oci://").unwrap()
}

#[test]
fn a_component_pushed_by_oras_is_served_by_tag_and_by_digest() {
    let registry = Registry::start();
    let echo = registry.reference("team/echo:v1");
    oras(&["push", bare(&echo), plugin_file("echo").to_str().unwrap()]);
    let calc = registry.reference("team/calc:v1");
    let calc_digest = oras(&["push", bare(&calc), plugin_file("calc").to_str().unwrap()]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("echo.oci"), format!("{echo}\n")).unwrap();
    let pinned = registry.reference(&format!("team/calc@{calc_digest}"));
    std::fs::write(dir.path().join("calc.oci"), &pinned).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let mut served = Wharf::start_in(dir.path(), &["--cache-dir", cache.path().to_str().unwrap()]);
    let names = tool_names(&mut served);
    assert!(names.contains(&"echo_echo".to_string()), "{names:?}");
    assert!(names.contains(&"calc_add".to_string()), "{names:?}");
    still_serving(&mut served, 1);
    // Content-addressed: the manifest and the component, by digest.
    let store = cache.path().join("oci/sha256");
    assert!(
        store
            .join(calc_digest.strip_prefix("sha256:").unwrap())
            .is_file()
    );
    let component = std::fs::read(plugin_file("echo")).unwrap();
    use sha2::Digest as _;
    let hex: String = sha2::Sha256::digest(&component)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(std::fs::read(store.join(hex)).unwrap(), component);
}

#[test]
fn what_wharf_pushes_oras_reads_back_with_the_wasm_media_types() {
    let registry = Registry::start();
    let work = tempfile::tempdir().unwrap();
    let source = work.path().join("calc.wasm");
    std::fs::copy(plugin_file("calc"), &source).unwrap();
    std::fs::write(work.path().join("calc.toml"), "[names]\nprefix = false\n").unwrap();
    let reference = registry.reference("w/calc:1.0");
    let pushed = wharf(&["push", "calc.wasm", &reference], work.path());
    assert!(
        pushed.starts_with(&registry.reference("w/calc@sha256:")),
        "{pushed}"
    );
    let out = work.path().join("pulled");
    let manifest: Value =
        serde_json::from_str(&oras(&["pull", bare(&reference), out.to_str().unwrap()])).unwrap();
    assert_eq!(
        manifest["mediaType"],
        "application/vnd.oci.image.manifest.v1+json"
    );
    assert_eq!(
        manifest["config"]["mediaType"],
        "application/vnd.wasm.config.v0+json"
    );
    assert_eq!(manifest["layers"].as_array().unwrap().len(), 1);
    assert_eq!(manifest["layers"][0]["mediaType"], "application/wasm");
    assert_eq!(
        manifest["annotations"]["dev.wharf.plugin.manifest"],
        "[names]\nprefix = false\n"
    );
    assert_eq!(
        std::fs::read(out.join("calc.wasm")).unwrap(),
        std::fs::read(&source).unwrap()
    );
}

#[test]
fn only_artifacts_signed_by_a_trusted_key_load() {
    let registry = Registry::start();
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    wharf(&["keygen", "--out", "trusted"], w);
    wharf(&["keygen", "--out", "stranger"], w);
    let push = |plugin: &str, at: &str| -> String {
        let file = w.join(format!("{plugin}.wasm"));
        std::fs::copy(plugin_file(plugin), &file).unwrap();
        let pushed = wharf(
            &["push", file.to_str().unwrap(), &registry.reference(at)],
            w,
        );
        pushed.rsplit_once('@').unwrap().1.to_string()
    };
    let good = push("echo", "s/good:v1");
    wharf(
        &[
            "sign",
            &registry.reference("s/good:v1"),
            "--key",
            "trusted.key",
        ],
        w,
    );
    let unsigned = push("calc", "s/unsigned:v1");
    push("units", "s/stranger:v1");
    wharf(
        &[
            "sign",
            &registry.reference("s/stranger:v1"),
            "--key",
            "stranger.key",
        ],
        w,
    );
    // Another component in the good repository, under the good one's signature.
    let moved = push("textstats", "s/good:moved");
    let good_hex = good.strip_prefix("sha256:").unwrap();
    let moved_hex = moved.strip_prefix("sha256:").unwrap();
    oras(&[
        "copy",
        &format!("{}/s/good:sha256-{good_hex}.sig", registry.addr),
        &format!("sha256-{moved_hex}.sig"),
    ]);
    // Signed, then a byte of its component changed in the registry's storage.
    push("wat-add", "s/tampered:v1");
    wharf(
        &[
            "sign",
            &registry.reference("s/tampered:v1"),
            "--key",
            "trusted.key",
        ],
        w,
    );
    let layer = {
        let bytes = std::fs::read(plugin_file("wat-add")).unwrap();
        use sha2::Digest as _;
        let hex: String = sha2::Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        registry.blob_file(&format!("sha256:{hex}"))
    };
    let mut bytes = std::fs::read(&layer).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&layer, bytes).unwrap();

    let dir = tempfile::tempdir().unwrap();
    let refs = [
        ("good", "s/good:v1"),
        ("unsigned", "s/unsigned:v1"),
        ("stranger", "s/stranger:v1"),
        ("moved", "s/good:moved"),
        ("tampered", "s/tampered:v1"),
    ];
    for (name, at) in refs {
        std::fs::write(
            dir.path().join(format!("{name}.oci")),
            registry.reference(at),
        )
        .unwrap();
    }
    let cache = tempfile::tempdir().unwrap();
    let trusted = w.join("trusted.pub");
    let mut served = Wharf::start_in(
        dir.path(),
        &[
            "--cache-dir",
            cache.path().to_str().unwrap(),
            "--trust",
            trusted.to_str().unwrap(),
        ],
    );
    assert_eq!(tool_names(&mut served), ["good_echo"]);
    let result = call(&mut served, 1, "good_echo", json!({"text": "signed"}));
    assert_eq!(first_text(&result), "signed");
    let log = served.stderr();
    let reference = |at: &str| registry.reference(at);
    for expected in [
        format!(
            "{}@{unsigned} refused: it is not signed: there is no signature at {}",
            reference("s/unsigned:v1"),
            reference(&format!(
                "s/unsigned:sha256-{}.sig",
                unsigned.strip_prefix("sha256:").unwrap()
            ))
        ),
        "no signature is valid: signature 1: it is signed by none of the trusted keys".to_string(),
        format!("no signature is valid: signature 1: it signs {good}, not {moved}"),
    ] {
        assert!(log.contains(&expected), "missing {expected:?} in:\n{log}");
    }
    assert!(
        log.contains("the registry sent bytes whose digest is"),
        "the tampered layer was not refused:\n{log}"
    );
}

#[test]
fn a_moved_tag_reloads_and_a_stopped_registry_keeps_serving() {
    let mut registry = Registry::start();
    let tag = registry.reference("r/tool:stable");
    oras(&["push", bare(&tag), plugin_file("calc").to_str().unwrap()]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tool.oci"), &tag).unwrap();
    std::fs::copy(plugin_file("echo"), dir.path().join("echo.wasm")).unwrap();
    let mut served = Wharf::start_in(dir.path(), &["--oci-poll-secs", "1"]);
    served.listen("L1");
    let before = tool_names(&mut served);
    assert!(before.contains(&"tool_add".to_string()), "{before:?}");

    oras(&["push", bare(&tag), plugin_file("units").to_str().unwrap()]);
    let note = served.next_matching(|m| m["method"] == "notifications/tools/list_changed");
    assert_eq!(
        note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "L1"
    );
    let after = tool_names(&mut served);
    assert!(after.contains(&"tool_convert".to_string()), "{after:?}");
    assert!(!after.contains(&"tool_add".to_string()), "{after:?}");

    registry.stop();
    served.wait_for_log("keeps serving");
    let names = tool_names(&mut served);
    assert_eq!(names, after);
    still_serving(&mut served, 2);
}

#[test]
fn require_signed_loads_only_local_files_signed_by_a_trusted_key() {
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    wharf(&["keygen", "--out", "trusted"], w);
    wharf(&["keygen", "--out", "stranger"], w);
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str| dir.path().join(format!("{name}.wasm"));
    for name in ["echo", "calc", "units"] {
        std::fs::copy(plugin_file(name), file(name)).unwrap();
    }
    let written = wharf(
        &[
            "sign",
            file("echo").to_str().unwrap(),
            "--key",
            "trusted.key",
        ],
        w,
    );
    assert_eq!(written, format!("{}.sig", file("echo").display()));
    wharf(
        &[
            "sign",
            file("units").to_str().unwrap(),
            "--key",
            "stranger.key",
        ],
        w,
    );
    let trusted = w.join("trusted.pub");
    let mut served = Wharf::start_in(
        dir.path(),
        &["--trust", trusted.to_str().unwrap(), "--require-signed"],
    );
    assert_eq!(tool_names(&mut served), ["echo_echo"]);
    let log = served.stderr();
    for expected in [
        format!(
            "--require-signed: no signature at {}.sig: No such file or directory",
            file("calc").display()
        ),
        format!(
            "--require-signed: {}.sig: the signature is by none of the trusted keys, or of other bytes",
            file("units").display()
        ),
    ] {
        assert!(log.contains(&expected), "missing {expected:?} in:\n{log}");
    }
    // Signing calc now brings it in, as any change to the folder would.
    wharf(
        &[
            "sign",
            file("calc").to_str().unwrap(),
            "--key",
            "trusted.key",
        ],
        w,
    );
    served.wait_for_log("plugins reloaded");
    assert!(tool_names(&mut served).contains(&"calc_add".to_string()));
}

#[test]
fn a_bad_reference_or_an_absent_registry_is_logged_and_the_rest_serves() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(plugin_file("echo"), dir.path().join("echo.wasm")).unwrap();
    std::fs::write(dir.path().join("typo.oci"), "oci://127.0.0.1:1/Team/x:v1\n").unwrap();
    std::fs::write(dir.path().join("down.oci"), "oci://127.0.0.1:1/team/x:v1\n").unwrap();
    let mut served = Wharf::start_in(dir.path(), &[]);
    assert_eq!(tool_names(&mut served), ["echo_echo"]);
    let log = served.stderr();
    for expected in [
        "plugin not loaded: `oci://127.0.0.1:1/Team/x:v1`: the repository part `Team` is not lowercase letters and digits joined by `.`, `_`, `__` or `-`",
        "plugin not loaded: cannot reach the registry 127.0.0.1:1: Connection refused",
    ] {
        assert!(log.contains(expected), "missing {expected:?} in:\n{log}");
    }
}

#[test]
fn inspect_shows_what_a_pushed_plugin_is_granted_before_it_runs() {
    let registry = Registry::start();
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    std::fs::copy(plugin_file("calc"), w.join("calc.wasm")).unwrap();
    std::fs::write(
        w.join("calc.toml"),
        "[env]\nset = { CALC_MODE = \"exact\" }\n",
    )
    .unwrap();
    let reference = registry.reference("i/calc:v1");
    wharf(&["push", "calc.wasm", &reference], w);
    // Inspected from elsewhere: only the registry holds the manifest.
    let elsewhere = tempfile::tempdir().unwrap();
    let report = wharf(&["inspect", &reference], elsewhere.path());
    assert!(report.contains("plugin: calc\n"), "{report}");
    assert!(report.contains("  env: CALC_MODE\n"), "{report}");
    // Signed-only inspection refuses what is not signed.
    wharf(&["keygen", "--out", "k"], w);
    let output = Command::new(env!("CARGO_BIN_EXE_wharf"))
        .args(["inspect", &reference, "--trust"])
        .arg(w.join("k.pub"))
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("refused: it is not signed"), "{stderr}");
}

#[test]
fn a_plugin_named_on_the_command_line_is_served_with_the_folders_manifest() {
    let registry = Registry::start();
    let reference = registry.reference("cli/calc:v1");
    oras(&[
        "push",
        bare(&reference),
        plugin_file("calc").to_str().unwrap(),
    ]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sums.toml"), "[names]\nprefix = false\n").unwrap();
    let flag = format!("sums={reference}");
    let mut served = Wharf::start_in(dir.path(), &["--plugin", &flag]);
    let names = tool_names(&mut served);
    assert!(names.contains(&"add".to_string()), "{names:?}");
}

#[test]
fn registry_credentials_come_from_a_docker_config() {
    let registry = Registry::start_with_user("alice:s3cret");
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    std::fs::copy(plugin_file("echo"), w.join("echo.wasm")).unwrap();
    // No credentials (an empty DOCKER_CONFIG): the registry's 401 is the error.
    let reference = registry.reference("auth/echo:v1");
    let output = Command::new(env!("CARGO_BIN_EXE_wharf"))
        .args(["push", "echo.wasm", &reference])
        .current_dir(w)
        .env("DOCKER_CONFIG", w)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("the registry answered 401 Unauthorized"),
        "{stderr}"
    );
    // With them: push, then serve.
    let config = w.join("auth.json");
    std::fs::write(
        &config,
        format!(
            r#"{{"auths": {{"{}": {{"auth": "YWxpY2U6czNjcmV0"}}}}}}"#,
            registry.addr
        ),
    )
    .unwrap();
    let auth = ["--registry-auth", config.to_str().unwrap()];
    let mut push = vec!["push", "echo.wasm", &reference];
    push.extend(auth);
    wharf(&push, w);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("echo.oci"), &reference).unwrap();
    let mut served = Wharf::start_in(dir.path(), &auth);
    assert_eq!(tool_names(&mut served), ["echo_echo"]);
}
