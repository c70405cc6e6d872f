//! Chaos on what Wharf keeps: the compile cache truncated, read-only or on a
//! full file system, and the plugin folder deleted, moved, swapped for a
//! symlink, holding symlink loops or flooded with files; a manifest changed
//! while a call runs. Each ends in a clear log line and a server that keeps
//! serving what it can: never a crash, never a wrong plugin.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::*;
use crate::reload::{read_plugin, replace_atomically};

/// Waits until `done` holds, or fails naming `what` with the server's log.
fn wait_until(wharf: &Wharf, what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !done() {
        assert!(
            Instant::now() < deadline,
            "never {what}:\n{}",
            wharf.stderr()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until the log holds `needle` at least `times` times.
fn wait_for_logs(wharf: &Wharf, needle: &str, times: usize) {
    wait_until(wharf, &format!("logged {needle:?} {times} times"), || {
        wharf.stderr().matches(needle).count() >= times
    });
}

/// Every tool name the server lists, page after page.
fn all_tools(wharf: &mut Wharf, id: &mut i64) -> Vec<String> {
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        *id += 1;
        let params = match &cursor {
            Some(cursor) => json!({"cursor": cursor}),
            None => json!({}),
        };
        let response = wharf.modern(*id, "tools/list", params);
        let result = result_of(&response);
        names.extend(
            result["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_string()),
        );
        match result["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => return names,
        }
    }
}

fn add(wharf: &mut Wharf, id: i64, tool: &str) -> Value {
    call(wharf, id, tool, json!({"a": 2, "b": 3}))["structuredContent"].clone()
}

/// Copies the named plugins into `dir` (made if missing).
fn fill(dir: &Path, plugins: &[&str]) {
    std::fs::create_dir_all(dir).unwrap();
    for name in plugins {
        replace_atomically(&dir.join(format!("{name}.wasm")), &read_plugin(name));
    }
}

// The plugin folder.

#[test]
fn a_folder_deleted_and_made_again_is_watched_again() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("plugins");
    fill(&dir, &["echo"]);
    let mut wharf = Wharf::start_in(&dir, &[]);
    std::fs::remove_dir_all(&dir).unwrap();
    wharf.wait_for_log("the plugin folder is gone");
    // What was loaded keeps serving while no folder is there.
    still_serving(&mut wharf, 1);

    fill(&dir, &["echo", "wat-add"]);
    wharf.wait_for_log("a plugin folder is there again");
    wait_for_logs(&wharf, "plugins reloaded", 1);
    assert_eq!(add(&mut wharf, 2, "wat-add_add"), json!({"result": 5}));
    // The new folder is watched: a later change is seen.
    std::fs::remove_file(dir.join("wat-add.wasm")).unwrap();
    wait_for_logs(&wharf, "plugins reloaded", 2);
    let mut id = 3;
    assert_eq!(all_tools(&mut wharf, &mut id), ["echo_echo"]);
    assert_eq!(
        wharf.stderr().matches("the plugin folder is gone").count(),
        1,
        "said once"
    );
    assert!(wharf.is_running());
}

#[test]
fn a_folder_moved_away_and_replaced_serves_the_new_one_only() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("plugins");
    let old = root.path().join("plugins.old");
    let new = root.path().join("plugins.new");
    fill(&dir, &["echo", "calc"]);
    fill(&new, &["echo", "wat-add"]);
    let mut wharf = Wharf::start_in(&dir, &[]);
    wharf.listen("L");
    std::fs::rename(&dir, &old).unwrap();
    std::fs::rename(&new, &dir).unwrap();
    wharf.next_matching(|m| m["method"] == "notifications/tools/list_changed");
    // Files younger than the settling age may come in a second step.
    let mut id = 1;
    let deadline = Instant::now() + PATIENCE;
    while all_tools(&mut wharf, &mut id) != ["echo_echo", "wat-add_add"] {
        assert!(Instant::now() < deadline, "{}", wharf.stderr());
        std::thread::sleep(Duration::from_millis(20));
    }

    // The folder moved away is not watched: what lands there is not loaded.
    fill(&old, &["textstats"]);
    // The one in place is.
    fill(&dir, &["units"]);
    wait_until(&wharf, "loaded units", || {
        wharf.stderr().contains("plugin=\"units\"")
    });
    std::thread::sleep(Duration::from_millis(500));
    let tools = all_tools(&mut wharf, &mut id);
    assert!(tools.iter().any(|t| t.starts_with("units_")), "{tools:?}");
    assert!(
        !tools
            .iter()
            .any(|t| t.starts_with("textstats_") || t.starts_with("calc_")),
        "a plugin of the old folder is served: {tools:?}"
    );
    still_serving(&mut wharf, 100);
}

#[test]
fn a_folder_replaced_by_a_symlink_serves_its_target() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("plugins");
    let (a, b) = (root.path().join("a"), root.path().join("b"));
    fill(&dir, &["echo"]);
    fill(&a, &["echo", "wat-add"]);
    fill(&b, &["echo", "calc"]);
    let mut wharf = Wharf::start_in(&dir, &[]);
    std::fs::remove_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(&a, &dir).unwrap();
    wait_until(&wharf, "loaded wat-add", || {
        wharf.stderr().contains("plugin=\"wat-add\"")
    });
    assert_eq!(add(&mut wharf, 1, "wat-add_add"), json!({"result": 5}));

    // The link swapped, atomically, to another folder: that one is served.
    let temp = root.path().join("plugins.link");
    std::os::unix::fs::symlink(&b, &temp).unwrap();
    std::fs::rename(&temp, &dir).unwrap();
    wait_until(&wharf, "loaded calc", || {
        wharf.stderr().contains("plugin=\"calc\"")
    });
    let mut id = 2;
    let deadline = Instant::now() + PATIENCE;
    while all_tools(&mut wharf, &mut id).contains(&"wat-add_add".to_string()) {
        assert!(Instant::now() < deadline, "wat-add outlived its folder");
        std::thread::sleep(Duration::from_millis(20));
    }
    let response = wharf.modern(
        1000,
        "tools/call",
        json!({"name": "calc_add", "arguments": {"a": 1, "b": 2}}),
    );
    assert_eq!(
        result_of(&response)["structuredContent"],
        json!({"result": 3.0})
    );
    still_serving(&mut wharf, 1001);
}

#[test]
fn symlink_loops_in_the_folder_are_reported_once_and_skipped() {
    let dir = plugin_dir(&["echo"]);
    let path = |name: &str| dir.path().join(name);
    let mut wharf = Wharf::start_in(dir.path(), &[]);
    std::os::unix::fs::symlink(path("self.wasm"), path("self.wasm")).unwrap();
    std::os::unix::fs::symlink(path("pong.wasm"), path("ping.wasm")).unwrap();
    std::os::unix::fs::symlink(path("ping.wasm"), path("pong.wasm")).unwrap();
    std::os::unix::fs::symlink(dir.path(), path("folder.wasm")).unwrap();
    std::os::unix::fs::symlink(dir.path(), path("down")).unwrap();
    let loop_line = "plugin not loaded: it is a symlink that leads to no file: Too many levels of symbolic links";
    wait_for_logs(&wharf, loop_line, 3);
    wharf.wait_for_log("plugin not loaded: it is not a regular file");
    // Another change rescans the folder: the loops are not reported again.
    fill(dir.path(), &["wat-add"]);
    wait_for_logs(&wharf, "plugins reloaded", 1);
    std::thread::sleep(Duration::from_millis(300));
    let log = wharf.stderr();
    assert_eq!(log.matches(loop_line).count(), 3, "{log}");
    assert_eq!(log.matches("it is not a regular file").count(), 1, "{log}");
    let mut id = 0;
    assert_eq!(all_tools(&mut wharf, &mut id), ["echo_echo", "wat-add_add"]);
    still_serving(&mut wharf, 100);
}

/// How many copies land at once in the flood test.
const FLOOD: usize = 2000;

#[test]
fn two_thousand_files_at_once_all_load_and_the_server_stays_responsive() {
    let dir = plugin_dir(&["echo"]);
    let mut wharf = Wharf::start_in(dir.path(), &[]);
    let bytes = read_plugin("wat-add");
    let started = Instant::now();
    let writer = {
        let dir = dir.path().to_path_buf();
        std::thread::spawn(move || {
            for n in 0..FLOOD {
                std::fs::write(dir.join(format!("flood{n:04}.wasm")), &bytes).unwrap();
            }
        })
    };
    // Calls keep being answered while the files land and load.
    let mut slowest = Duration::ZERO;
    let mut id = 0;
    let mut listed = 0;
    while listed < FLOOD + 1 {
        id += 1;
        let call_started = Instant::now();
        still_serving(&mut wharf, id);
        slowest = slowest.max(call_started.elapsed());
        listed = all_tools(&mut wharf, &mut id).len();
        assert!(
            started.elapsed() < PATIENCE,
            "only {listed} tools listed after {PATIENCE:?}:\n{}",
            wharf.stderr()
        );
    }
    let converged = started.elapsed();
    writer.join().unwrap();
    let tools = all_tools(&mut wharf, &mut id);
    assert_eq!(tools.len(), FLOOD + 1);
    assert_eq!(tools[1], "flood0000_add");
    let result = call(&mut wharf, id + 1, "flood1999_add", json!({"a": 2, "b": 3}));
    assert_eq!(result["structuredContent"], json!({"result": 5}));
    assert!(!wharf.stderr().contains("plugin not loaded"));
    // Past the harness's capture: the figure is worth seeing on every run.
    #[allow(clippy::explicit_write)]
    writeln!(
        std::io::stderr(),
        "chaos: {FLOOD} files listed {converged:?} after the first was written; slowest call meanwhile {slowest:?}"
    )
    .unwrap();
    assert!(
        slowest < Duration::from_secs(5),
        "a call took {slowest:?} during the flood"
    );
}

#[test]
fn a_manifest_changed_mid_call_applies_from_the_next_call() {
    let dir = plugin_dir(&["misbehave"]);
    let manifest = dir.path().join("misbehave.toml");
    std::fs::write(&manifest, "[limits]\ntimeout-ms = 2000\n").unwrap();
    let mut wharf = Wharf::start_in(dir.path(), &[]);
    send_call(&mut wharf, 1, "misbehave_spin", json!({}));
    std::thread::sleep(Duration::from_millis(300));
    replace_atomically(&manifest, b"[limits]\ntimeout-ms = 400\n");
    wharf.wait_for_log("loaded=[\"misbehave\"]");
    let stopped = |limit: u64| {
        format!(
            "Tool `misbehave_spin` failed: the call was stopped after its time limit of {limit} ms"
        )
    };
    let response = wharf.response(&json!(1));
    assert_eq!(first_text(result_of(&response)), stopped(2000));
    assert_eq!(
        first_text(&call(&mut wharf, 2, "misbehave_spin", json!({}))),
        stopped(400)
    );
}

#[test]
fn a_manifest_still_being_written_is_not_read_half_way() {
    let dir = plugin_dir(&["misbehave"]);
    let manifest = dir.path().join("misbehave.toml");
    let mut wharf = Wharf::start_in(dir.path(), &[]);
    // Past the age at which the component, copied just now, counts as complete.
    std::thread::sleep(Duration::from_millis(400));
    // Written in two pieces; the first is not a manifest on its own.
    let mut file = std::fs::File::create(&manifest).unwrap();
    file.write_all(b"[config]\ngreeting = \"hel").unwrap();
    file.flush().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    file.write_all(b"lo\"\n").unwrap();
    drop(file);
    let deadline = Instant::now() + PATIENCE;
    let mut id = 0;
    loop {
        id += 1;
        let result = call(
            &mut wharf,
            id,
            "misbehave_config",
            json!({"key": "greeting"}),
        );
        if first_text(&result) == "hello" {
            break;
        }
        assert!(Instant::now() < deadline, "{}", wharf.stderr());
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !wharf.stderr().contains("invalid manifest"),
        "a half-written manifest was read:\n{}",
        wharf.stderr()
    );
}

// The compile cache.

/// The files under `dir`, at any depth.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .map(|entry| entry.unwrap().path())
        .flat_map(|path| {
            if path.is_dir() {
                files_under(&path)
            } else {
                vec![path]
            }
        })
        .collect()
}

/// Serves echo with its compiled code cached in `cache`, until the optimised
/// code is there.
fn warm(dir: &Path, cache: &Path) {
    let wharf = Wharf::start_in(dir, &["--cache-dir", cache.to_str().unwrap()]);
    wharf.wait_for_log("optimised code in place plugin=echo");
    wharf.close();
}

#[test]
fn a_truncated_cache_entry_is_dropped_and_compiled_afresh() {
    let cache = tempfile::tempdir().unwrap();
    let dir = plugin_dir(&["echo"]);
    let flags = ["--cache-dir", cache.path().to_str().unwrap()];
    for keep in [|len: u64| len / 2, |_| 0] {
        warm(dir.path(), cache.path());
        let entries = files_under(cache.path());
        assert_eq!(entries.len(), 1, "{entries:?}");
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(&entries[0])
            .unwrap();
        file.set_len(keep(file.metadata().unwrap().len())).unwrap();
        let mut wharf = Wharf::start_in(dir.path(), &flags);
        still_serving(&mut wharf, 1);
        wharf.wait_for_log("dropping a bad compile-cache entry");
        assert!(!wharf.stderr().contains("taken from the cache"));
    }
}

/// A tmpfs mounted for one test, unmounted when dropped.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// Mounts a tmpfs with `options`, or says why it cannot (not root, no
    /// CAP_SYS_ADMIN, no `mount`).
    fn mount(options: &str) -> Result<Self, String> {
        let dir = tempfile::tempdir().unwrap();
        let output = Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "wharf-chaos"])
            .arg(dir.path())
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if !output.status.success() {
            return Err(String::from_utf8_lossy(&output.stderr).trim().to_string());
        }
        Ok(Self { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn remount(&self, options: &str) {
        let status = Command::new("mount")
            .args(["-o", &format!("remount,{options}")])
            .arg(self.path())
            .status()
            .unwrap();
        assert!(status.success(), "remount {options}");
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(self.path()).status();
    }
}

/// The tmpfs, or `None` after saying, past the test harness's capture, that
/// the test is skipped and why.
fn tmpfs_or_skip(test: &str, options: &str) -> Option<Tmpfs> {
    match Tmpfs::mount(options) {
        Ok(tmpfs) => Some(tmpfs),
        Err(why) => {
            // Not `eprintln!`: the harness captures that, and a skip must show.
            #[allow(clippy::explicit_write)]
            writeln!(
                std::io::stderr(),
                "SKIPPED {test}: it needs to mount a tmpfs (root or CAP_SYS_ADMIN): {why}"
            )
            .unwrap();
            None
        }
    }
}

const NOT_WRITABLE: &str = "the compile cache is not writable";

#[test]
fn a_read_only_cache_serves_its_entries_and_compiles_the_rest_in_memory() {
    let Some(cache) = tmpfs_or_skip("a_read_only_cache", "size=16m") else {
        return;
    };
    let dir = plugin_dir(&["echo"]);
    warm(dir.path(), cache.path());
    let cached = files_under(cache.path());
    cache.remount("ro");
    fill(dir.path(), &["wat-add"]);
    let mut wharf = Wharf::start_in(dir.path(), &["--cache-dir", cache.path().to_str().unwrap()]);
    still_serving(&mut wharf, 1);
    assert_eq!(add(&mut wharf, 2, "wat-add_add"), json!({"result": 5}));
    wharf.wait_for_log("optimised code in place plugin=wat-add");
    let log = wharf.stderr();
    assert!(
        log.contains("compiled component taken from the cache"),
        "{log}"
    );
    // Winch's and Cranelift's code of wat-add could not be written: said once.
    assert_eq!(log.matches(NOT_WRITABLE).count(), 1, "{log}");
    assert!(log.contains("Read-only file system"), "{log}");
    assert_eq!(files_under(cache.path()), cached);
}

#[test]
fn a_full_cache_does_not_stop_plugins_from_loading() {
    let Some(cache) = tmpfs_or_skip("a_full_cache", "size=64k") else {
        return;
    };
    let dir = plugin_dir(&["echo", "calc"]);
    let mut wharf = Wharf::start_in(dir.path(), &["--cache-dir", cache.path().to_str().unwrap()]);
    still_serving(&mut wharf, 1);
    wharf.wait_for_log("optimised code in place plugin=echo");
    wharf.wait_for_log("optimised code in place plugin=calc");
    let log = wharf.stderr();
    assert_eq!(log.matches(NOT_WRITABLE).count(), 1, "{log}");
    assert!(log.contains("No space left on device"), "{log}");
    let response = wharf.modern(
        2,
        "tools/call",
        json!({"name": "calc_add", "arguments": {"a": 1, "b": 2}}),
    );
    assert_eq!(
        result_of(&response)["structuredContent"],
        json!({"result": 3.0})
    );
    // No half-written entry is left to fill the disk.
    for file in files_under(cache.path()) {
        assert_eq!(
            file.extension().and_then(|e| e.to_str()),
            Some("cwasm"),
            "{file:?}"
        );
    }
    // A restart reads what fitted and is just as quiet about the rest.
    drop(wharf);
    let mut again = Wharf::start_in(dir.path(), &["--cache-dir", cache.path().to_str().unwrap()]);
    still_serving(&mut again, 1);
    assert!(again.is_running());
}
