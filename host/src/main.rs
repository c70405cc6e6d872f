//! The `wharf` command line.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use tracing_subscriber::EnvFilter;

use wharf::loader::{AllSettled, PluginFolder};
use wharf::registry::Registry;
use wharf::runtime::{CallLimits, CompiledCache, Runtime};
use wharf::server::{SUPPORTED_VERSIONS, ServerOptions, WharfServer};
use wharf::stdio::{DEFAULT_MAX_LINE_BYTES, LineTransport};
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
    /// Load every component in a folder and serve its tools over MCP (stdio).
    Serve(ServeArgs),
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

    /// Wall-clock limit of one tool call, in milliseconds.
    #[arg(long, default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(1..))]
    timeout_ms: u64,

    /// Memory limit of one tool call, in MiB.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=4096))]
    memory_mib: u32,

    /// Largest accepted stdio message, in bytes.
    #[arg(long, default_value_t = DEFAULT_MAX_LINE_BYTES)]
    max_message_bytes: usize,

    /// Where compiled components are kept between runs [default: the user cache
    /// directory, e.g. ~/.cache/wharf].
    #[arg(long, env = "WHARF_CACHE_DIR")]
    cache_dir: Option<PathBuf>,

    /// Compile every component at every start; keep nothing on disk (overrides
    /// `--cache-dir`).
    #[arg(long)]
    no_cache: bool,

    /// Load the folder once; ignore later changes to it.
    #[arg(long)]
    no_watch: bool,
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    init_logging();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    match cli.command {
        Command::Serve(args) => runtime.block_on(serve(args)),
    }
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

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let limits = CallLimits {
        timeout: Duration::from_millis(args.timeout_ms),
        memory_bytes: (args.memory_mib as usize) << 20,
        ..CallLimits::default()
    };
    let cache_root = match (args.no_cache, args.cache_dir) {
        (true, _) => None,
        (false, Some(dir)) => Some(dir),
        (false, None) => CompiledCache::default_root(),
    };
    let runtime = Arc::new(Runtime::new(limits, cache_root.as_deref())?);
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
        "serving MCP on stdio"
    );
    let registry = Arc::new(Registry::new(set));
    if let Some(watch) = watch {
        watch.spawn(folder, registry.clone());
    }
    let server = WharfServer::new(
        registry,
        ServerOptions {
            page_size: args.page_size as usize,
            list_ttl: Duration::from_millis(args.list_ttl_ms),
        },
    );

    let (stdin, stdout) = rmcp::transport::io::stdio_pipes();
    let transport = LineTransport::new(
        tokio::io::BufReader::new(stdin),
        stdout,
        args.max_message_bytes,
        SUPPORTED_VERSIONS,
    );
    let service = rmcp::serve_server(server, transport)
        .await
        .context("starting the MCP service")?;
    let reason = service.waiting().await.context("serving MCP")?;
    tracing::info!(?reason, "stdin closed, exiting");
    Ok(())
}
