//! `wharf-bench-driver`: the measuring half of `cargo xtask bench`.
//!
//! Runs Wharf and the native rmcp baseline (`bench/baseline`) through the same
//! load, one after the other for each case so that both see the same machine:
//! tools/call latency and throughput over stdio and HTTP (1, 16, 64 clients),
//! cold start with 1/20/100 plugins (empty and warm compile cache), memory
//! (idle, per plugin, under load), and what tracing a call costs (export off
//! against on, `otlp.rs`). Then it gathers the criterion overhead split
//! and the reload benchmark that xtask ran before it, prints one table, and
//! writes `results.json` and `results.png` to the output folder.

mod heavy;
mod load;
mod otlp;
mod pin;
mod pipelined;
mod plot;
mod proc;
mod report;
mod sdk;
mod startup;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Parser;
use serde_json::json;

use load::{Era, HttpTarget, Phases, Workload};
use pin::{Cores, PinnedThread};
use proc::{HttpServer, ServerCmd, StdioServer, peak_rss_while};
use report::{Case, Report};

/// Measure Wharf against the native rmcp baseline.
#[derive(Parser)]
struct Cli {
    /// The `wharf` binary (release build).
    #[arg(long)]
    wharf: PathBuf,
    /// The `wharf-bench-baseline` binary (release build).
    #[arg(long)]
    baseline: PathBuf,
    /// The echo example plugin (`target/plugins/echo.wasm`).
    #[arg(long)]
    echo: PathBuf,
    /// The compute bench plugin (`target/bench/plugins/compute.wasm`).
    #[arg(long)]
    compute: PathBuf,
    /// Where criterion wrote its results (`target/criterion`).
    #[arg(long)]
    criterion: PathBuf,
    /// Output folder (`target/bench`): results.json, results.png; reload.json is
    /// read from here.
    #[arg(long)]
    out: PathBuf,
    /// `n` of the compute-heavy call (`compute_nth_prime`).
    #[arg(long, default_value_t = 2000)]
    prime: u32,
    /// Shorter phases and fewer repetitions (numbers are noisier).
    #[arg(long)]
    quick: bool,
    /// A Python with the official MCP SDK (`mcp`) installed: the trivial stdio
    /// case also runs through the SDK's client (`bench/sdk/stdio_calls.py`).
    #[arg(long)]
    python: Option<PathBuf>,
    /// The JavaScript example component (`target/plugins/js-strings.wasm`):
    /// the heavy-component cases.
    #[arg(long)]
    js_component: Option<PathBuf>,
    /// The Python example component (`target/plugins/py-stats.wasm`).
    #[arg(long)]
    py_component: Option<PathBuf>,
    /// Run only these parts (for profiling one of them); all by default.
    #[arg(long, value_enum)]
    only: Vec<Part>,
}

/// The parts of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Part {
    Stdio,
    /// Every HTTP case, 2026-07-28 and legacy sessions.
    Http,
    /// The HTTP cases in legacy sessions only.
    Legacy,
    Startup,
    /// OpenTelemetry export off against on (`otlp.rs`).
    Tracing,
    /// Pipelined stdio, alone and beside a spinning process (`pipelined.rs`).
    Pipelined,
    /// The JavaScript and Python components (`heavy.rs`).
    Heavy,
}

/// Concurrency levels of the HTTP runs.
const HTTP_CLIENTS: &[usize] = &[1, 16, 64];

fn main() -> Result<()> {
    let cli = Cli::parse();
    let work = cli.out.join("work");
    std::fs::create_dir_all(&work).context("creating the work folder")?;
    let mut report = Report::new(cli.quick, cli.prime);

    let echo =
        std::fs::read(&cli.echo).with_context(|| format!("reading {}", cli.echo.display()))?;
    let compute = std::fs::read(&cli.compute)
        .with_context(|| format!("reading {}", cli.compute.display()))?;

    // Wharf serves the same two tools as the baseline: echo_echo, compute_nth_prime.
    let plugins = work.join("latency-plugins");
    let cache = work.join("cache");
    let _ = std::fs::remove_dir_all(&plugins);
    std::fs::create_dir_all(&plugins)?;
    std::fs::write(plugins.join("echo.wasm"), &echo)?;
    std::fs::write(plugins.join("compute.wasm"), &compute)?;
    let wharf = ServerCmd {
        label: "wharf",
        program: cli.wharf.clone(),
        args: [
            "serve",
            "--plugins",
            &plugins.display().to_string(),
            "--cache-dir",
            &cache.display().to_string(),
            // No call may be refused for concurrency: the baseline has no limit.
            "--plugin-concurrency",
            "256",
            "--max-concurrent-calls",
            "256",
        ]
        .map(String::from)
        .to_vec(),
    };
    let baseline = ServerCmd {
        label: "baseline",
        program: cli.baseline.clone(),
        args: vec![],
    };
    let workloads = [
        Workload {
            label: "trivial",
            tool: "echo_echo",
            arguments: json!({"text": "hello"}),
            traceparent: None,
        },
        Workload {
            label: "compute",
            tool: "compute_nth_prime",
            arguments: json!({"n": cli.prime}),
            traceparent: None,
        },
    ];
    let phases = if cli.quick {
        Phases {
            warmup: Duration::from_millis(500),
            measure: Duration::from_secs(2),
        }
    } else {
        Phases {
            warmup: Duration::from_secs(1),
            measure: Duration::from_secs(5),
        }
    };

    // Compile the plugins' optimised code into the cache before anything is
    // timed: every case measures the code a server serves once its optimiser
    // is done (the quick code's window is `--only heavy`'s second column).
    wharf.precompile(&cache)?;

    let runs = |part: Part| cli.only.is_empty() || cli.only.contains(&part);
    // Both tools where the kernel places things; the trivial one also pinned
    // to one core and to two (see `pin`).
    let stdio_cases = workloads
        .iter()
        .map(|w| (w, Cores::Free))
        .chain([Cores::Shared, Cores::Apart].map(|cores| (&workloads[0], cores)))
        .filter(|(_, cores)| cores.driver_cpu().is_none_or(|cpu| cpu < pin::available()));
    for (workload, cores) in stdio_cases.filter(|_| runs(Part::Stdio)) {
        let mut wharf_server = StdioServer::start(&wharf, cores.server_cpu())?;
        let mut baseline_server = StdioServer::start(&baseline, cores.server_cpu())?;
        let pinned = cores.driver_cpu().map(PinnedThread::to).transpose()?;
        let results = load::stdio_run([&mut wharf_server, &mut baseline_server], workload, phases)
            .with_context(|| format!("over {}, {}", cores.transport(), workload.tool))?;
        drop(pinned);
        let transport = cores.transport();
        for (server, result) in [&wharf, &baseline].into_iter().zip(results) {
            eprintln!(
                "{transport} {} {}: {result:?}",
                workload.label, server.label
            );
            report.latency.push(Case::new(
                transport,
                1,
                workload.label,
                server.label,
                result,
            ));
        }
    }

    if runs(Part::Pipelined) {
        let poll_off = ServerCmd {
            label: pipelined::POLL_OFF,
            args: [
                wharf.args.clone(),
                vec!["--stdio-busy-poll-us".into(), "0".into()],
            ]
            .concat(),
            ..wharf.clone()
        };
        let trivial = &workloads[0];
        let mut w = StdioServer::start(&wharf, None)?;
        let mut b = StdioServer::start(&baseline, None)?;
        let results = pipelined::stdio_pipelined([&mut w, &mut b], trivial, phases)?;
        for (server, result) in [&wharf, &baseline].into_iter().zip(results) {
            eprintln!("{} {}: {result:?}", pipelined::PIPELINED, server.label);
            report.latency.push(Case::new(
                pipelined::PIPELINED,
                1,
                trivial.label,
                server.label,
                result,
            ));
        }
        let _spinner = pipelined::Spinner::start(0)?;
        let mut off = StdioServer::start(&poll_off, None)?;
        let results = pipelined::stdio_pipelined([&mut w, &mut off, &mut b], trivial, phases)?;
        for (server, result) in [&wharf, &poll_off, &baseline].into_iter().zip(results) {
            eprintln!("{} {}: {result:?}", pipelined::CONTENDED, server.label);
            report.latency.push(Case::new(
                pipelined::CONTENDED,
                1,
                trivial.label,
                server.label,
                result,
            ));
        }
    }

    if runs(Part::Heavy) {
        let components = [
            ("js-strings", &cli.js_component),
            ("py-stats", &cli.py_component),
        ];
        for (label, component) in components {
            let Some(component) = component else {
                eprintln!("heavy: no {label} component given; skipped");
                continue;
            };
            let heavy = heavy::Heavy { label, component };
            let result = heavy::measure(&wharf, &heavy, &work, phases)
                .with_context(|| format!("the {label} component"))?;
            eprintln!(
                "heavy {label}: optimised {:?}, quick {:?}",
                result.optimized, result.quick
            );
            report.heavy.push(result);
        }
    }

    if runs(Part::Tracing) {
        let cost = otlp::measure(&wharf, &workloads[0], phases).context("the tracing cost")?;
        eprintln!("tracing: {cost:?}");
        report.tracing = Some(cost);
    }

    if let Some(python) = cli.python.as_deref().filter(|_| runs(Part::Stdio)) {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../sdk/stdio_calls.py");
        let results = sdk::stdio_runs(python, &script, [&wharf, &baseline], &workloads[0], phases)?;
        for (server, result) in [&wharf, &baseline].into_iter().zip(results) {
            eprintln!("stdio-pysdk trivial {}: {result:?}", server.label);
            report.latency.push(Case::new(
                "stdio-pysdk",
                1,
                workloads[0].label,
                server.label,
                result,
            ));
        }
    }

    // Legacy sessions with the trivial tool only: the era changes the protocol
    // path, not the plugin's.
    let http_cases = workloads
        .iter()
        .map(|w| (w, Era::Modern, "http"))
        .chain(std::iter::once((&workloads[0], Era::Legacy, "http-legacy")));
    let http_runs = |era: Era| runs(Part::Http) || (era == Era::Legacy && runs(Part::Legacy));
    for (workload, era, transport) in http_cases.filter(|&(_, era, _)| http_runs(era)) {
        for &clients in HTTP_CLIENTS {
            let running = [HttpServer::start(&wharf)?, HttpServer::start(&baseline)?];
            let targets = running.each_ref().map(|server| HttpTarget {
                addr: server.addr,
                pid: server.pid(),
            });
            let sample_memory = clients == *HTTP_CLIENTS.last().unwrap()
                && workload.label == "trivial"
                && era == Era::Modern;
            let sampling = Arc::new(AtomicBool::new(true));
            let samplers = targets.map(|target| {
                let sampling = sampling.clone();
                sample_memory
                    .then(|| std::thread::spawn(move || peak_rss_while(target.pid, &sampling)))
            });
            let results = load::http_run(targets, workload, clients, phases, era)
                .with_context(|| format!("over {transport}, {}", workload.tool))?;
            sampling.store(false, Ordering::Relaxed);
            drop(running);
            for ((server, result), sampler) in
                [&wharf, &baseline].into_iter().zip(results).zip(samplers)
            {
                if let Some(sampler) = sampler {
                    let peak = sampler.join().expect("sampler thread");
                    report.load_rss_kib.insert(server.label.to_string(), peak);
                }
                eprintln!(
                    "{transport}/{clients} {} {}: {result:?}",
                    workload.label, server.label
                );
                report.latency.push(Case::new(
                    transport,
                    clients,
                    workload.label,
                    server.label,
                    result,
                ));
            }
        }
    }

    // An empty cache compiles every copy: with 100 plugins that is most of a
    // minute on two cores, so it runs once, and not at all for 1,000 (whose
    // warm cache takes minutes to fill).
    let (runs_empty, runs_warm) = if cli.quick { (1, 3) } else { (1, 7) };
    if runs(Part::Startup) {
        for count in startup::PLUGIN_COUNTS {
            let runs_empty = if count > 100 { 0 } else { runs_empty };
            let results =
                startup::wharf_startup(&wharf, &echo, &work, count, runs_empty, runs_warm)
                    .with_context(|| format!("start-up with {count} plugins"))?;
            eprintln!("start-up with {count}: {results:?}");
            report.startup.extend(results);
        }
        report.baseline_startup = Some(startup::baseline_startup(&baseline, runs_warm)?);
    }

    report.read_overhead(&cli.criterion);
    report.read_reload(&cli.out.join("reload.json"));
    report.finish();
    println!("{}", report.table());
    let json_path = cli.out.join("results.json");
    std::fs::write(&json_path, serde_json::to_string_pretty(&report.to_json())?)
        .with_context(|| format!("writing {}", json_path.display()))?;
    println!("written to {}", json_path.display());
    let png = cli.out.join("results.png");
    if plot::draw(&png, &report.heading(), &report.panels())? {
        println!("plot in {}", png.display());
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}
