//! `cargo xtask fuzz`: builds the libFuzzer targets in fuzz/ and runs each for
//! a bounded time, reporting executions and coverage, failing on a crash.
//!
//! The machine has only a stable toolchain; cargo-fuzz needs nightly flags
//! (`-Zsanitizer`, sanitizer-coverage passes), which `RUSTC_BOOTSTRAP=1`
//! unlocks. No sanitizer (`-s none`): AddressSanitizer over wasmtime's tree
//! doubles an already long build, and the code under test is safe Rust, where
//! a bug shows as a panic, which libFuzzer catches without it.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::{root, run};

/// Every target in fuzz/fuzz_targets.
pub const TARGETS: &[&str] = &[
    "stdio_screen",
    "http_envelope",
    "manifest",
    "plain_types",
    "uri_template",
    "request_state",
    "package_docs",
];

/// The target triple cargo-fuzz builds for (its output folder).
const TRIPLE: &str = "x86_64-unknown-linux-gnu";

/// What one run reached, from libFuzzer's last status line.
struct Figures {
    execs: u64,
    cov: u64,
    ft: u64,
}

/// How the targets are built.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Build {
    /// cargo-fuzz's release build: the fastest fuzzing, about 16 minutes of
    /// CPU from cold (wasmtime's tree, instrumented).
    Release,
    /// Unoptimised (`--dev`): about 6 minutes of CPU from cold, and several
    /// times fewer executions a second; for CI's short runs.
    Dev,
}

impl Build {
    fn folder(self) -> &'static str {
        match self {
            Build::Release => "release",
            Build::Dev => "debug",
        }
    }
}

/// Builds `targets` (all when empty) and runs each for `seconds`; prints a
/// table of executions and coverage; fails naming the crashing input.
pub fn fuzz(seconds: u64, targets: &[String], build_as: Build) -> Result<()> {
    let targets: Vec<&str> = if targets.is_empty() {
        TARGETS.to_vec()
    } else {
        for name in targets {
            if !TARGETS.contains(&name.as_str()) {
                bail!("no fuzz target `{name}` (targets: {})", TARGETS.join(", "));
            }
        }
        targets.iter().map(String::as_str).collect()
    };
    let dir = root().join("fuzz");
    // `cargo fuzz build` takes one target, or none for all of them.
    let builds: Vec<Option<&str>> = if targets.len() == TARGETS.len() {
        vec![None]
    } else {
        targets.iter().copied().map(Some).collect()
    };
    for target in builds {
        let mut build = Command::new("cargo");
        build
            .args(["fuzz", "build", "-s", "none"])
            .args(if build_as == Build::Dev {
                &["--dev"][..]
            } else {
                &[]
            })
            .args(target)
            .current_dir(&dir)
            .env("RUSTC_BOOTSTRAP", "1")
            // The fuzz crate is its own workspace with its own target folder.
            .env_remove("CARGO_TARGET_DIR");
        run(&mut build).context("building the fuzz targets (is cargo-fuzz installed?)")?;
    }
    let mut rows = Vec::new();
    for target in targets {
        let figures = run_target(&dir, target, seconds, build_as)?;
        rows.push((target, figures));
    }
    println!("\n| target | executions | cov | ft |\n|---|---:|---:|---:|");
    for (target, f) in &rows {
        println!("| {target} | {} | {} | {} |", f.execs, f.cov, f.ft);
    }
    Ok(())
}

/// Runs one target on a working copy of its seed corpus; libFuzzer's own
/// artifact (the crashing input) stays in fuzz/artifacts/TARGET/.
fn run_target(dir: &Path, target: &str, seconds: u64, build_as: Build) -> Result<Figures> {
    let binary = dir
        .join("target")
        .join(TRIPLE)
        .join(build_as.folder())
        .join(target);
    let seeds = dir.join("corpus").join(target);
    let work = root().join("target/fuzz-corpus").join(target);
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    let artifacts = dir.join("artifacts").join(target);
    std::fs::create_dir_all(&artifacts)
        .with_context(|| format!("creating {}", artifacts.display()))?;
    let mut cmd = Command::new(&binary);
    cmd.arg(format!("-max_total_time={seconds}"))
        .arg("-timeout=10")
        .arg("-rss_limit_mb=2048")
        .arg("-print_final_stats=1")
        .arg(format!("-artifact_prefix={}/", artifacts.display()));
    let dict = dir.join("dict").join(format!("{target}.dict"));
    if dict.exists() {
        cmd.arg(format!("-dict={}", dict.display()));
    }
    cmd.arg(&work);
    if seeds.exists() {
        cmd.arg(&seeds);
    }
    eprintln!("xtask: fuzzing {target} for {seconds} s");
    let output = cmd
        .output()
        .with_context(|| format!("starting {}", binary.display()))?;
    let log = String::from_utf8_lossy(&output.stderr);
    let log_path = root()
        .join("target/fuzz-corpus")
        .join(format!("{target}.log"));
    std::fs::write(&log_path, log.as_bytes())
        .with_context(|| format!("writing {}", log_path.display()))?;
    if !output.status.success() {
        let tail: Vec<&str> = log.lines().rev().take(40).collect();
        for line in tail.iter().rev() {
            eprintln!("{line}");
        }
        let input = crash_input(&log)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| format!("(not named; see {})", log_path.display()));
        bail!(
            "fuzz target {target} crashed ({}); input: {input}",
            output.status
        );
    }
    figures(&log).with_context(|| format!("no libFuzzer figures in {}", log_path.display()))
}

/// The path libFuzzer wrote the crashing input to.
fn crash_input(log: &str) -> Option<PathBuf> {
    log.lines()
        .find_map(|line| line.split_once("Test unit written to "))
        .map(|(_, path)| PathBuf::from(path.trim()))
}

/// The executions (`#N`) and coverage (`cov:`, `ft:`) of the last status line.
fn figures(log: &str) -> Option<Figures> {
    let line = log
        .lines()
        .rev()
        .find(|line| line.starts_with('#') && line.contains(" cov: "))?;
    let field = |name: &str| -> Option<u64> {
        let after = line.split_once(name)?.1.trim_start();
        after.split_whitespace().next()?.parse().ok()
    };
    let execs = log
        .lines()
        .find_map(|line| line.strip_prefix("stat::number_of_executed_units:"))
        .and_then(|n| n.trim().parse().ok())
        .or_else(|| line[1..].split_whitespace().next()?.parse().ok())?;
    Some(Figures {
        execs,
        cov: field("cov:")?,
        ft: field("ft:")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_come_from_the_last_status_line_and_the_final_stats() {
        let log = "#2\tINITED cov: 10 ft: 12 corp: 1/1b exec/s: 0 rss: 30Mb\n\
                   #4096\tpulse  cov: 55 ft: 90 corp: 9/100b lim: 4 exec/s: 2048 rss: 31Mb\n\
                   Done 5000 runs in 2 second(s)\n\
                   stat::number_of_executed_units: 5000\n";
        let f = figures(log).unwrap();
        assert_eq!((f.execs, f.cov, f.ft), (5000, 55, 90));
        let crash = "==1== ERROR: libFuzzer: deadly signal\n\
                     artifact_prefix='fuzz/artifacts/x/'; Test unit written to fuzz/artifacts/x/crash-ab12\n";
        assert_eq!(
            crash_input(crash),
            Some(PathBuf::from("fuzz/artifacts/x/crash-ab12"))
        );
    }
}
