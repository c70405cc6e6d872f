//! `wharf-soak`: the soak of `cargo xtask soak` (and, for 60 s, of `cargo
//! xtask test`). See docs/reliability.md for the goals.
//!
//! Three `wharf serve` processes on one plugin folder: stdio in 2026-07-28,
//! stdio in a legacy session, and HTTP. Client tasks send a mix of calls,
//! listings, progress calls and multi round-trip rounds over each (HTTP in
//! both eras), one task per server calls the misbehaving plugin, listeners
//! count `tools/list_changed`, and the folder churns. Every request is
//! counted sent and answered, every operation judged, every server sampled
//! once a second. Then the goals are checked, a table printed and
//! `report.json` written; the exit status is 1 if a goal was missed.
//!
//! Strategy: one current-thread tokio runtime runs everything (the driver
//! takes at most one core from the servers). Client tasks, the churn and the
//! sampler share the ledger and a `stopping` flag; at the deadline the flag
//! is set, the clients finish the operation they are in, and only then are
//! the servers told to stop, so every request has had its chance.

mod churn;
mod http;
mod ledger;
mod listeners;
mod report;
mod samples;
mod servers;
mod stdio;
mod workload;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Parser;

use churn::{Churn, Components};
use http::{HttpChannel, Watch};
use ledger::Ledger;
use listeners::Listener;
use report::Run;
use samples::Series;
use servers::{Server, fresh_folders, host_panics};
use stdio::StdioPeer;
use workload::{Channel, Client, Era, HOSTILE, ROTATION};

/// Soak the real `wharf` binary under mixed load while its plugins churn.
#[derive(Parser)]
struct Cli {
    /// The `wharf` binary (debug or release build).
    #[arg(long)]
    wharf: PathBuf,
    /// The example plugins (`target/plugins`: echo, calc, textstats).
    #[arg(long)]
    plugins: PathBuf,
    /// The test plugins (`target/test-plugins`: misbehave, conformance).
    #[arg(long)]
    test_plugins: PathBuf,
    /// How long to soak, in minutes.
    #[arg(long, conflicts_with = "seconds")]
    minutes: Option<u64>,
    /// How long to soak, in seconds (for CI).
    #[arg(long)]
    seconds: Option<u64>,
    /// Output folder: report.json, and work/ (the folder, cache and server logs).
    #[arg(long)]
    out: PathBuf,
    /// Time between two changes of the plugin folder.
    #[arg(long, default_value_t = 2000)]
    step_ms: u64,
    /// Load clients per channel (stdio 2026-07-28, stdio legacy, HTTP in each era).
    #[arg(long, default_value_t = 2)]
    clients: u64,
    /// Pause of a client between two operations.
    #[arg(long, default_value_t = 5)]
    pace_ms: u64,
    /// Pause of the misbehaving client between two calls.
    #[arg(long, default_value_t = 3000)]
    hostile_pace_ms: u64,
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    let duration = match (cli.minutes, cli.seconds) {
        (Some(minutes), _) => Duration::from_secs(minutes * 60),
        (None, Some(seconds)) => Duration::from_secs(seconds),
        (None, None) => bail!("say how long: --minutes N or --seconds N"),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let tasks = tokio::task::LocalSet::new();
    let passed = runtime.block_on(tasks.run_until(soak(&cli, duration)))?;
    if !passed {
        std::process::exit(1);
    }
    Ok(())
}

/// The warm-up excluded from the growth fit: a quarter of the run, between
/// 10 s and 2 min (compiles, the first cycles' cache misses, pools filling).
fn warmup_of(duration: Duration) -> Duration {
    (duration / 4).clamp(Duration::from_secs(10), Duration::from_secs(120))
}

fn read(dir: &Path, name: &str) -> Result<Vec<u8>> {
    let path = dir.join(format!("{name}.wasm"));
    std::fs::read(&path).with_context(|| {
        format!(
            "reading {} (run `cargo xtask plugins` first)",
            path.display()
        )
    })
}

async fn soak(cli: &Cli, duration: Duration) -> Result<bool> {
    let mut setup = fresh_folders(&cli.out)?;
    setup.wharf = cli.wharf.clone();
    let components = Components {
        echo: read(&cli.plugins, "echo")?,
        calc: read(&cli.plugins, "calc")?,
        textstats: read(&cli.plugins, "textstats")?,
        misbehave: read(&cli.test_plugins, "misbehave")?,
        conformance: read(&cli.test_plugins, "conformance")?,
    };
    churn::fill(&setup.plugins, &components)?;

    let ledger = Arc::new(Ledger::default());
    let stopping = Arc::new(AtomicBool::new(false));
    let listener = |name| Arc::new(Listener::new(name));
    let listeners = [
        listener("stdio listen"),
        listener("stdio legacy"),
        listener("http listen 1"),
        listener("http listen 2"),
        listener("http GET stream"),
    ];

    eprintln!("soak: starting the servers");
    let mut modern = Server::start(&setup, "stdio-modern", &[]).await?;
    let mut legacy = Server::start(&setup, "stdio-legacy", &[]).await?;
    let mut served = Server::start(&setup, "http", &["--http", "127.0.0.1:0"]).await?;
    let addr = served.http_addr().await?;
    let peer = |server: &mut Server, label, era, listener: &Arc<Listener>| {
        let stdin = server.child.stdin.take().expect("piped stdin");
        let stdout = server.child.stdout.take().expect("piped stdout");
        StdioPeer::new(label, era, stdin, stdout, ledger.clone(), listener.clone())
    };
    let modern_peer = peer(&mut modern, "stdio-modern", Era::Modern, &listeners[0]);
    let legacy_peer = peer(&mut legacy, "stdio-legacy", Era::Legacy, &listeners[1]);
    modern_peer.open().await.context("stdio-modern")?;
    legacy_peer.open().await.context("stdio-legacy")?;
    let watch = |listener: &Arc<Listener>| Watch {
        listener: listener.clone(),
        ledger: ledger.clone(),
        stopping: stopping.clone(),
    };
    watch(&listeners[2]).listen(addr, "soak-1").await?;
    watch(&listeners[3]).listen(addr, "soak-2").await?;
    watch(&listeners[4]).session_stream(addr).await?;

    let started = Instant::now();
    let deadline = started + duration;
    eprintln!(
        "soak: {} s of load on pids {}, {}, {} (HTTP on {addr})",
        duration.as_secs(),
        modern.pid,
        legacy.pid,
        served.pid
    );
    let series = vec![
        Series::new("stdio-modern", modern.pid, None),
        Series::new("stdio-legacy", legacy.pid, None),
        Series::new("http", served.pid, Some(addr)),
    ];
    let sampler = tokio::task::spawn_local(samples::sample(
        series,
        started,
        stopping.clone(),
        ledger.clone(),
    ));
    let churn = tokio::task::spawn_local(
        Churn {
            dir: setup.plugins.clone(),
            components,
            listeners: listeners.to_vec(),
            ledger: ledger.clone(),
            interval: Duration::from_millis(cli.step_ms),
            stopping: stopping.clone(),
        }
        .run(),
    );

    // The load: every channel with its clients, and a misbehaving client per server.
    let mut clients = Vec::new();
    let pace = Duration::from_millis(cli.pace_ms);
    let hostile_pace = Duration::from_millis(cli.hostile_pace_ms);
    for n in 0..cli.clients {
        let first_id = (n + 1) << 40;
        let start = n as usize * 5;
        clients.push(tokio::task::spawn_local(drive(
            Client::new(modern_peer.channel(), &ledger, format!("sm{n}")),
            ROTATION,
            start,
            pace,
            deadline,
        )));
        clients.push(tokio::task::spawn_local(drive(
            Client::new(legacy_peer.channel(), &ledger, format!("sl{n}")),
            ROTATION,
            start,
            pace,
            deadline,
        )));
        for (era, label, prefix) in [
            (Era::Modern, "http-modern", "hm"),
            (Era::Legacy, "http-legacy", "hl"),
        ] {
            let channel = HttpChannel::new(addr, era, label, ledger.clone(), first_id);
            clients.push(tokio::task::spawn_local(drive(
                Client::new(channel, &ledger, format!("{prefix}{n}")),
                ROTATION,
                start,
                pace,
                deadline,
            )));
        }
    }
    let hostile_id = 1 << 50;
    clients.push(tokio::task::spawn_local(drive(
        Client::new(modern_peer.channel(), &ledger, "xm".into()),
        HOSTILE,
        0,
        hostile_pace,
        deadline,
    )));
    clients.push(tokio::task::spawn_local(drive(
        Client::new(legacy_peer.channel(), &ledger, "xl".into()),
        HOSTILE,
        1,
        hostile_pace,
        deadline,
    )));
    clients.push(tokio::task::spawn_local(drive(
        Client::new(
            HttpChannel::new(addr, Era::Modern, "http-modern", ledger.clone(), hostile_id),
            &ledger,
            "xh".into(),
        ),
        HOSTILE,
        2,
        hostile_pace,
        deadline,
    )));

    let warmup = warmup_of(duration);
    tokio::time::sleep_until(deadline.into()).await;
    eprintln!("soak: time is up; letting the clients finish");
    stopping.store(true, Ordering::Relaxed);
    for client in clients {
        client.await.context("a client task")?;
    }
    let churn = churn.await.context("the churn task")?;
    // Notifications of the last change may still be on their way.
    tokio::time::sleep(Duration::from_secs(3)).await;
    // What the listeners saw, and whether their streams were still open,
    // before the servers are stopped (which ends the streams).
    let listened: Vec<(u64, bool)> = listeners.iter().map(|l| (l.seen(), l.is_open())).collect();
    let series = sampler.await.context("the sampler task")?;

    let mut exits = Vec::new();
    modern_peer.close().await;
    legacy_peer.close().await;
    served.terminate();
    for server in [&mut modern, &mut legacy, &mut served] {
        let (how, ok) = match server.exit_status().await {
            Ok(status) => (status.to_string(), status.success()),
            Err(error) => (format!("{error:#}"), false),
        };
        exits.push((server.label, how, ok));
    }
    let panics: Vec<String> = [&modern, &legacy, &served]
        .iter()
        .flat_map(|server| host_panics(&server.log_text()))
        .collect();

    let run = Run {
        duration,
        warmup,
        ledger: &ledger,
        listeners: &listeners,
        listened: &listened,
        churn: &churn,
        series: &series,
        exits,
        panics,
    };
    let goals = run.goals();
    println!("{}", run.table(&goals));
    let path = cli.out.join("report.json");
    std::fs::write(&path, serde_json::to_string_pretty(&run.to_json(&goals))?)
        .with_context(|| format!("writing {}", path.display()))?;
    println!("written to {}", path.display());
    println!("server logs in {}", setup.work.display());
    Ok(goals.iter().all(|g| g.met))
}

/// Performs `ops` in turn, from `start`, pausing `pace` between them, until
/// the deadline.
async fn drive<C: Channel>(
    mut client: Client<C>,
    ops: &'static [workload::Op],
    start: usize,
    pace: Duration,
    deadline: Instant,
) {
    let mut turn = start;
    while Instant::now() < deadline {
        client.perform(ops[turn % ops.len()]).await;
        turn += 1;
        tokio::time::sleep(pace).await;
    }
}
