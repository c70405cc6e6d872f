//! `cargo xtask`: builds the example plugins, runs the demo, runs every check.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};

mod cluster;
mod deploy;
mod docs;
mod examples;
mod fuzz;
use wharf_componentize::install;
mod interop;
mod link_order;
mod soak;

/// Wharf's development tasks.
#[derive(Parser)]
#[command(name = "cargo xtask")]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Subcommand)]
enum Task {
    /// Build the example plugins into target/plugins and the test plugins into
    /// target/test-plugins.
    Plugins,
    /// Build the example plugins in TypeScript and Python (with their SDKs, whose
    /// unit tests run first), JavaScript, Python, C, Go and WAT into
    /// target/plugins (each rebuilt only when its sources or toolchain changed).
    Examples {
        /// Only these examples (folder names under plugins/, e.g. `wat-add`).
        names: Vec<String>,
        /// Print the WIT, exports and imports decoded from the built components.
        #[arg(long)]
        print_wit: bool,
    },
    /// Build Wharf and the example plugins, then serve them over stdio.
    Demo,
    /// Everything CI checks: formatting, clippy, plugins, unit and end-to-end
    /// tests, the Kubernetes manifests against their schemas, the official
    /// Python and TypeScript SDKs and the Inspector against the real binary,
    /// the official conformance suite, every fuzz target for a few seconds,
    /// three replicas behind nginx for 8 s, and a 60 s soak.
    Test,
    /// Three Wharf replicas behind nginx (deploy/nginx/wharf.conf) on
    /// loopback: 2026-07-28 calls, legacy sessions and listen streams while
    /// one replica is stopped and another killed, then both restarted. Prints
    /// what failed, recovered and reconnected; fails if a goal is missed.
    /// Needs nginx (`apt-get install nginx`).
    Cluster {
        /// How long the load runs (CI runs 8).
        #[arg(long, default_value_t = cluster::CI_SECONDS)]
        seconds: u64,
    },
    /// Validate the Kubernetes manifests in deploy/kubernetes against the
    /// schemas of a current Kubernetes release (as `cargo xtask test` does).
    Manifests,
    /// Only the client interop tests and the conformance suite, against a fresh
    /// debug build of Wharf and the plugins.
    Interop,
    /// Build the fuzz targets in fuzz/ (cargo-fuzz, libFuzzer) and run each
    /// for a while; prints executions and coverage, fails on a crash.
    Fuzz {
        /// How long each target runs.
        #[arg(long, default_value_t = 60)]
        seconds: u64,
        /// Build unoptimised (a third of the build, far fewer executions a
        /// second), as `cargo xtask test` does.
        #[arg(long)]
        dev: bool,
        /// Only these targets (default: all).
        targets: Vec<String>,
    },
    /// Benchmarks (optimised `--release` build): Wharf against a native rmcp
    /// server (latency, throughput, cold start, memory), the overhead split, and
    /// reload latency. Prints a table; writes target/bench/results.json and
    /// results.png.
    Bench {
        /// Shorter phases and fewer repetitions (a minute or two; noisier).
        #[arg(long)]
        quick: bool,
    },
    /// Write host/link/startup-order.txt: the functions a start-up and its
    /// first calls run, which the release link lays out together (fewer
    /// pages of code resident and faulted in). Needs valgrind; rerun after
    /// large changes to the start-up path.
    LinkOrder {
        /// Keep the list and only add what the page-fault rounds find
        /// missing (no valgrind): enough after an edit, as the listed names
        /// survive it.
        #[arg(long)]
        faults_only: bool,
    },
    /// Soak the real binary: mixed load over stdio and HTTP in both eras while
    /// the plugin folder churns and a plugin misbehaves; counts every request
    /// and list change, samples memory, descriptors and threads. Prints a
    /// table; writes target/soak/report.json; fails if a goal is missed.
    Soak {
        /// How long, in minutes (10 before a release).
        #[arg(long, conflicts_with = "seconds")]
        minutes: Option<u64>,
        /// How long, in seconds (CI runs 60).
        #[arg(long)]
        seconds: Option<u64>,
        /// Soak the optimised `--release` build instead of the debug one.
        #[arg(long)]
        release: bool,
    },
}

/// Example plugins: (cargo package, output name).
const EXAMPLE_PLUGINS: &[&str] = &["echo", "calc", "textstats", "units", "guide"];
/// Plugins that exist only for tests (misbehaving on purpose, exercising every
/// WIT shape, or serving the conformance suite's fixtures).
const TEST_PLUGINS: &[&str] = &["misbehave", "shapes", "conformance"];
/// Plain components (no Wharf SDK) and their WIT folders, whose doc comments are
/// embedded after the build: (output file under target/, WIT folder).
const PLAIN_PLUGINS: &[(&str, &str)] = &[
    ("plugins/units.wasm", "plugins/units/wit"),
    ("test-plugins/shapes.wasm", "tests/plugins/shapes/wit"),
];
/// Plugins that exist only for `cargo xtask bench` (bench/plugins).
const BENCH_PLUGINS: &[&str] = &["compute"];
/// The benchmark's own binaries: the native baseline and the load driver.
const BENCH_BINARIES: &[&str] = &["wharf-bench-baseline", "wharf-bench-driver"];
const WASM_TARGET: &str = "wasm32-wasip2";
/// A request to paste into the demo.
const EXAMPLE_REQUEST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo_echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
/// The Cargo profile plugins are built with (see the workspace Cargo.toml).
const PLUGIN_PROFILE: &str = "plugin";

fn main() -> Result<()> {
    match Cli::parse().task {
        Task::Plugins => build_plugins(),
        Task::Examples { names, print_wit } => {
            examples::check_names(&names)?;
            examples::build(&build_wharf()?, &names)?;
            if print_wit {
                examples::print_wit(&names)?;
            }
            Ok(())
        }
        Task::Demo => demo(),
        Task::Test => test(),
        Task::Manifests => deploy::validate_manifests(),
        Task::Cluster { seconds } => cluster::cluster(seconds),
        Task::Interop => {
            build_plugins()?;
            run(cargo().args(["build", "-p", "wharf"]))?;
            python_interop()?;
            interop::node()
        }
        Task::Fuzz {
            seconds,
            dev,
            targets,
        } => {
            let build = if dev {
                fuzz::Build::Dev
            } else {
                fuzz::Build::Release
            };
            fuzz::fuzz(seconds, &targets, build)
        }
        Task::Bench { quick } => bench(quick),
        Task::LinkOrder { faults_only } => link_order::link_order(faults_only),
        Task::Soak {
            minutes,
            seconds,
            release,
        } => {
            let seconds = minutes.map(|m| m * 60).or(seconds).unwrap_or(0);
            soak::soak(std::time::Duration::from_secs(seconds), release)
        }
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(root());
    cmd
}

fn run(cmd: &mut Command) -> Result<()> {
    eprintln!("xtask: running {cmd:?}");
    let status = cmd.status().with_context(|| format!("starting {cmd:?}"))?;
    if !status.success() {
        bail!("{cmd:?} failed with {status}");
    }
    Ok(())
}

/// Installs the wasm32-wasip2 standard library if rustup lacks it.
fn ensure_wasm_target() -> Result<()> {
    let output = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .context("running rustup (needed to install the wasm32-wasip2 target)")?;
    let installed = String::from_utf8_lossy(&output.stdout);
    if !installed.lines().any(|line| line.trim() == WASM_TARGET) {
        run(Command::new("rustup").args(["target", "add", WASM_TARGET]))?;
    }
    Ok(())
}

fn build_plugins() -> Result<()> {
    let packages: Vec<&str> = EXAMPLE_PLUGINS
        .iter()
        .chain(TEST_PLUGINS)
        .copied()
        .collect();
    let built = build_wasm(&packages)?;
    copy_plugins(&built, EXAMPLE_PLUGINS, &root().join("target/plugins"))?;
    copy_plugins(&built, TEST_PLUGINS, &root().join("target/test-plugins"))?;
    // Toolchains drop WIT doc comments; `wharf embed-docs` puts them back.
    run(cargo().args(["build", "-p", "wharf"]))?;
    let wharf = root().join("target/debug/wharf");
    for (component, wit) in PLAIN_PLUGINS {
        let component = root().join("target").join(component);
        docs::embed_docs(&wharf, &component, &root().join(wit))?;
        eprintln!("xtask: docs embedded in {}", component.display());
    }
    Ok(())
}

/// Builds `packages` as components with the plugin profile; returns the folder
/// the `.wasm` files are in.
fn build_wasm(packages: &[&str]) -> Result<PathBuf> {
    ensure_wasm_target()?;
    let mut cmd = cargo();
    cmd.args([
        "build",
        "--profile",
        PLUGIN_PROFILE,
        "--target",
        WASM_TARGET,
    ]);
    for package in packages {
        cmd.args(["-p", package]);
    }
    run(&mut cmd)?;
    Ok(root().join("target").join(WASM_TARGET).join(PLUGIN_PROFILE))
}

/// Builds the bench plugins into target/bench/plugins.
fn build_bench_plugins() -> Result<()> {
    let built = build_wasm(BENCH_PLUGINS)?;
    copy_plugins(&built, BENCH_PLUGINS, &root().join("target/bench/plugins"))
}

fn copy_plugins(from: &Path, names: &[&str], to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
    for name in names {
        let source = from.join(format!("{name}.wasm"));
        let dest = to.join(format!("{name}.wasm"));
        std::fs::copy(&source, &dest)
            .with_context(|| format!("copying {} to {}", source.display(), dest.display()))?;
        eprintln!("xtask: {}", dest.display());
    }
    Ok(())
}

/// `cargo build -p wharf` (debug); returns the binary's path.
fn build_wharf() -> Result<PathBuf> {
    run(cargo().args(["build", "-p", "wharf"]))?;
    Ok(root().join("target/debug/wharf"))
}

fn demo() -> Result<()> {
    build_plugins()?;
    let wharf = build_wharf()?;
    examples::build(&wharf, &[])?;
    let plugins = root().join("target/plugins");
    eprintln!(
        "\nxtask: serving the example plugins over stdio. Type JSON-RPC lines, or connect a client:\n\
         \n  command: {wharf}\n  args:    [\"serve\", \"--plugins\", \"{plugins}\"]\n\
         \nFor example, paste:\n  {EXAMPLE_REQUEST}\n",
        wharf = wharf.display(),
        plugins = plugins.display(),
    );
    let status = Command::new(&wharf)
        .args(["serve", "--plugins"])
        .arg(&plugins)
        .status()
        .with_context(|| format!("starting {}", wharf.display()))?;
    if !status.success() {
        bail!("wharf exited with {status}");
    }
    Ok(())
}

fn test() -> Result<()> {
    run(cargo().args(["fmt", "--all", "--check"]))?;
    run(cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    deploy::validate_manifests()?;
    build_plugins()?;
    examples::build(&build_wharf()?, &[])?;
    let mut clippy_wasm = cargo();
    clippy_wasm.args([
        "clippy",
        "--profile",
        PLUGIN_PROFILE,
        "--target",
        WASM_TARGET,
        "-p",
        "wharf-sdk",
    ]);
    for package in EXAMPLE_PLUGINS.iter().chain(TEST_PLUGINS) {
        clippy_wasm.args(["-p", package]);
    }
    clippy_wasm.args(["--", "-D", "warnings"]);
    run(&mut clippy_wasm)?;
    // The authorization server the OAuth end-to-end test starts (tests/e2e/oauth.rs).
    install::npm_ci(&root().join("tests/oauth"))?;
    let oras_python = oras_python()?;
    run(cargo()
        .args(["test", "--workspace"])
        .envs(examples::author_env())
        .env("WHARF_TEST_ORAS_PYTHON", &oras_python)
        .env("WHARF_TEST_PLUGINS", root().join("target/plugins"))
        .env(
            "WHARF_TEST_HOSTILE_PLUGINS",
            root().join("target/test-plugins"),
        ))?;
    python_interop()?;
    interop::node()?;
    fuzz::fuzz(FUZZ_SECONDS_IN_TEST, &[], fuzz::Build::Dev)?;
    cluster::cluster(cluster::CI_SECONDS)?;
    soak::soak(soak::CI_SOAK, false)
}

/// How long `cargo xtask test` runs each fuzz target (docs/fuzzing.md).
const FUZZ_SECONDS_IN_TEST: u64 = 10;

/// The official MCP Python SDK against the binary `cargo test` just built.
fn python_interop() -> Result<()> {
    let suite = root().join("tests/interop/python");
    let python = sdk_python()?;
    run(Command::new(&python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(&suite)
        .env("WHARF_BIN", root().join("target/debug/wharf"))
        .env("WHARF_TEST_PLUGINS", root().join("target/plugins")))
}

/// The Python of a virtualenv under target/ with the `oras` OCI client, which
/// the registry e2e tests (tests/e2e/oci.rs) push and pull with.
fn oras_python() -> Result<PathBuf> {
    install::venv(
        &root().join("target/oci/venv"),
        &root().join("tests/oci/requirements.txt"),
    )
}

/// The Python of a virtualenv under target/ with the official MCP Python SDK
/// (created once, then reused).
fn sdk_python() -> Result<PathBuf> {
    install::venv(
        &root().join("target/interop/python-venv"),
        &root().join("tests/interop/python/requirements.txt"),
    )
}

/// Everything of issue 9 in one run, on one machine, all from `--release`
/// builds (not the fat-LTO `dist` profile): the criterion overhead split, the
/// reload benchmark, then the driver, which measures Wharf against the native
/// baseline and writes the table, results.json and results.png.
fn bench(quick: bool) -> Result<()> {
    build_plugins()?;
    build_bench_plugins()?;
    // Two invocations: built together, Cargo would unify the bench crates'
    // features into wharf's dependency tree and build a second wharf.
    run(cargo().args(["build", "--release", "-p", "wharf"]))?;
    let mut build = cargo();
    build.args(["build", "--release"]);
    for binary in BENCH_BINARIES {
        build.args(["-p", binary]);
    }
    run(&mut build)?;
    let out = root().join("target/bench");
    std::fs::create_dir_all(&out).context("creating target/bench")?;
    let plugin_env = |cmd: &mut Command| {
        cmd.env("WHARF_TEST_PLUGINS", root().join("target/plugins"))
            .env(
                "WHARF_TEST_HOSTILE_PLUGINS",
                root().join("target/test-plugins"),
            );
    };

    let mut overhead = cargo();
    overhead.args(["bench", "-p", "wharf", "--bench", "overhead", "--"]);
    if quick {
        overhead.args(["--warm-up-time", "1", "--measurement-time", "2"]);
    }
    plugin_env(&mut overhead);
    run(&mut overhead)?;

    let mut reload = cargo();
    reload.args(["bench", "-p", "wharf", "--bench", "reload"]);
    plugin_env(&mut reload);
    run(&mut reload)?;

    let release = root().join("target/release");
    // The heavy-component cases: the JavaScript and Python examples.
    let heavy = ["js-strings".to_string(), "py-stats".to_string()];
    examples::build(&release.join("wharf"), &heavy)?;
    let mut driver = Command::new(release.join("wharf-bench-driver"));
    driver
        .arg("--wharf")
        .arg(release.join("wharf"))
        .arg("--baseline")
        .arg(release.join("wharf-bench-baseline"))
        .arg("--echo")
        .arg(root().join("target/plugins/echo.wasm"))
        .arg("--compute")
        .arg(out.join("plugins/compute.wasm"))
        .arg("--criterion")
        .arg(root().join("target/criterion"))
        .arg("--out")
        .arg(&out)
        .arg("--js-component")
        .arg(root().join("target/plugins/js-strings.wasm"))
        .arg("--py-component")
        .arg(root().join("target/plugins/py-stats.wasm"))
        .current_dir(root());
    if quick {
        driver.arg("--quick");
    }
    // The trivial stdio case through a real client too (see bench/driver/src/sdk.rs).
    driver.arg("--python").arg(sdk_python()?);
    run(&mut driver)
}
