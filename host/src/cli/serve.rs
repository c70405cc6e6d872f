//! `wharf serve`: load every component in a folder and serve its tools over
//! MCP, on stdio or Streamable HTTP.
//!
//! [`ServeArgs::run`] picks the async runtimes, `serve` loads the folder
//! (and watches it) into a registry behind one [`WharfServer`], and then
//! hands that server to one transport.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use clap::builder::TypedValueParser as _;
use wharf::audit::AuditLog;
use wharf::client_input::StateSeal;
use wharf::http::{HttpOptions, ServiceStatus};
use wharf::json_values::DEFAULT_MAX_JSON_VALUES;
use wharf::loader::{AllSettled, PluginFolder};
use wharf::metrics::Metrics;
use wharf::protocol::SUPPORTED_VERSIONS;
use wharf::registry::{Registry, ToolSet};
use wharf::runtime::{CallLimits, Ceilings, Placement, PoolUsage, Runtime, RuntimeOptions};
use wharf::server::{ServerOptions, WharfServer};
use wharf::stdio::{BusyPoll, DEFAULT_BUSY_POLL_US, DEFAULT_MAX_LINE_BYTES, LineTransport};
use wharf::telemetry::Telemetry;
use wharf::watcher::FolderWatch;
use wharf::watcher::relists::RelistQueue;

use super::LOG_TARGET;
use super::audit::AuditArgs;
use super::cache::CacheArgs;
use super::handoff;
use super::http::HttpArgs;
use super::limits::LimitArgs;
use super::process::{multi_threaded, shutdown_signal};
use super::registry::OciServeArgs;

/// The arguments of `wharf serve`.
#[derive(Args)]
pub struct ServeArgs {
    /// Folder of plugin components (`*.wasm`) and registry references
    /// (`*.oci`: one line, `oci://REGISTRY/REPOSITORY:TAG` or `@sha256:DIGEST`).
    #[arg(long, env = "WHARF_PLUGINS")]
    plugins: PathBuf,

    /// Most tools returned in one `tools/list` page.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    page_size: u32,

    /// How long clients may cache list results, in milliseconds (`ttlMs`).
    #[arg(long, default_value_t = 10_000)]
    list_ttl_ms: u64,

    /// How long a task (a tool call answered with `resultType: "task"`) is
    /// kept after its creation, in seconds; a guest still running then is
    /// stopped. Clients see it as `ttlMs`.
    #[arg(long, env = "WHARF_TASK_TTL_SECS", default_value_t = 3600, value_parser = clap::value_parser!(u64).range(1..=604_800))]
    task_ttl_secs: u64,

    /// Most tasks kept at once (running or finished, until they expire); a
    /// call that would make one more is answered -32603 (or, for a tool that
    /// only becomes a task after `after-ms`, simply runs to its end).
    #[arg(long, env = "WHARF_MAX_TASKS", default_value_t = wharf::tasks::DEFAULT_MAX_TASKS, value_parser = clap::value_parser!(u64).range(1..).map(|n| n as usize))]
    max_tasks: usize,

    /// The limits of one call, for plugins whose manifest sets none.
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

    /// The most JSON values one message may hold, over stdio and HTTP
    /// (-32600 above): each parsed value costs the host some 70 bytes however
    /// short its text, so this bounds what one request can make it allocate.
    #[arg(long, default_value_t = DEFAULT_MAX_JSON_VALUES)]
    max_json_values: usize,

    /// While stdio requests arrive back to back, poll stdin for up to this many
    /// microseconds before the serving thread sleeps, which saves the wake-up
    /// (0: never). Off where Wharf may use one CPU only.
    #[arg(long, default_value_t = DEFAULT_BUSY_POLL_US, value_parser = clap::value_parser!(u64).range(0..=1000))]
    stdio_busy_poll_us: u64,

    /// Where compiled components are kept.
    #[command(flatten)]
    cache: CacheArgs,

    /// Plugins from OCI registries: trusted keys, polling, plain-HTTP registries.
    #[command(flatten)]
    oci: OciServeArgs,

    /// Load the folder once; ignore later changes to it (and to registry tags).
    #[arg(long)]
    no_watch: bool,

    /// Seal multi round-trip `requestState` values with the key in FILE (at
    /// least 32 bytes; a trailing newline is ignored) instead of a random key
    /// per process. Replicas behind a load balancer need the same file, so a
    /// retry may land on any of them.
    #[arg(long, env = "WHARF_STATE_KEY_FILE", value_name = "FILE")]
    state_key_file: Option<PathBuf>,

    /// Streamable HTTP instead of stdio, and its settings.
    #[command(flatten)]
    http: HttpArgs,

    /// The audit trail.
    #[command(flatten)]
    audit: AuditArgs,

    /// Export traces and metrics over OTLP to this collector, e.g.
    /// http://127.0.0.1:4318 (http/protobuf, the default; or http/json) or,
    /// with OTEL_EXPORTER_OTLP_PROTOCOL=grpc, http://127.0.0.1:4317; https:// for
    /// TLS. A shorthand for OTEL_EXPORTER_OTLP_ENDPOINT; the other OTEL_*
    /// variables apply. Off unless this or OTEL_EXPORTER_OTLP_ENDPOINT is set.
    #[arg(long, value_name = "URL")]
    otlp_endpoint: Option<String>,
}

impl ServeArgs {
    /// Starts OpenTelemetry export if asked for (before logging starts).
    pub fn telemetry(&self) -> anyhow::Result<Option<Telemetry>> {
        if handoff::is_handoff() {
            return Ok(None);
        }
        Ok(Telemetry::start(self.otlp_endpoint.as_deref())?)
    }

    /// Serves until stdin closes (stdio) or a shutdown signal (HTTP).
    ///
    /// Both transports serve the protocol on single-threaded runtimes, so a
    /// short call never hops between threads: stdio on this thread (it has one
    /// client; see [`BusyPoll`] for how it waits for the next request),
    /// HTTP on one serving thread per core (see `wharf::http`). Guest code that
    /// runs for longer than an epoch tick moves to a pool of workers (see
    /// [`Placement`]), which also runs start-up, reloads and other background
    /// work under HTTP.
    pub fn run(self, telemetry: Option<Telemetry>) -> anyhow::Result<()> {
        let served = self.serve(telemetry.as_ref());
        if let Some(telemetry) = telemetry {
            telemetry.shutdown();
        }
        served
    }

    fn serve(self, telemetry: Option<&Telemetry>) -> anyhow::Result<()> {
        let workers = multi_threaded()?;
        let placement = Placement::MoveLongCalls(workers.handle().clone());
        if self.http.address().is_some() {
            return workers.block_on(serve(self, placement, telemetry));
        }
        let mut stdio = tokio::runtime::Builder::new_current_thread();
        match BusyPoll::for_stdin(Duration::from_micros(self.stdio_busy_poll_us)) {
            Some(poll) => {
                tracing::debug!(
                    target: LOG_TARGET,
                    budget_us = poll.budget().as_micros() as u64,
                    "stdio busy-poll on"
                );
                let poll = Arc::new(poll.deferring_to(wharf::runtime::upkeep_is_working));
                let after = poll.clone();
                stdio
                    .on_thread_park(move || poll.before_park())
                    .on_thread_unpark(move || after.after_unpark());
            }
            None => tracing::debug!(target: LOG_TARGET, "stdio busy-poll off"),
        }
        stdio
            .enable_all()
            .build()
            .context("starting the async runtime")?
            .block_on(serve(self, placement, telemetry))
    }
}

/// Loads the folder, starts watching it, and serves the tools on the
/// transport the arguments ask for.
async fn serve(
    args: ServeArgs,
    placement: Placement,
    telemetry: Option<&Telemetry>,
) -> anyhow::Result<()> {
    let defaults = CallLimits {
        max_concurrent_calls: args.plugin_concurrency as usize,
        ..args.limits.call_limits()
    };
    let call_timeout = defaults.timeout;
    wharf::registry::prepare_schema_checks();
    // A handoff (see `handoff`) only compiles: no audit, no watch, no
    // serving, and nothing at all once its cache is gone or taken.
    let handoff = handoff::is_handoff();
    let cache_root = args.cache.root();
    let claim = if handoff {
        match handoff::Claim::take(cache_root.as_deref())? {
            Some(claim) => Some(claim),
            None => return Ok(()),
        }
    } else {
        super::cache::make_root(cache_root.as_deref());
        None
    };
    // Read the key before anything slow, so a bad file fails at once.
    let seal = args
        .state_key_file
        .as_deref()
        .map(StateSeal::from_key_file)
        .transpose()?;
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
    let audit = match args.audit.settings().filter(|_| !handoff) {
        Some(settings) => Some(Arc::new(AuditLog::open(&settings)?)),
        None => None,
    };
    let pooled = runtime.is_pooled();
    let started = std::time::Instant::now();
    // Watch before the first scan, so nothing written meanwhile is missed.
    let watch = if args.no_watch || handoff {
        None
    } else {
        Some(FolderWatch::start(&args.plugins)?)
    };
    let mut folder = PluginFolder::new(&args.plugins, runtime.clone())
        .with_oci(args.oci.source(cache_root.as_deref())?)
        .with_references(args.oci.references());
    if args.oci.require_signed() {
        folder = folder.require_signed(args.oci.policy()?);
    }
    let report = folder.scan(&AllSettled).await?;
    if let Some(audit) = &audit {
        folder.audit_scan(&report, &ToolSet::default(), audit);
    }
    let set = folder.tool_set();
    tracing::info!(
        target: LOG_TARGET,
        plugins = set.plugins().len(),
        tools = set.tools().len(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        cache = %cache_root.as_deref().map(|p| p.display().to_string()).unwrap_or_else(|| "off".into()),
        watching = watch.is_some(),
        pooled,
        "plugins loaded"
    );
    let collecting = std::time::Instant::now();
    super::process::return_freed_memory();
    tracing::debug!(
        target: LOG_TARGET,
        us = collecting.elapsed().as_micros() as u64,
        "memory freed by loading handed back"
    );
    if let Some(claim) = &claim {
        handoff::finish(&runtime, claim).await;
        return Ok(());
    }
    let metrics = Arc::new(Metrics::new());
    metrics.set_plugins_loaded(set.plugins().len());
    if let Some(telemetry) = telemetry {
        telemetry.export_metrics(&metrics);
    }
    register_pool_gauges(&metrics, &runtime);
    let registry = Arc::new(Registry::new(set));
    // Plugins that say their lists changed are listed again by the task that
    // owns the folder's state: the watcher's, or one of their own.
    let relists = runtime.take_list_changes().map(RelistQueue::new);
    match (watch, relists) {
        (Some(watch), relists) => {
            watch.spawn(
                folder,
                registry.clone(),
                metrics.clone(),
                audit.clone(),
                relists,
            );
        }
        (None, Some(relists)) => {
            wharf::watcher::spawn_relists(
                folder,
                registry.clone(),
                metrics.clone(),
                audit.clone(),
                relists,
            );
        }
        (None, None) => {}
    }
    let mut server = WharfServer::new(
        registry.clone(),
        ServerOptions {
            page_size: args.page_size as usize,
            list_ttl: Duration::from_millis(args.list_ttl_ms),
            task_ttl: Duration::from_secs(args.task_ttl_secs),
            max_tasks: args.max_tasks,
            task_route: args.http.session_route().map(String::from),
        },
    )
    .with_metrics(metrics.clone());
    let shared_key = seal.is_some();
    if let Some(seal) = seal {
        server = server.with_state_seal(seal);
    }
    if let Some(audit) = audit {
        server = server.with_audit(audit);
    }

    if let Some(addr) = args.http.address() {
        if shared_key {
            tracing::info!(target: LOG_TARGET, "requestState sealed with the key of --state-key-file");
        } else {
            tracing::info!(
                target: LOG_TARGET,
                "requestState sealed with a random key of this process: replicas behind a \
                 load balancer need one shared --state-key-file"
            );
        }
        let digest_of = registry.clone();
        let status = Arc::new(ServiceStatus::new(move || {
            digest_of.snapshot().digest().map(|d| d.to_string())
        }));
        let mut options = HttpOptions {
            max_json_values: args.max_json_values,
            ..args.http.options(addr, call_timeout, status)?
        };
        options.param_headers = Some(wharf::http::ParamHeaderCheck(Arc::new(
            super::http::RegistryParamHeaders(registry.clone()),
        )));
        options.task_ids = Some(wharf::http::TaskIdCheck(server.task_directory()));
        if let Some(protection) = &mut options.protection {
            protection.scopes = Some(Arc::new(super::http::RegistryScopes(registry)));
            protection.server.prefetch().await;
        }
        wharf::http::serve(
            move || server.for_session(),
            metrics,
            addr,
            options,
            shutdown_signal(),
        )
        .await
        .context("serving MCP over HTTP")?;
        tracing::info!(target: LOG_TARGET, "HTTP server stopped");
        handoff::hand_off(&runtime, cache_root.as_deref());
        return Ok(());
    }
    let served = serve_stdio(server, args.max_message_bytes, args.max_json_values).await;
    handoff::hand_off(&runtime, cache_root.as_deref());
    served
}

/// The instance pool's slots in use, as gauges of `/metrics` (a slot that
/// stays taken after its call is a leak RSS does not show).
fn register_pool_gauges(metrics: &Metrics, runtime: &Arc<Runtime>) {
    type Field = fn(&PoolUsage) -> u64;
    let gauges: [(&'static str, &'static str, Field); 4] = [
        (
            "wharf_pool_component_instances",
            "Component instances holding a slot of the instance pool.",
            |u| u.component_instances,
        ),
        (
            "wharf_pool_memories",
            "Linear memories holding a slot of the instance pool.",
            |u| u.memories,
        ),
        (
            "wharf_pool_stacks",
            "Fiber stacks holding a slot of the instance pool.",
            |u| u.stacks,
        ),
        (
            "wharf_pool_idle_memory_bytes_resident",
            "Bytes idle memory slots keep resident for reuse.",
            |u| u.idle_memory_bytes_resident,
        ),
    ];
    for (name, help, field) in gauges {
        let runtime = Arc::downgrade(runtime);
        metrics.register_gauge(name, help, move || {
            let usage = runtime.upgrade()?.pool_usage()?;
            Some(field(&usage) as f64)
        });
    }
}

/// Serves one client on stdin and stdout until stdin closes.
async fn serve_stdio(
    server: WharfServer,
    max_message_bytes: usize,
    max_json_values: usize,
) -> anyhow::Result<()> {
    tracing::info!(target: LOG_TARGET, "serving MCP on stdio");

    let (stdin, stdout) = rmcp::transport::io::stdio_pipes();
    let transport = LineTransport::new(
        tokio::io::BufReader::new(stdin),
        stdout,
        max_message_bytes,
        SUPPORTED_VERSIONS,
    )
    .with_max_json_values(max_json_values)
    .with_task_directory(server.task_directory());
    let service = match rmcp::serve_server(server, transport).await {
        Ok(service) => service,
        // A client that left before its first request (or sent only lines the
        // screen answered itself) ends the server as stdin's end does later.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => {
            tracing::info!(target: LOG_TARGET, "stdin closed before the first request, exiting");
            return Ok(());
        }
        Err(error) => return Err(error).context("starting the MCP service"),
    };
    let reason = service.waiting().await.context("serving MCP")?;
    tracing::info!(target: LOG_TARGET, ?reason, "stdin closed, exiting");
    Ok(())
}
