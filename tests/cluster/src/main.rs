//! `wharf-cluster`: the scale-out test of `cargo xtask cluster` (and, for a
//! few seconds, of `cargo xtask test`). See docs/replicas.md.
//!
//! Three `wharf serve --http` replicas share one plugin folder, one compile
//! cache and one `--state-key-file`, each with `--session-route wharf-N`;
//! Debian's nginx runs deploy/nginx/wharf.conf in front of them. Through
//! nginx, 2026-07-28 callers, legacy sessions and `subscriptions/listen`
//! clients run while wharf-1 is stopped with SIGTERM and wharf-2 killed with
//! SIGKILL, then both are started again; a plugin then lands in the shared
//! folder, and an `input_required` round trip runs across replicas. The
//! counts are printed; the exit status is 1 if a goal was missed:
//!
//! - no operation hangs;
//! - no 2026-07-28 call and no legacy request fails, except those in flight
//!   on wharf-2 when it was killed (and those fail with an error, not a hang);
//! - legacy sessions whose replica went away are opened again after a 404;
//! - every listen client has a stream open after the restarts and receives
//!   `tools/list_changed` for the new plugin, and at least one of them had
//!   to reconnect;
//! - a round trip whose rounds land on different replicas completes;
//! - the stopped replica exits 0.
//!
//! One current-thread tokio runtime runs every client (the test takes at
//! most one core from the replicas and nginx).

mod clients;
mod nginx;
mod replicas;

use std::io::Read;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Parser;

use clients::{Ledger, Watcher};
use nginx::Nginx;
use replicas::{Replica, Setup, free_port};

/// Three replicas behind nginx, stopped and killed under load.
#[derive(Parser)]
struct Cli {
    /// The `wharf` binary.
    #[arg(long)]
    wharf: PathBuf,
    /// The example plugins (`target/plugins`: echo, calc).
    #[arg(long)]
    plugins: PathBuf,
    /// The test plugins (`target/test-plugins`: conformance).
    #[arg(long)]
    test_plugins: PathBuf,
    /// The reference nginx configuration (deploy/nginx/wharf.conf).
    #[arg(long)]
    nginx_conf: PathBuf,
    /// How long the load runs, in seconds (at least 5).
    #[arg(long, default_value_t = 8)]
    seconds: u64,
    /// Output folder: work/ holds the folder, cache, key and every log.
    #[arg(long)]
    out: PathBuf,
}

/// Clients of each kind.
const MODERN_CALLERS: u64 = 4;
const LEGACY_CLIENTS: u64 = 6;
/// Two per replica, as round robin spreads them.
const WATCHERS: u64 = 6;
/// How long the listen clients may take to see the plugin change.
const CHANGE_PATIENCE: Duration = Duration::from_secs(10);

fn main() -> Result<()> {
    let cli = Cli::parse();
    if cli.seconds < 5 {
        bail!("--seconds must be at least 5 (a stop, a kill and a restart fit in it)");
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let tasks = tokio::task::LocalSet::new();
    let passed = runtime.block_on(tasks.run_until(cluster(&cli)))?;
    if !passed {
        std::process::exit(1);
    }
    Ok(())
}

fn copy_plugin(from: &Path, name: &str, to: &Path) -> Result<()> {
    let source = from.join(format!("{name}.wasm"));
    let bytes = std::fs::read(&source).with_context(|| {
        format!(
            "reading {} (run `cargo xtask plugins` first)",
            source.display()
        )
    })?;
    // Written aside, then renamed: the replicas see the file whole.
    let part = to.join(format!(".{name}.part"));
    std::fs::write(&part, bytes)?;
    std::fs::rename(&part, to.join(format!("{name}.wasm")))?;
    Ok(())
}

/// A fresh work folder with echo and the conformance fixture, a cache and a
/// key file of 32 random bytes in hex.
fn prepare(cli: &Cli) -> Result<Setup> {
    let work = cli.out.join("work");
    let _ = std::fs::remove_dir_all(&work);
    let plugins = work.join("plugins");
    let cache = work.join("cache");
    for dir in [&plugins, &cache] {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    copy_plugin(&cli.plugins, "echo", &plugins)?;
    copy_plugin(&cli.test_plugins, "conformance", &plugins)?;
    let mut random = [0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut random)?;
    let key = work.join("state.key");
    let hex: String = random.iter().map(|b| format!("{b:02x}")).collect();
    std::fs::write(&key, hex + "\n")?;
    Ok(Setup {
        wharf: cli.wharf.clone(),
        plugins,
        cache,
        key,
        work,
    })
}

/// Sleeps until `at` (at once if it has passed).
async fn until(at: Instant) {
    tokio::time::sleep_until(at.into()).await;
}

async fn cluster(cli: &Cli) -> Result<bool> {
    let setup = prepare(cli)?;
    let mut replicas = (0..3).map(Replica::new).collect::<Result<Vec<_>>>()?;
    eprintln!("cluster: starting 3 replicas");
    for replica in &mut replicas {
        replica.start(&setup).await?;
    }
    let addrs: Vec<SocketAddr> = replicas.iter().map(|r| r.addr).collect();
    let reference = std::fs::read_to_string(&cli.nginx_conf)
        .with_context(|| format!("reading {}", cli.nginx_conf.display()))?;
    let listen = free_port()?;
    let conf = nginx::configure(&reference, &addrs, listen)?;
    let nginx = Nginx::start(&setup.work.join("nginx"), &conf, listen).await?;
    eprintln!(
        "cluster: nginx on {listen} in front of {}",
        replicas
            .iter()
            .map(|r| format!("{} on {}", r.name(), r.addr))
            .collect::<Vec<_>>()
            .join(", ")
    );

    let ledger = Rc::new(Ledger::default());
    let watchers: Vec<Rc<Watcher>> = (0..WATCHERS).map(|_| Rc::default()).collect();
    let mut watching = Vec::new();
    for (n, watcher) in watchers.iter().enumerate() {
        watching.push(tokio::task::spawn_local(clients::watcher(
            listen,
            ledger.clone(),
            watcher.clone(),
            n as u64,
        )));
    }
    let mut load = Vec::new();
    for n in 0..MODERN_CALLERS {
        load.push(tokio::task::spawn_local(clients::modern_caller(
            listen,
            ledger.clone(),
            (n + 1) << 40,
        )));
    }
    for _ in 0..LEGACY_CLIENTS {
        load.push(tokio::task::spawn_local(clients::legacy_client(
            listen,
            ledger.clone(),
        )));
    }

    let started = Instant::now();
    let length = Duration::from_secs(cli.seconds);
    until(started + length / 5).await;
    eprintln!("cluster: SIGTERM to {}", replicas[1].name());
    replicas[1].signal(libc::SIGTERM)?;
    until(started + length * 2 / 5).await;
    eprintln!("cluster: SIGKILL to {}", replicas[2].name());
    let killed_at = Instant::now();
    replicas[2].signal(libc::SIGKILL)?;
    let killed = replicas[2].addr.to_string();
    replicas[2].exited().await?;
    // Until the kernel has torn the process down, its listening socket still
    // completes connections, which then reset: those requests reached the
    // killed replica too.
    let dead_at = Instant::now();
    let drained = replicas[1].exited().await?;
    for replica in [1, 2] {
        replicas[replica].start(&setup).await?;
        eprintln!("cluster: {} started again", replicas[replica].name());
    }
    until(started + length * 3 / 5).await;
    eprintln!("cluster: calc lands in the shared plugin folder");
    ledger.changed_at.set(Some(Instant::now()));
    copy_plugin(&cli.plugins, "calc", &setup.plugins)?;
    let changed = Instant::now();
    while !watchers.iter().all(|w| w.saw_change.get()) && changed.elapsed() < CHANGE_PATIENCE {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let change_seen_in = changed.elapsed();
    until(started + length).await;
    ledger.stop.set(true);
    for task in load {
        // Every client finishes the operation it is in (bounded by HANG).
        task.await?;
    }
    for task in watching {
        task.abort();
    }

    // Round trips until one has rounds on two replicas or more (round robin
    // makes the first one do so, unless other traffic interleaves).
    let mut round_trips = Vec::new();
    for _ in 0..4 {
        let upstreams = clients::round_trip(listen).await;
        let across = upstreams.as_ref().is_ok_and(|u| {
            let mut distinct = u.clone();
            distinct.sort();
            distinct.dedup();
            distinct.len() > 1
        });
        round_trips.push(upstreams.map_err(|e| format!("{e:#}")));
        if across {
            break;
        }
    }

    let errors = nginx.errors();
    nginx.stop().await?;
    for replica in &mut replicas {
        replica.signal(libc::SIGTERM)?;
        replica.exited().await?;
    }

    let names: Vec<(String, String)> = replicas
        .iter()
        .map(|r| (r.addr.to_string(), r.name()))
        .collect();
    let report = Report {
        names: &names,
        ledger: &ledger,
        watchers: &watchers,
        killed_at,
        dead_at,
        killed: &killed,
        drained_cleanly: drained.success(),
        change_seen_in,
        round_trips: &round_trips,
    };
    report.print();
    let missed = report.missed();
    for goal in &missed {
        eprintln!("cluster: MISSED: {goal}");
    }
    if !missed.is_empty() {
        eprintln!("cluster: nginx's error log:\n{errors}");
    }
    Ok(missed.is_empty())
}

/// What the run saw, and the goals it is judged by.
struct Report<'a> {
    /// Each replica's address (as nginx names it) and name.
    names: &'a [(String, String)],
    ledger: &'a Ledger,
    watchers: &'a [Rc<Watcher>],
    killed_at: Instant,
    /// When its exit was seen.
    dead_at: Instant,
    /// The killed replica's address, as nginx names it.
    killed: &'a str,
    drained_cleanly: bool,
    change_seen_in: Duration,
    round_trips: &'a [Result<Vec<String>, String>],
}

impl Report<'_> {
    /// Whether a failure is excused: the request was in flight on the killed
    /// replica when it was killed (or reached it while it was dying).
    fn excused(&self, failure: &clients::Failure) -> bool {
        failure.started <= self.dead_at
            && failure.ended >= self.killed_at
            && failure
                .upstream
                .as_deref()
                .is_none_or(|tried| tried.rsplit(", ").next() == Some(self.killed))
    }

    /// The replica at `addr`, by name.
    fn name_of<'s>(&'s self, addr: &'s str) -> &'s str {
        self.names
            .iter()
            .find(|(a, _)| a == addr)
            .map_or(addr, |(_, name)| name.as_str())
    }

    /// The excused failures of kinds `what` as how each failed (`HTTP 502`,
    /// `the server closed the connection`), and the others described whole.
    fn failures(&self, what: &[&str]) -> (Vec<String>, Vec<String>) {
        let failures = self.ledger.failures.borrow();
        let ours = failures.iter().filter(|f| what.contains(&f.what));
        let (excused, not): (Vec<_>, Vec<_>) = ours.partition(|f| self.excused(f));
        let how = excused
            .iter()
            .map(|f| f.detail.split(':').next().unwrap_or_default().to_owned())
            .collect();
        let described = not
            .iter()
            .map(|f| format!("{} via {:?}: {}", f.what, f.upstream, f.detail))
            .collect();
        (how, described)
    }

    /// `N` or `N (HTTP 502: 2, the server closed the connection: 1)`.
    fn tally(how: &[String]) -> String {
        let mut kinds: Vec<(&str, usize)> = Vec::new();
        for kind in how {
            match kinds.iter_mut().find(|(k, _)| k == kind) {
                Some((_, n)) => *n += 1,
                None => kinds.push((kind, 1)),
            }
        }
        if kinds.is_empty() {
            return "0".into();
        }
        let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{k}: {n}")).collect();
        format!("{} ({})", how.len(), kinds.join(", "))
    }

    fn print(&self) {
        let (modern_excused, modern_failed) = self.failures(&["2026-07-28 call"]);
        let (legacy_excused, legacy_failed) = self.failures(&["legacy call", "legacy initialize"]);
        let reconnects: u64 = self.watchers.iter().map(|w| w.reconnects.get()).sum();
        let failed_opens: u64 = self.watchers.iter().map(|w| w.failed_opens.get()).sum();
        let saw = self.watchers.iter().filter(|w| w.saw_change.get()).count();
        println!(
            "cluster: 3 replicas behind nginx; wharf-1 stopped (SIGTERM), wharf-2 killed (SIGKILL), both restarted"
        );
        println!(
            "  2026-07-28 calls: {} ok, {} failed in flight on the killed replica, {} failed otherwise",
            self.ledger.modern_ok.get(),
            Self::tally(&modern_excused),
            modern_failed.len()
        );
        println!(
            "  legacy calls: {} ok, {} failed in flight on the killed replica, {} failed otherwise; {} sessions re-initialized after a 404",
            self.ledger.legacy_ok.get(),
            Self::tally(&legacy_excused),
            legacy_failed.len(),
            self.ledger.reinitialized.get()
        );
        println!(
            "  listen clients: {}, {} reconnects ({} failed opens retried), {} saw list_changed after the plugin change (all within {} ms)",
            self.watchers.len(),
            reconnects,
            failed_opens,
            saw,
            self.change_seen_in.as_millis()
        );
        println!("  hung operations: {}", self.ledger.hung.borrow().len());
        for (n, trip) in self.round_trips.iter().enumerate() {
            match trip {
                Ok(upstreams) => println!(
                    "  input_required round trip {}: complete, rounds answered by {}",
                    n + 1,
                    upstreams
                        .iter()
                        .map(|u| self.name_of(u))
                        .collect::<Vec<_>>()
                        .join(" then ")
                ),
                Err(error) => println!("  input_required round trip {}: FAILED: {error}", n + 1),
            }
        }
        println!(
            "  the SIGTERM'd replica exited {}",
            if self.drained_cleanly {
                "0"
            } else {
                "with an error"
            }
        );
        for failure in modern_failed.iter().chain(&legacy_failed) {
            println!("  failure: {failure}");
        }
        for hung in self.ledger.hung.borrow().iter() {
            println!("  hung: {hung}");
        }
    }

    /// The goals missed, in words.
    fn missed(&self) -> Vec<String> {
        let mut missed = Vec::new();
        let (_, modern_failed) = self.failures(&["2026-07-28 call"]);
        let (_, legacy_failed) = self.failures(&["legacy call", "legacy initialize"]);
        if !self.ledger.hung.borrow().is_empty() {
            missed.push("an operation hung".to_string());
        }
        if !modern_failed.is_empty() {
            missed.push(format!(
                "{} 2026-07-28 calls failed that were not in flight on the killed replica",
                modern_failed.len()
            ));
        }
        if !legacy_failed.is_empty() {
            missed.push(format!(
                "{} legacy requests failed that were not in flight on the killed replica",
                legacy_failed.len()
            ));
        }
        if self.ledger.modern_ok.get() == 0 || self.ledger.legacy_ok.get() == 0 {
            missed.push("no successful calls in one era".to_string());
        }
        if self.ledger.reinitialized.get() == 0 {
            missed.push(
                "no legacy session was re-initialized after its replica went away".to_string(),
            );
        }
        if self.watchers.iter().all(|w| w.reconnects.get() == 0) {
            missed.push("no listen client had to reconnect".to_string());
        }
        let unseen = self.watchers.iter().filter(|w| !w.saw_change.get()).count();
        if unseen > 0 {
            missed.push(format!(
                "{unseen} listen clients never saw list_changed after the plugin change"
            ));
        }
        if self.round_trips.iter().any(Result::is_err) {
            missed.push("an input_required round trip failed".to_string());
        }
        let across = self
            .round_trips
            .iter()
            .flatten()
            .any(|u| u.iter().any(|r| r != &u[0]));
        if !across {
            missed.push("no round trip moved between replicas".to_string());
        }
        if !self.drained_cleanly {
            missed.push("the SIGTERM'd replica did not exit 0".to_string());
        }
        missed
    }
}
