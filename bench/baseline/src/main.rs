//! The native baseline of `cargo xtask bench`: an MCP server written the usual
//! way with the official Rust SDK (`rmcp` 3.11, `#[tool_router]`), exposing the
//! same tools as the Wharf bench setup (`echo_echo` and `compute_nth_prime`,
//! same names, argument schemas and answers), with no WebAssembly in between.
//!
//! Transports are configured as Wharf's are, so the comparison measures what
//! Wharf adds, not a different transport: stdio through rmcp's non-blocking pipe
//! transport (`stdio_pipes`; Wharf screens lines with its own framing on the same
//! pipes), and Streamable HTTP through `StreamableHttpService` in an axum router
//! with JSON responses, legacy sessions allowed and TCP_NODELAY. What the
//! baseline lacks on purpose: Wharf's tower layers (Origin/Host check, auth,
//! body and envelope checks, request deadline), metrics, and argument
//! validation against the input schema (rmcp deserialises the arguments only).

use std::net::SocketAddr;

use anyhow::Context;
use axum::serve::ListenerExt as _;
use clap::Parser;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler, ServiceExt as _, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

/// A native rmcp MCP server with the bench tools.
#[derive(Parser)]
struct Cli {
    /// Serve Streamable HTTP at `http://ADDR/mcp` instead of stdio; port 0 picks
    /// a free port, printed on stderr as `listening on http://ADDR/mcp`.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
}

/// Arguments of `echo_echo` (as in `plugins/echo`).
#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to return.
    text: String,
    /// How many times to repeat the text, from 1 to 10 (default 1), one per line.
    #[serde(default = "one")]
    #[schemars(range(min = 1, max = 10))]
    repeat: u32,
}

fn one() -> u32 {
    1
}

/// Arguments of `compute_nth_prime` (as in `bench/plugins/compute`).
#[derive(Deserialize, JsonSchema)]
struct NthPrimeArgs {
    /// Which prime, 1-based (1 is 2), at most 200000.
    #[schemars(range(min = 1, max = 200000))]
    n: u32,
}

/// The baseline server.
#[derive(Clone)]
struct Baseline {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Baseline {
    fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        name = "echo_echo",
        description = "Returns its text unchanged, optionally repeated on several lines."
    )]
    fn echo(&self, Parameters(args): Parameters<EchoArgs>) -> Result<String, ErrorData> {
        if !(1..=10).contains(&args.repeat) {
            return Err(ErrorData::invalid_params(
                format!("`repeat` must be between 1 and 10, not {}", args.repeat),
                None,
            ));
        }
        Ok(vec![args.text.as_str(); args.repeat as usize].join("\n"))
    }

    #[tool(
        name = "compute_nth_prime",
        description = "Finds the n-th prime by trial division (CPU-bound on purpose)."
    )]
    fn nth_prime(&self, Parameters(args): Parameters<NthPrimeArgs>) -> Result<String, ErrorData> {
        if !(1..=wharf_bench_workload::MAX_N).contains(&args.n) {
            return Err(ErrorData::invalid_params(
                format!("`n` must be between 1 and 200000, not {}", args.n),
                None,
            ));
        }
        // A synchronous tool, as a native author would write it; rmcp runs each
        // request in its own task, as Wharf runs each call.
        Ok(wharf_bench_workload::answer(args.n))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Baseline {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    // The same runtime shape as Wharf's binary.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        match cli.http {
            Some(addr) => serve_http(addr).await,
            None => serve_stdio().await,
        }
    })
}

async fn serve_stdio() -> anyhow::Result<()> {
    let service = Baseline::new()
        .serve(rmcp::transport::io::stdio_pipes())
        .await
        .context("starting the MCP service")?;
    service.waiting().await.context("serving MCP")?;
    Ok(())
}

async fn serve_http(addr: SocketAddr) -> anyhow::Result<()> {
    let config = StreamableHttpServerConfig::default()
        .with_json_response(true)
        .with_legacy_session_mode(true)
        .disable_allowed_hosts()
        .disable_allowed_origins();
    let mcp = StreamableHttpService::new(
        || Ok(Baseline::new()),
        std::sync::Arc::new(LocalSessionManager::default()),
        config,
    );
    let app = axum::Router::new().route_service("/mcp", mcp);
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("binding {addr}"))?;
    let local = listener.local_addr()?;
    let listener = listener.tap_io(|stream| {
        let _ = stream.set_nodelay(true);
    });
    eprintln!("listening on http://{local}/mcp");
    axum::serve(listener, app).await.context("serving HTTP")?;
    Ok(())
}
