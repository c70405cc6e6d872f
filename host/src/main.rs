//! The `wharf` command line.

/// mimalloc rather than glibc's malloc: a call allocates and frees many small
/// buffers on whichever worker thread runs it, and glibc's per-arena locks and
/// consolidation showed as a fifth of the CPU of a loaded HTTP server. It costs
/// idle memory (docs/performance.md: `MIMALLOC_ARENA_EAGER_COMMIT=0
/// MIMALLOC_PURGE_DELAY=0` trades it back).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use tracing_subscriber::EnvFilter;

use wharf::docs;
use wharf::http::{BearerToken, HttpOptions, OriginPolicy};
use wharf::loader::{AllSettled, PluginFolder};
use wharf::metrics::Metrics;
use wharf::oneshot::{CallResult, Single, content_text};
use wharf::registry::Registry;
use wharf::runtime::{CallLimits, Ceilings, CompiledCache, Placement, Runtime, RuntimeOptions};
use wharf::server::{SUPPORTED_VERSIONS, ServerOptions, WharfServer};
use wharf::stdio::{BusyPoll, DEFAULT_BUSY_POLL_US, DEFAULT_MAX_LINE_BYTES, LineTransport};
use wharf::watcher::FolderWatch;

/// Serve WebAssembly components as MCP tools.
#[derive(Parser)]
#[command(name = "wharf", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Load every component in a folder and serve its tools over MCP (stdio, or
    /// Streamable HTTP with `--http`).
    Serve(ServeArgs),
    /// Describe one component without serving it: its kind, tools with their
    /// schemas, skipped functions, and the permissions it imports and is granted.
    Inspect(InspectArgs),
    /// Run one tool of one component once and print its result.
    Call(CallArgs),
    /// Write the doc comments of a WIT folder into a component (its
    /// `package-docs` and `wharf-package-docs` sections), so Wharf can use them as
    /// tool descriptions.
    EmbedDocs(EmbedDocsArgs),
}

#[derive(Args)]
struct InspectArgs {
    /// The component (`.wasm`).
    file: PathBuf,
    /// The manifest to apply [default: `NAME.toml` beside the component].
    #[arg(long)]
    manifest: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    cache: CacheArgs,
}

#[derive(Args)]
struct CallArgs {
    /// The component (`.wasm`).
    file: PathBuf,
    /// The tool, with or without the `<plugin>_` prefix.
    tool: String,
    /// The arguments, a JSON object.
    #[arg(long, default_value = "{}")]
    args: String,
    /// The manifest to apply [default: `NAME.toml` beside the component].
    #[arg(long)]
    manifest: Option<PathBuf>,
    #[command(flatten)]
    limits: LimitArgs,
    #[command(flatten)]
    cache: CacheArgs,
}

#[derive(Args)]
struct EmbedDocsArgs {
    /// The WIT folder whose doc comments to embed.
    #[arg(long)]
    wit: PathBuf,
    /// The world the component implements [default: the package's only world].
    #[arg(long)]
    world: Option<String>,
    /// The component to read.
    input: PathBuf,
    /// Where to write the component with docs (may be the input itself).
    #[arg(short, long)]
    output: PathBuf,
}

/// The limits of one call (defaults for plugins whose manifest sets none).
#[derive(Args)]
struct LimitArgs {
    /// Wall-clock limit of one tool call, in milliseconds (default for plugins
    /// whose manifest sets no `timeout-ms`).
    #[arg(long, default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(1..))]
    timeout_ms: u64,

    /// Memory limit of one tool call, in MiB (default for plugins whose manifest
    /// sets no `memory-mib`).
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=4096))]
    memory_mib: u32,

    /// Fuel (about one unit per WebAssembly instruction) of one tool call; default
    /// for plugins whose manifest sets no `fuel`. Unmetered if not given.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    fuel: Option<u64>,

    /// Largest result of one tool call, in bytes (content plus structured content).
    #[arg(long, default_value_t = 4 << 20, value_parser = clap::value_parser!(u64).range(1..))]
    max_output_bytes: u64,
}

impl LimitArgs {
    fn call_limits(&self) -> CallLimits {
        CallLimits {
            timeout: Duration::from_millis(self.timeout_ms),
            memory_bytes: (self.memory_mib as usize) << 20,
            fuel: self.fuel,
            max_output_bytes: usize::try_from(self.max_output_bytes).unwrap_or(usize::MAX),
            ..CallLimits::default()
        }
    }
}

/// Where compiled components are kept.
#[derive(Args)]
struct CacheArgs {
    /// Where compiled components are kept between runs [default: the user cache
    /// directory, e.g. ~/.cache/wharf].
    #[arg(long, env = "WHARF_CACHE_DIR")]
    cache_dir: Option<PathBuf>,

    /// Compile every component at every start; keep nothing on disk (overrides
    /// `--cache-dir`).
    #[arg(long)]
    no_cache: bool,
}

impl CacheArgs {
    fn root(self) -> Option<PathBuf> {
        match (self.no_cache, self.cache_dir) {
            (true, _) => None,
            (false, Some(dir)) => Some(dir),
            (false, None) => CompiledCache::default_root(),
        }
    }
}

#[derive(Args)]
struct ServeArgs {
    /// Folder of plugin components (`*.wasm`).
    #[arg(long, env = "WHARF_PLUGINS")]
    plugins: PathBuf,

    /// Most tools returned in one `tools/list` page.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    page_size: u32,

    /// How long clients may cache list results, in milliseconds (`ttlMs`).
    #[arg(long, default_value_t = 10_000)]
    list_ttl_ms: u64,

    #[command(flatten)]
    limits: LimitArgs,

    /// Concurrent calls of one plugin; default for plugins whose manifest sets no
    /// `max-concurrent-calls`. A call over the limit is refused.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..))]
    plugin_concurrency: u32,

    /// Concurrent calls of all plugins together; sizes the instance pool. A call
    /// over the limit is refused.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=1000))]
    max_concurrent_calls: u32,

    /// The largest `memory-mib` a manifest may ask for.
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u32).range(1..=4096))]
    max_memory_mib: u32,

    /// The largest `timeout-ms` a manifest may ask for.
    #[arg(long, default_value_t = 600_000, value_parser = clap::value_parser!(u64).range(1..))]
    max_timeout_ms: u64,

    /// Allocate instances on demand instead of from wasmtime's pooling allocator.
    #[arg(long)]
    no_pool: bool,

    /// Compile a new component with Cranelift before serving it, rather than
    /// serving it at once from Winch's quick compile while Cranelift's
    /// optimised code is made in the background.
    #[arg(long)]
    no_quick_compile: bool,

    /// Largest accepted stdio message, in bytes.
    #[arg(long, default_value_t = DEFAULT_MAX_LINE_BYTES)]
    max_message_bytes: usize,

    /// While stdio requests arrive back to back, poll stdin for up to this many
    /// microseconds before the serving thread sleeps, which saves the wake-up
    /// (0: never). Off where Wharf may use one CPU only.
    #[arg(long, default_value_t = DEFAULT_BUSY_POLL_US, value_parser = clap::value_parser!(u64).range(0..=1000))]
    stdio_busy_poll_us: u64,

    #[command(flatten)]
    cache: CacheArgs,

    /// Load the folder once; ignore later changes to it.
    #[arg(long)]
    no_watch: bool,

    #[command(flatten)]
    http: HttpArgs,
}

/// Streamable HTTP transport settings.
#[derive(Args)]
struct HttpArgs {
    /// Serve MCP over Streamable HTTP at `http://ADDR/mcp` instead of stdio.
    /// `PORT` alone binds 127.0.0.1; port 0 picks a free port.
    #[arg(long, value_name = "ADDR", value_parser = parse_listen_addr)]
    http: Option<SocketAddr>,

    /// A browser origin allowed to call the server (`scheme://host[:port]`,
    /// `null`, or `*` for any); repeatable. Loopback origins are allowed when
    /// bound to loopback.
    #[arg(long = "allowed-origin", value_name = "ORIGIN")]
    allowed_origins: Vec<String>,

    /// A `Host` name the server answers to (DNS-rebinding defence); repeatable.
    /// Loopback names are allowed when bound to loopback; with no list on a
    /// public address, any Host is accepted.
    #[arg(long = "allowed-host", value_name = "HOST")]
    allowed_hosts: Vec<String>,

    /// Require `Authorization: Bearer TOKEN` on /mcp and /metrics.
    #[arg(long, env = "WHARF_AUTH_TOKEN", hide_env_values = true)]
    auth_token: Option<String>,

    /// Largest accepted HTTP request body, in bytes (413 above).
    #[arg(long, default_value_t = 4 << 20)]
    max_body_bytes: usize,

    /// Longest an HTTP request may take to start its response, in milliseconds
    /// (408 above). Default: the call timeout plus 5 seconds.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    request_timeout_ms: Option<u64>,

    /// Close a legacy HTTP session after this many seconds without traffic.
    #[arg(long, default_value_t = 1800, value_parser = clap::value_parser!(u64).range(1..))]
    session_idle_secs: u64,
}

/// `PORT` (on 127.0.0.1), `localhost:PORT`, or an `IP:PORT` socket address.
fn parse_listen_addr(value: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = value.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    if let Some(port) = value.strip_prefix("localhost:") {
        let port = port.parse::<u16>().map_err(|e| format!("bad port: {e}"))?;
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    value
        .parse()
        .map_err(|_| format!("expected PORT, localhost:PORT or IP:PORT, got {value:?}"))
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    init_logging();
    no_transparent_huge_pages();
    match cli.command {
        Command::Serve(args) => serve_on_fitting_runtime(args),
        Command::Inspect(args) => multi_threaded()?.block_on(inspect(args)),
        Command::Call(args) => {
            let failed = multi_threaded()?.block_on(call(args))?;
            // Leave at once: the runtime's threads need no orderly shutdown.
            std::process::exit(i32::from(failed));
        }
        Command::EmbedDocs(args) => embed_docs(args),
    }
}

/// Turns transparent huge pages off for this process (Linux; elsewhere there
/// is nothing to do). mimalloc asks for them on its arenas, and Wharf's memory
/// churns: compilations and instances allocate and free in bursts, mimalloc
/// hands freed memory back, and every later fault on it zeroed a whole 2 MiB
/// page. Starting with 100 new plugins spent most of its time in the kernel
/// zeroing pages (docs/performance.md). Where THP is on for all memory, it
/// would also back the pool's linear memories, whose few dirty 4 KiB pages a
/// finished call resets.
fn no_transparent_huge_pages() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: PR_SET_THP_DISABLE takes integer arguments only and changes
        // nothing but this process's page-fault policy.
        let done = unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
        if done != 0 {
            let error = std::io::Error::last_os_error();
            tracing::warn!("could not turn transparent huge pages off: {error}");
        }
    }
}

/// A tokio runtime with a worker per core.
fn multi_threaded() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .thread_name("wharf-worker")
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// Logs go to stderr only: stdout is the stdio transport. `WHARF_LOG` takes
/// tracing's filter syntax (for example `wharf=debug`).
fn init_logging() {
    let filter =
        EnvFilter::try_from_env("WHARF_LOG").unwrap_or_else(|_| EnvFilter::new("wharf=info,warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
}

/// Both transports serve the protocol on single-threaded runtimes, so a short
/// call never hops between threads: stdio on this thread (it has one client;
/// see [`BusyPoll`] for how it waits for the next request),
/// HTTP on one serving thread per core (see `wharf::http`). Guest code that
/// runs for longer than an epoch tick moves to a pool of workers (see
/// [`Placement`]), which also runs start-up, reloads and other background work
/// under HTTP.
fn serve_on_fitting_runtime(args: ServeArgs) -> anyhow::Result<()> {
    let workers = multi_threaded()?;
    let placement = Placement::MoveLongCalls(workers.handle().clone());
    if args.http.http.is_some() {
        return workers.block_on(serve(args, placement));
    }
    let mut stdio = tokio::runtime::Builder::new_current_thread();
    match BusyPoll::for_stdin(Duration::from_micros(args.stdio_busy_poll_us)) {
        Some(poll) => {
            tracing::debug!(
                budget_us = poll.budget().as_micros() as u64,
                "stdio busy-poll on"
            );
            let poll = Arc::new(poll);
            let after = poll.clone();
            stdio
                .on_thread_park(move || poll.before_park())
                .on_thread_unpark(move || after.after_unpark());
        }
        None => tracing::debug!("stdio busy-poll off"),
    }
    stdio
        .enable_all()
        .build()
        .context("starting the async runtime")?
        .block_on(serve(args, placement))
}

async fn serve(args: ServeArgs, placement: Placement) -> anyhow::Result<()> {
    let defaults = CallLimits {
        max_concurrent_calls: args.plugin_concurrency as usize,
        ..args.limits.call_limits()
    };
    let cache_root = args.cache.root();
    let ceilings = Ceilings {
        memory_bytes: (args.max_memory_mib as usize) << 20,
        timeout: Duration::from_millis(args.max_timeout_ms),
    };
    anyhow::ensure!(
        defaults.memory_bytes <= ceilings.memory_bytes && defaults.timeout <= ceilings.timeout,
        "--memory-mib and --timeout-ms may not exceed --max-memory-mib and --max-timeout-ms"
    );
    let runtime = Arc::new(Runtime::with_options(RuntimeOptions {
        defaults,
        ceilings,
        max_concurrent_calls: args.max_concurrent_calls as usize,
        pooling: !args.no_pool,
        cache_root: cache_root.clone(),
        placement,
        quick_compile: !args.no_quick_compile,
        ..RuntimeOptions::default()
    })?);
    let pooled = runtime.is_pooled();
    let started = std::time::Instant::now();
    // Watch before the first scan, so nothing written meanwhile is missed.
    let watch = if args.no_watch {
        None
    } else {
        Some(FolderWatch::start(&args.plugins)?)
    };
    let mut folder = PluginFolder::new(&args.plugins, runtime);
    folder.scan(&AllSettled).await?;
    let set = folder.tool_set();
    tracing::info!(
        plugins = set.plugins().len(),
        tools = set.tools().len(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        cache = %cache_root.as_deref().map(|p| p.display().to_string()).unwrap_or_else(|| "off".into()),
        watching = watch.is_some(),
        pooled,
        "plugins loaded"
    );
    let metrics = Arc::new(Metrics::new());
    metrics.set_plugins_loaded(set.plugins().len());
    let registry = Arc::new(Registry::new(set));
    if let Some(watch) = watch {
        watch.spawn(folder, registry.clone(), metrics.clone());
    }
    let server = WharfServer::new(
        registry,
        ServerOptions {
            page_size: args.page_size as usize,
            list_ttl: Duration::from_millis(args.list_ttl_ms),
        },
    )
    .with_metrics(metrics.clone());

    if let Some(addr) = args.http.http {
        let call_timeout = Duration::from_millis(args.limits.timeout_ms);
        let http = args.http;
        let options = HttpOptions {
            origins: OriginPolicy {
                local: addr.ip().is_loopback(),
                hosts: http.allowed_hosts,
                origins: http.allowed_origins,
            },
            token: http
                .auth_token
                .filter(|t| !t.is_empty())
                .map(BearerToken::new),
            max_body_bytes: http.max_body_bytes,
            request_timeout: http
                .request_timeout_ms
                .map(Duration::from_millis)
                .unwrap_or(call_timeout + Duration::from_secs(5)),
            session_idle: Duration::from_secs(http.session_idle_secs),
            shutdown_grace: call_timeout + Duration::from_secs(1),
            ..HttpOptions::default()
        };
        wharf::http::serve(
            move || server.for_session(),
            metrics,
            addr,
            options,
            shutdown_signal(),
        )
        .await
        .context("serving MCP over HTTP")?;
        tracing::info!("HTTP server stopped");
        return Ok(());
    }
    tracing::info!("serving MCP on stdio");

    let (stdin, stdout) = rmcp::transport::io::stdio_pipes();
    let transport = LineTransport::new(
        tokio::io::BufReader::new(stdin),
        stdout,
        args.max_message_bytes,
        SUPPORTED_VERSIONS,
    );
    let service = match rmcp::serve_server(server, transport).await {
        Ok(service) => service,
        // A client that left before its first request (or sent only lines the
        // screen answered itself) ends the server as stdin's end does later.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => {
            tracing::info!("stdin closed before the first request, exiting");
            return Ok(());
        }
        Err(error) => return Err(error).context("starting the MCP service"),
    };
    let reason = service.waiting().await.context("serving MCP")?;
    tracing::info!(?reason, "stdin closed, exiting");
    Ok(())
}

/// A runtime for one component: no instance pool (one call needs none).
fn single_runtime(limits: CallLimits, cache_root: Option<PathBuf>) -> anyhow::Result<Runtime> {
    Ok(Runtime::with_options(RuntimeOptions {
        defaults: limits,
        max_concurrent_calls: 1,
        pooling: false,
        cache_root,
        // The process ends after its call: a next instance would be waste.
        spares: 0,
        ..RuntimeOptions::default()
    })?)
}

async fn inspect(args: InspectArgs) -> anyhow::Result<()> {
    let runtime = single_runtime(CallLimits::default(), args.cache.root())?;
    let single = Single::load(&runtime, &args.file, args.manifest.as_deref()).await?;
    let report = single.report();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.to_text());
    }
    Ok(())
}

/// Runs the tool; returns whether the result is an error.
async fn call(args: CallArgs) -> anyhow::Result<bool> {
    let arguments: serde_json::Value =
        serde_json::from_str(&args.args).context("--args is not valid JSON")?;
    anyhow::ensure!(arguments.is_object(), "--args must be a JSON object");
    let runtime = single_runtime(args.limits.call_limits(), args.cache.root())?;
    let single = Single::load(&runtime, &args.file, args.manifest.as_deref()).await?;
    match single.call(&args.tool, &arguments).await? {
        CallResult::Failed(message) => {
            eprintln!("{message}");
            Ok(true)
        }
        CallResult::Output(output) => {
            let text = content_text(&output);
            if output.is_error {
                eprint!("{text}");
                return Ok(true);
            }
            print!("{text}");
            if let Some(structured) = &output.structured {
                println!("{}", serde_json::to_string_pretty(structured)?);
            }
            Ok(false)
        }
    }
}

fn embed_docs(args: EmbedDocsArgs) -> anyhow::Result<()> {
    let component =
        std::fs::read(&args.input).with_context(|| format!("reading {}", args.input.display()))?;
    let out = docs::embed(&component, &args.wit, args.world.as_deref())
        .with_context(|| format!("embedding the docs of {}", args.wit.display()))?;
    // Write beside the target and rename, so a watcher never sees half a file.
    let tmp = args.output.with_extension("wasm.tmp");
    std::fs::write(&tmp, &out).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, &args.output)
        .with_context(|| format!("writing {}", args.output.display()))?;
    tracing::info!(component = %args.output.display(), "doc sections written");
    Ok(())
}

/// Resolves on SIGINT (Ctrl-C) or SIGTERM.
async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = interrupt => {}
                    _ = terminate.recv() => {}
                }
            }
            Err(error) => {
                tracing::warn!(%error, "cannot listen for SIGTERM");
                let _ = interrupt.await;
            }
        }
    }
    #[cfg(not(unix))]
    let _ = interrupt.await;
    tracing::info!("shutdown signal received");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_addresses_default_to_loopback() {
        assert_eq!(
            parse_listen_addr("8080").unwrap(),
            "127.0.0.1:8080".parse().unwrap()
        );
        assert_eq!(
            parse_listen_addr("localhost:0").unwrap(),
            "127.0.0.1:0".parse().unwrap()
        );
        assert_eq!(
            parse_listen_addr("[::1]:9").unwrap(),
            "[::1]:9".parse().unwrap()
        );
        assert_eq!(
            parse_listen_addr("0.0.0.0:80").unwrap(),
            "0.0.0.0:80".parse().unwrap()
        );
        assert!(parse_listen_addr("example.com:80").is_err());
        assert!(parse_listen_addr("localhost:x").is_err());
    }
}
