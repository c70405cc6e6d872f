//! The `wharf` command line.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use tracing_subscriber::EnvFilter;

use wharf::registry::{Registry, ToolSet};
use wharf::runtime::{CallLimits, Ceilings, Runtime, RuntimeOptions};
use wharf::server::{SUPPORTED_VERSIONS, ServerOptions, WharfServer};
use wharf::stdio::{DEFAULT_MAX_LINE_BYTES, LineTransport};

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

    /// Largest accepted stdio message, in bytes.
    #[arg(long, default_value_t = DEFAULT_MAX_LINE_BYTES)]
    max_message_bytes: usize,
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
    let defaults = CallLimits {
        timeout: Duration::from_millis(args.timeout_ms),
        memory_bytes: (args.memory_mib as usize) << 20,
        fuel: args.fuel,
        max_output_bytes: usize::try_from(args.max_output_bytes).unwrap_or(usize::MAX),
        max_concurrent_calls: args.plugin_concurrency as usize,
        ..CallLimits::default()
    };
    let ceilings = Ceilings {
        memory_bytes: (args.max_memory_mib as usize) << 20,
        timeout: Duration::from_millis(args.max_timeout_ms),
    };
    anyhow::ensure!(
        defaults.memory_bytes <= ceilings.memory_bytes && defaults.timeout <= ceilings.timeout,
        "--memory-mib and --timeout-ms may not exceed --max-memory-mib and --max-timeout-ms"
    );
    let runtime = Runtime::with_options(RuntimeOptions {
        defaults,
        ceilings,
        max_concurrent_calls: args.max_concurrent_calls as usize,
        pooling: !args.no_pool,
    })?;
    let started = std::time::Instant::now();
    let plugins = wharf::loader::load_folder(&runtime, &args.plugins).await?;
    let set = ToolSet::new(plugins);
    tracing::info!(
        plugins = set.plugins().len(),
        tools = set.tools().len(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        pooled = runtime.is_pooled(),
        "serving MCP on stdio"
    );
    let registry = Arc::new(Registry::new(set));
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
