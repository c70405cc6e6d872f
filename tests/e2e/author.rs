//! The author tooling: `wharf new`, `wharf build` and `wharf dev`. For every
//! language a project is made in a temporary folder outside the workspace,
//! built with the real toolchain, served, listed and called, as a new author
//! would; then the bad inputs, each with its exact error.
//!
//! Toolchains: `cargo xtask test` passes the ones `cargo xtask examples`
//! already installed (`WHARF_JCO`, `WHARF_TSC`, `WHARF_COMPONENTIZE_PY`,
//! `WHARF_GO`); without them `wharf build` looks where it always does (the
//! project, its cache, `PATH`). Rust projects build into
//! `target/author-e2e` (`CARGO_TARGET_DIR`), so reruns reuse the dependencies.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Instant;

use serde_json::{Value, json};

use crate::harness::*;

/// The project every test makes.
const NAME: &str = "greeter";

fn wharf() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wharf"));
    cmd.env("WHARF_CACHE_DIR", cache_dir())
        .env(
            "CARGO_TARGET_DIR",
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/author-e2e"),
        )
        // Errors are compared exactly: no backtraces under them.
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .stdin(Stdio::null());
    cmd
}

fn output(cmd: &mut Command) -> Output {
    cmd.output().expect("run wharf")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `wharf new greeter --lang LANG` in a fresh temporary folder.
fn new_project(lang: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("temp dir");
    let out = output(
        wharf()
            .args(["new", NAME, "--lang", lang])
            .current_dir(tmp.path()),
    );
    assert!(out.status.success(), "wharf new: {}", text(&out.stderr));
    let project = tmp.path().join(NAME);
    assert_eq!(
        text(&out.stdout),
        format!(
            "created {NAME} ({lang} project, {} files)\n\
             next: cd {NAME} && wharf build   (see README.md)\n",
            files_under(&project)
        )
    );
    (tmp, project)
}

fn files_under(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            if e.path().is_dir() {
                files_under(&e.path())
            } else {
                1
            }
        })
        .sum()
}

/// `wharf build` in the project; returns the component.
fn build(project: &Path) -> PathBuf {
    let started = Instant::now();
    let out = output(wharf().arg("build").current_dir(project));
    assert!(
        out.status.success(),
        "wharf build failed:\n{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let component = project.join(format!("{NAME}.wasm"));
    assert!(
        text(&out.stdout).starts_with(&format!("built {} (", component.display())),
        "{}",
        text(&out.stdout)
    );
    eprintln!(
        "author: built {} in {:.1} s",
        project.display(),
        started.elapsed().as_secs_f64()
    );
    component
}

/// Serves the component alone; it lists `greeter_greet`, described, and
/// greets through a `tools/call` with `arguments`.
fn serve_list_and_call(component: &Path, arguments: Value) {
    let plugins = tempfile::tempdir().expect("temp dir");
    std::fs::copy(component, plugins.path().join(format!("{NAME}.wasm"))).unwrap();
    let mut wharf = Wharf::start_in(plugins.path(), &[]);
    let response = wharf.modern(1, "tools/list", json!({}));
    let tools = result_of(&response)["tools"].as_array().unwrap().clone();
    assert_eq!(tools.len(), 1, "{response}");
    assert_eq!(tools[0]["name"], "greeter_greet", "{response}");
    assert!(
        tools[0]["description"]
            .as_str()
            .is_some_and(|d| d.contains("Greets someone by name")),
        "{response}"
    );
    assert_eq!(
        tools[0]["inputSchema"]["properties"]["name"]["type"], "string",
        "{response}"
    );
    let result = call(&mut wharf, 2, "greeter_greet", arguments);
    assert_ne!(result["isError"], true, "{result}");
    assert_eq!(first_text(&result), "Hello, Ada!", "{result}");
}

fn full_path(lang: &str) {
    let (_tmp, project) = new_project(lang);
    let component = build(&project);
    // The TypeScript and Python templates show their SDK's optional,
    // defaulted arguments: the exclamation mark is asked for.
    let arguments = match lang {
        "typescript" | "python" => json!({"name": "Ada", "excited": true}),
        _ => json!({"name": "Ada"}),
    };
    serve_list_and_call(&component, arguments);
}

#[test]
fn rust_new_build_serve_call() {
    full_path("rust");
}

#[test]
fn typescript_new_build_serve_call() {
    full_path("typescript");
}

#[test]
fn javascript_new_build_serve_call() {
    full_path("javascript");
}

#[test]
fn python_new_build_serve_call() {
    full_path("python");
}

#[test]
fn go_new_build_serve_call() {
    full_path("go");
}

#[test]
fn c_new_build_serve_call() {
    full_path("c");
}

/// `wharf dev`: the first build lands in the plugin folder with its tool list;
/// a save rebuilds it; a broken save prints the compiler's failure and leaves
/// the working component in place.
#[test]
fn dev_rebuilds_on_save() {
    let (_tmp, project) = new_project("c");
    let plugins = tempfile::tempdir().unwrap();
    let (mut child, next) = start_dev(&project, plugins.path(), &[]);
    next("wharf dev: watching");
    let dest = plugins.path().join(format!("{NAME}.wasm"));
    let first = next("wharf dev: built");
    assert!(
        first.ends_with(&format!("-> {}; tools: greeter_greet", dest.display())),
        "{first}"
    );
    let greet = |expected: &str| {
        let out = output(wharf().args(["call"]).arg(&dest).args([
            "greet",
            "--args",
            r#"{"name":"Ada"}"#,
        ]));
        // The text, then the structured result (`{"result": ...}`).
        let stdout = text(&out.stdout);
        assert!(
            stdout.starts_with(expected),
            "{stdout}{}",
            text(&out.stderr)
        );
    };
    greet("Hello, Ada!");

    let source = project.join("src/greet.c");
    let code = std::fs::read_to_string(&source).unwrap();
    std::fs::write(&source, code.replace("\"Hello, \"", "\"Hi, \"")).unwrap();
    next("wharf dev: built");
    greet("Hi, Ada!");

    std::fs::write(&source, "this is not C\n").unwrap();
    let failed = next("wharf dev: build failed:");
    assert!(failed.contains("clang-19"), "{failed}");
    greet("Hi, Ada!");

    child.kill().unwrap();
    child.wait().unwrap();
}

/// `wharf dev PROJECT --plugins PLUGINS FLAGS...`, and a function returning
/// its next stdout line starting with a prefix (panicking after PATIENCE).
fn start_dev(
    project: &Path,
    plugins: &Path,
    flags: &[&str],
) -> (std::process::Child, impl Fn(&str) -> String + use<>) {
    let mut child = wharf()
        .arg("dev")
        .arg(project)
        .arg("--plugins")
        .arg(plugins)
        .args(flags)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let next = move |prefix: &str| -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no `{prefix}` line from wharf dev"));
            if line.starts_with(prefix) {
                return line;
            }
        }
    };
    (child, next)
}

/// `wharf dev --serve`: prints the client snippet, serves the plugin folder
/// over HTTP (the new plugin is listed and called there), and the server
/// ends with `wharf dev`.
#[test]
fn dev_serve_serves_the_plugin_folder() {
    let (_tmp, project) = new_project("c");
    let plugins = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let listen = format!("127.0.0.1:{port}");
    let (mut child, next) = start_dev(&project, plugins.path(), &["--serve", "--listen", &listen]);
    next(&format!(
        "wharf dev: serving {} at http://{listen}/mcp",
        plugins.path().display()
    ));
    next(&format!("      \"url\": \"http://{listen}/mcp\""));
    next("wharf dev: built");
    let addr: std::net::SocketAddr = listen.parse().unwrap();
    let list =
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": modern(json!({}))});
    let headers = [
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "tools/list"),
    ];
    let deadline = Instant::now() + PATIENCE;
    loop {
        let listed = std::net::TcpStream::connect(addr).is_ok()
            && crate::http_client::post(addr, &headers, &list).json()["result"]["tools"][0]["name"]
                == "greeter_greet";
        if listed {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the served folder never listed greeter_greet"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let call_body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": modern(json!({"name": "greeter_greet", "arguments": {"name": "Ada"}}))});
    let answer = crate::http_client::post(
        addr,
        &[
            ("MCP-Protocol-Version", MODERN),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "greeter_greet"),
        ],
        &call_body,
    )
    .json();
    assert_eq!(
        answer["result"]["content"][0]["text"], "Hello, Ada!",
        "{answer}"
    );

    child.kill().unwrap();
    child.wait().unwrap();
    let deadline = Instant::now() + PATIENCE;
    while std::net::TcpStream::connect(addr).is_ok() {
        assert!(
            Instant::now() < deadline,
            "the child server outlived wharf dev"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// Runs a wharf command that must fail; returns its stderr.
fn failure(cmd: &mut Command) -> String {
    let out = output(cmd);
    assert!(!out.status.success(), "should fail: {}", text(&out.stdout));
    text(&out.stderr)
}

#[test]
fn an_unknown_language_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let stderr = failure(
        wharf()
            .args(["new", NAME, "--lang", "cobol"])
            .current_dir(tmp.path()),
    );
    assert!(
        stderr.starts_with(
            "error: invalid value 'cobol' for '--lang <LANG>'\n  \
             [possible values: rust, typescript, javascript, python, go, c]\n"
        ),
        "{stderr}"
    );
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}

#[test]
fn an_invalid_name_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let stderr = failure(
        wharf()
            .args(["new", "My_Tools", "--lang", "rust"])
            .current_dir(tmp.path()),
    );
    assert_eq!(
        stderr,
        "Error: invalid project name `My_Tools`: use lower-case letters, digits and single \
         hyphens, starting with a letter and each part after a hyphen too (like `my-tools`)\n"
    );
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}

#[test]
fn a_non_empty_folder_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join(NAME)).unwrap();
    std::fs::write(tmp.path().join(NAME).join("notes.txt"), "mine").unwrap();
    let stderr = failure(
        wharf()
            .args(["new", NAME, "--lang", "go"])
            .current_dir(tmp.path()),
    );
    assert_eq!(
        stderr,
        "Error: greeter already exists and is not empty: choose another name, or remove it\n"
    );
    assert_eq!(std::fs::read_dir(tmp.path().join(NAME)).unwrap().count(), 1);
}

#[test]
fn building_a_folder_without_a_project_says_what_is_expected() {
    let tmp = tempfile::tempdir().unwrap();
    let stderr = failure(wharf().arg("build").arg(tmp.path()));
    assert_eq!(
        stderr,
        format!(
            "Error: no plugin project in {}: expected Cargo.toml (rust), package.json \
             (typescript, javascript), pyproject.toml (python), go.mod (go) or src/*.c \
             beside wit/ (c); start one with `wharf new NAME --lang LANG`\n",
            tmp.path().display()
        )
    );
}

#[test]
fn a_missing_toolchain_names_what_to_install() {
    let (tmp, project) = new_project("python");
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let stderr = failure(
        wharf()
            .arg("build")
            .current_dir(&project)
            .env_remove("WHARF_COMPONENTIZE_PY")
            .env("WHARF_TOOLCHAIN_DIR", &empty)
            .env("PATH", &empty),
    );
    assert_eq!(
        stderr,
        "Error: componentize-py is missing: run `pip install componentize-py==0.25.1`, \
         or `wharf build --install-toolchain`\n"
    );
    assert!(!project.join(format!("{NAME}.wasm")).exists());
}
