//! Hot reload: the folder changes while Wharf runs; clients are told once per
//! real change, through `subscriptions/listen` and legacy `list_changed`.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::*;

/// How long to wait to be sure nothing (more) is announced.
const QUIET: Duration = Duration::from_millis(1500);

/// A client on each era, watching the same folder.
struct Clients {
    modern: Wharf,
    legacy: Wharf,
}

impl Clients {
    fn start(dir: &Path) -> Self {
        let mut modern = Wharf::start_in(dir, &[]);
        modern.listen("L1");
        let mut legacy = Wharf::start_in(dir, &[]);
        legacy.initialize("2025-06-18");
        // The legacy handshake is done once a request round-trips.
        result_of(&legacy.request(json!("warm"), "tools/list", json!({})));
        Self { modern, legacy }
    }

    /// Waits for one list_changed on each client, then makes sure no second one
    /// follows. (How fast it comes is measured by `cargo xtask bench`, not here.)
    fn expect_one_change(&mut self) {
        let note = self.modern.next_matching(is_modern_change);
        assert_eq!(
            note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            "L1"
        );
        self.legacy.next_matching(is_legacy_change);
        self.expect_no_change();
    }

    fn expect_no_change(&mut self) {
        for wharf in [&mut self.modern, &mut self.legacy] {
            let extra: Vec<Value> = wharf
                .drain(QUIET)
                .into_iter()
                .filter(|m| m["method"] == "notifications/tools/list_changed")
                .collect();
            assert!(extra.is_empty(), "unexpected notifications: {extra:?}");
        }
    }

    fn tool_names(&mut self) -> Vec<String> {
        let response = self.modern.modern(900, "tools/list", json!({}));
        result_of(&response)["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    }
}

fn is_modern_change(message: &Value) -> bool {
    message["method"] == "notifications/tools/list_changed"
        && message["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"].is_string()
}

fn is_legacy_change(message: &Value) -> bool {
    message["method"] == "notifications/tools/list_changed"
}

/// Writes `bytes` to a temporary name, then renames it over `to`.
pub(crate) fn replace_atomically(to: &Path, bytes: &[u8]) {
    let temp = to.with_extension("partial");
    std::fs::write(&temp, bytes).unwrap();
    std::fs::rename(&temp, to).unwrap();
}

pub(crate) fn read_plugin(name: &str) -> Vec<u8> {
    std::fs::read(plugin_file(name)).unwrap()
}

/// The same component with a custom section appended: new bytes, same tools.
fn with_custom_section(mut bytes: Vec<u8>) -> Vec<u8> {
    bytes.extend_from_slice(&[0x00, 0x04, 0x03, b'w', b'h', b'f']);
    bytes
}

#[test]
fn adding_and_deleting_a_component_is_announced_once() {
    let dir = plugin_dir(&["echo"]);
    let mut clients = Clients::start(dir.path());
    replace_atomically(&dir.path().join("calc.wasm"), &read_plugin("calc"));
    clients.expect_one_change();
    assert!(clients.tool_names().contains(&"calc_add".to_string()));
    let response = clients.modern.modern(
        1,
        "tools/call",
        json!({"name": "calc_add", "arguments": {"a": 1, "b": 2}}),
    );
    assert_eq!(
        result_of(&response)["structuredContent"],
        json!({"result": 3.0})
    );

    std::fs::remove_file(dir.path().join("calc.wasm")).unwrap();
    clients.expect_one_change();
    assert_eq!(clients.tool_names(), ["echo_echo"]);
    let response = clients.modern.modern(
        2,
        "tools/call",
        json!({"name": "calc_add", "arguments": {"a": 1, "b": 2}}),
    );
    assert_eq!(error_of(&response)["code"], -32602);
}

#[test]
fn an_atomic_replace_swaps_the_version() {
    let dir = plugin_dir(&["echo"]);
    let mut clients = Clients::start(dir.path());
    replace_atomically(&dir.path().join("echo.wasm"), &read_plugin("textstats"));
    clients.expect_one_change();
    assert_eq!(clients.tool_names(), ["echo_analyze"]);
}

#[test]
fn rewriting_identical_bytes_is_silent() {
    let dir = plugin_dir(&["echo"]);
    let mut clients = Clients::start(dir.path());
    let echo = read_plugin("echo");
    std::fs::write(dir.path().join("echo.wasm"), &echo).unwrap();
    replace_atomically(&dir.path().join("echo.wasm"), &echo);
    clients.expect_no_change();
    // New bytes that offer the same tools: swapped, but the listing is the same.
    replace_atomically(&dir.path().join("echo.wasm"), &with_custom_section(echo));
    clients.expect_no_change();
    clients.modern.wait_for_log("plugins reloaded");
}

#[test]
fn a_slow_write_loads_once_complete() {
    let dir = plugin_dir(&["echo"]);
    let mut clients = Clients::start(dir.path());
    let calc = read_plugin("calc");
    let path = dir.path().join("calc.wasm");
    {
        use std::io::Write;
        let mut file = std::fs::File::create(&path).unwrap();
        for chunk in calc.chunks(calc.len() / 10 + 1) {
            file.write_all(chunk).unwrap();
            file.flush().unwrap();
            std::thread::sleep(Duration::from_millis(80));
        }
    }
    clients.expect_one_change();
    assert!(clients.tool_names().contains(&"calc_evaluate".to_string()));
    let log = clients.modern.stderr();
    assert!(
        !log.contains("plugin not loaded"),
        "a partial file was loaded:\n{log}"
    );
}

#[test]
fn a_corrupt_file_leaves_the_previous_version_serving() {
    let dir = plugin_dir(&["echo"]);
    let mut clients = Clients::start(dir.path());
    let mut broken = read_plugin("echo");
    broken.truncate(broken.len() / 2);
    replace_atomically(&dir.path().join("echo.wasm"), &broken);
    clients.expect_no_change();
    clients
        .modern
        .wait_for_log("the previous version keeps serving");
    let response = clients.modern.modern(
        1,
        "tools/call",
        json!({"name": "echo_echo", "arguments": {"text": "still here"}}),
    );
    assert_eq!(first_text(result_of(&response)), "still here");

    // Fixing the file brings it back without a notification (same tools).
    replace_atomically(&dir.path().join("echo.wasm"), &read_plugin("echo"));
    clients.expect_no_change();
}

#[test]
fn calls_keep_succeeding_through_swaps() {
    let dir = plugin_dir(&["echo"]);
    let mut wharf = Wharf::start_in(dir.path(), &[]);
    let echo = read_plugin("echo");
    let variant = with_custom_section(echo.clone());
    let path = dir.path().join("echo.wasm");
    let writer = std::thread::spawn(move || {
        for round in 0..10 {
            let bytes = if round % 2 == 0 { &variant } else { &echo };
            replace_atomically(&path, bytes);
            std::thread::sleep(Duration::from_millis(60));
        }
    });
    let mut id = 0;
    while !writer.is_finished() {
        id += 1;
        let response = wharf.modern(
            id,
            "tools/call",
            json!({"name": "echo_echo", "arguments": {"text": "x"}}),
        );
        assert_eq!(first_text(result_of(&response)), "x", "call {id} failed");
    }
    writer.join().unwrap();
    assert!(id > 0, "no call ran during the swaps");
    wharf.wait_for_log("plugins reloaded");
}

#[test]
fn a_restart_takes_compiled_components_from_the_cache() {
    let cache = tempfile::tempdir().unwrap();
    let dir = plugin_dir(&["calc"]);
    let flags = ["--cache-dir", cache.path().to_str().unwrap()];
    let mut first = Wharf::start_in(dir.path(), &flags);
    result_of(&first.modern(1, "tools/list", json!({})));
    assert!(!first.stderr().contains("taken from the cache"));
    // Served from Winch's compile first; Cranelift's goes to the cache.
    first.wait_for_log("optimised code in place plugin=calc");
    first.close();
    let mut second = Wharf::start_in(dir.path(), &flags);
    result_of(&second.modern(1, "tools/list", json!({})));
    assert!(
        second
            .stderr()
            .contains("compiled component taken from the cache")
    );

    let mut uncached = Wharf::start_in(dir.path(), &["--no-cache"]);
    result_of(&uncached.modern(1, "tools/list", json!({})));
    assert!(
        uncached.stderr().contains("cache=off"),
        "{}",
        uncached.stderr()
    );
    assert!(!uncached.stderr().contains("taken from the cache"));
}

#[test]
fn a_corrupted_cache_entry_is_dropped_and_recompiled_at_start_and_on_reload() {
    let cache = tempfile::tempdir().unwrap();
    let dir = plugin_dir(&["calc"]);
    let flags = ["--cache-dir", cache.path().to_str().unwrap()];
    let first = Wharf::start_in(dir.path(), &flags);
    first.wait_for_log("optimised code in place plugin=calc");
    first.close();

    assert_eq!(corrupt_entries(cache.path()), 1);
    let mut second = Wharf::start_in(dir.path(), &flags);
    assert_eq!(add(&mut second, 1), json!({"result": 5.5}));
    assert!(
        second
            .stderr()
            .contains("dropping a bad compile-cache entry"),
        "{}",
        second.stderr()
    );
    assert!(!second.stderr().contains("taken from the cache"));
    // Compiled afresh and cached again, good this time.
    second.wait_for_log("optimised code in place plugin=calc");

    // On hot reload of a running server: the file goes, its cached code rots,
    // and the file comes back.
    std::fs::remove_file(dir.path().join("calc.wasm")).unwrap();
    second.wait_for_log("plugins reloaded");
    assert_eq!(corrupt_entries(cache.path()), 1);
    replace_atomically(&dir.path().join("calc.wasm"), &read_plugin("calc"));
    let dropped = |w: &Wharf| {
        w.stderr()
            .matches("dropping a bad compile-cache entry")
            .count()
    };
    let deadline = std::time::Instant::now() + PATIENCE;
    while dropped(&second) < 2 {
        assert!(std::time::Instant::now() < deadline, "{}", second.stderr());
        std::thread::sleep(Duration::from_millis(20));
    }
    while second.stderr().matches("plugins reloaded").count() < 2 {
        assert!(std::time::Instant::now() < deadline, "{}", second.stderr());
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(add(&mut second, 2), json!({"result": 5.5}));
    assert!(second.is_running());
}

/// Overwrites 16 bytes past the first eighth of every file under `dir` (the
/// damage that crashed a server that trusted its cache), and counts the files.
fn corrupt_entries(dir: &Path) -> usize {
    let mut count = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            count += corrupt_entries(&path);
            continue;
        }
        let mut bytes = std::fs::read(&path).unwrap();
        let at = bytes.len() / 8 + 1;
        for (i, byte) in bytes[at..at + 16].iter_mut().enumerate() {
            *byte = (i as u8).wrapping_mul(37) ^ 0xa5;
        }
        std::fs::write(&path, bytes).unwrap();
        count += 1;
    }
    count
}

/// Files under `dir`, at any depth.
fn files_under(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .map(|path| if path.is_dir() { files_under(&path) } else { 1 })
        .sum()
}

fn add(wharf: &mut Wharf, id: i64) -> Value {
    let response = wharf.modern(
        id,
        "tools/call",
        json!({"name": "calc_add", "arguments": {"a": 2, "b": 3.5}}),
    );
    result_of(&response)["structuredContent"].clone()
}

#[test]
fn a_new_component_answers_from_its_quick_compile_then_from_the_optimised_one() {
    let cache = tempfile::tempdir().unwrap();
    let dir = plugin_dir(&["calc"]);
    let mut wharf = Wharf::start_in(dir.path(), &["--cache-dir", cache.path().to_str().unwrap()]);
    assert_eq!(add(&mut wharf, 1), json!({"result": 5.5}));
    wharf.wait_for_log("optimised code in place plugin=calc");
    assert_eq!(
        files_under(cache.path()),
        1,
        "Cranelift's compile is cached"
    );
    assert_eq!(add(&mut wharf, 2), json!({"result": 5.5}));
}

#[test]
fn without_quick_compiles_a_component_is_optimised_before_it_loads() {
    let cache = tempfile::tempdir().unwrap();
    let dir = plugin_dir(&["calc"]);
    let mut wharf = Wharf::start_in(
        dir.path(),
        &[
            "--cache-dir",
            cache.path().to_str().unwrap(),
            "--no-quick-compile",
        ],
    );
    result_of(&wharf.modern(1, "tools/list", json!({})));
    assert_eq!(files_under(cache.path()), 1, "compiled and cached at load");
    assert_eq!(add(&mut wharf, 2), json!({"result": 5.5}));
    assert!(!wharf.stderr().contains("optimised code in place"));
}

#[test]
fn editing_a_manifest_reloads_its_plugin() {
    let dir = plugin_dir(&["misbehave"]);
    let mut wharf = Wharf::start_in(dir.path(), &[]);
    let config = |wharf: &mut Wharf, id: i64| -> String {
        let response = wharf.modern(
            id,
            "tools/call",
            json!({"name": "misbehave_config", "arguments": {"key": "greeting"}}),
        );
        first_text(result_of(&response)).to_string()
    };
    assert_eq!(config(&mut wharf, 1), "(none)");

    let manifest = dir.path().join("misbehave.toml");
    let temp = dir.path().join("misbehave.toml.partial");
    std::fs::write(&temp, "[config]\ngreeting = \"hello\"\n").unwrap();
    std::fs::rename(&temp, &manifest).unwrap();
    wharf.wait_for_log("loaded=[\"misbehave\"]");
    assert_eq!(config(&mut wharf, 2), "hello");

    // A broken manifest keeps the previous version; removing it drops the grant.
    std::fs::write(&manifest, "[config\n").unwrap();
    wharf.wait_for_log("the previous version keeps serving");
    assert_eq!(config(&mut wharf, 3), "hello");
    std::fs::remove_file(&manifest).unwrap();
    let deadline = std::time::Instant::now() + PATIENCE;
    while config(&mut wharf, 4) != "(none)" {
        assert!(
            std::time::Instant::now() < deadline,
            "the grant outlived its manifest"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_fuel_limit_comes_and_goes_with_its_manifest() {
    // Plugins without a fuel limit run code that counts none: adding a limit
    // must recompile the plugin with metering, and dropping it must not leave
    // the limit behind.
    let dir = plugin_dir(&["misbehave"]);
    let mut wharf = Wharf::start_in(dir.path(), &["--timeout-ms", "300"]);
    let spin = |wharf: &mut Wharf, id: i64| -> String {
        first_text(&call(wharf, id, "misbehave_spin", json!({}))).to_string()
    };
    let timed_out =
        "Tool `misbehave_spin` failed: the call was stopped after its time limit of 300 ms";
    let out_of_fuel = "Tool `misbehave_spin` failed: the plugin used up its fuel limit of 5000000 units and was stopped";
    assert_eq!(spin(&mut wharf, 1), timed_out);

    let manifest = dir.path().join("misbehave.toml");
    let temp = dir.path().join("misbehave.toml.partial");
    std::fs::write(&temp, "[limits]\nfuel = 5_000_000\n").unwrap();
    std::fs::rename(&temp, &manifest).unwrap();
    wharf.wait_for_log("loaded=[\"misbehave\"]");
    assert_eq!(spin(&mut wharf, 2), out_of_fuel);

    std::fs::remove_file(&manifest).unwrap();
    let deadline = std::time::Instant::now() + PATIENCE;
    let mut id = 3;
    loop {
        let text = spin(&mut wharf, id);
        if text == timed_out {
            break;
        }
        assert_eq!(text, out_of_fuel);
        assert!(
            std::time::Instant::now() < deadline,
            "the fuel limit outlived its manifest"
        );
        id += 1;
    }
}
