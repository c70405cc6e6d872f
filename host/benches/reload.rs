//! Reload latency: from the rename of a new component into the plugin folder to
//! the `list_changed` notification at a listening client, and to the first
//! successful call of the new tool. Run with `cargo xtask bench`.
//!
//! Three cases:
//! - a component never seen before, in a server that has compiled nothing
//!   (every function compiled on arrival; a fresh server each round);
//! - new bytes whose functions the server has compiled before, as when a plugin
//!   is rebuilt (Cranelift's incremental cache, `runtime/function_cache.rs`);
//! - known bytes under a new name (the compiled-component cache).

#[path = "../../tests/e2e/harness.rs"]
#[allow(dead_code)]
mod harness;

use std::path::Path;
use std::time::{Duration, Instant};

use harness::*;
use serde_json::{Value, json};

const ROUNDS: usize = 15;

struct Sample {
    notified: Duration,
    callable: Duration,
}

fn main() {
    let out_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench");
    std::fs::create_dir_all(&out_dir).unwrap();
    let calc = std::fs::read(plugin_file("calc")).unwrap();

    let mut report = serde_json::Map::new();
    println!("reload latency over {ROUNDS} rounds (ms)");
    println!("{:<40} {:>8} {:>8} {:>8}", "case", "p50", "p95", "max");
    for (case, mode) in [
        ("new component (compile)", Mode::Cold),
        ("rebuilt component (same functions)", Mode::Rebuilt),
        ("known component (cache)", Mode::Known),
    ] {
        let samples = run_case(&calc, mode);
        for (what, pick) in [
            (
                "notified",
                (|s: &Sample| s.notified) as fn(&Sample) -> Duration,
            ),
            ("callable", |s: &Sample| s.callable),
        ] {
            let mut ms: Vec<f64> = samples
                .iter()
                .map(|s| pick(s).as_secs_f64() * 1e3)
                .collect();
            ms.sort_by(|a, b| a.total_cmp(b));
            let p = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
            let name = format!("{case}: {what}");
            println!(
                "{name:<40} {:>8.1} {:>8.1} {:>8.1}",
                p(0.5),
                p(0.95),
                ms[ms.len() - 1]
            );
            report.insert(name, json!({"p50_ms": p(0.5), "p95_ms": p(0.95), "max_ms": ms[ms.len() - 1], "samples_ms": ms}));
        }
    }
    let path = out_dir.join("reload.json");
    std::fs::write(
        &path,
        serde_json::to_string_pretty(&Value::Object(report)).unwrap(),
    )
    .unwrap();
    println!("written to {}", path.display());
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Cold,
    Rebuilt,
    Known,
}

/// A server watching a fresh folder with a fresh compile cache, listening.
struct Watched {
    wharf: Wharf,
    dir: tempfile::TempDir,
    _cache: tempfile::TempDir,
}

impl Watched {
    fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        let mut wharf =
            Wharf::start_in(dir.path(), &["--cache-dir", cache.path().to_str().unwrap()]);
        wharf.listen("bench");
        Self {
            wharf,
            dir,
            _cache: cache,
        }
    }
}

fn run_case(calc: &[u8], mode: Mode) -> Vec<Sample> {
    let mut watched = Watched::start();
    if mode != Mode::Cold {
        // Compile the plain bytes first: the cached component and its functions.
        install(watched.dir.path(), "warm", calc);
        watched
            .wharf
            .next_matching(|m| m["method"] == "notifications/tools/list_changed");
    }

    let mut samples = Vec::new();
    for round in 0..ROUNDS {
        if mode == Mode::Cold && round > 0 {
            watched = Watched::start();
        }
        let Watched { wharf, dir, .. } = &mut watched;
        let mut bytes = calc.to_vec();
        let unique_bytes = mode != Mode::Known;
        if unique_bytes {
            // A custom section makes new bytes (a cache miss) with the same tools.
            let tag = format!("r{round}-{}", std::process::id());
            bytes.push(0x00);
            bytes.push((tag.len() + 1) as u8);
            bytes.push(tag.len() as u8);
            bytes.extend_from_slice(tag.as_bytes());
        }
        let name = format!("calc{round}{}", if unique_bytes { "n" } else { "k" });
        let started = install(dir.path(), &name, &bytes);
        wharf.next_matching(|m| m["method"] == "notifications/tools/list_changed");
        let notified = started.elapsed();
        let tool = format!("{name}_add");
        let mut id = 1000 * (round as i64 + 1);
        loop {
            id += 1;
            let response = wharf.modern(
                id,
                "tools/call",
                json!({"name": tool, "arguments": {"a": 1, "b": 2}}),
            );
            if response.get("result").is_some() {
                break;
            }
        }
        samples.push(Sample {
            notified,
            callable: started.elapsed(),
        });
        std::fs::remove_file(dir.path().join(format!("{name}.wasm"))).unwrap();
        wharf.next_matching(|m| m["method"] == "notifications/tools/list_changed");
    }
    samples
}

/// Writes the component under a temporary name, then renames it in; returns the
/// instant of the rename.
fn install(dir: &Path, name: &str, bytes: &[u8]) -> Instant {
    let temp = dir.join(format!("{name}.partial"));
    std::fs::write(&temp, bytes).unwrap();
    let started = Instant::now();
    std::fs::rename(&temp, dir.join(format!("{name}.wasm"))).unwrap();
    started
}
