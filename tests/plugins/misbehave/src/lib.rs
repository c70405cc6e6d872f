//! A deliberately badly behaved plugin, for Wharf's sandbox tests. Not an example.
//!
//! Each tool misbehaves in one precise way (traps, panics, spins, allocates, pokes at
//! the filesystem and environment) so that the host's tests can check that a call
//! fails cleanly, that limits hold and that nothing leaks through the sandbox. Never
//! load it in a real deployment.

use std::hint::black_box;

use schemars::JsonSchema;
use serde::Deserialize;
use wharf_sdk::{Resource, ResourceOutput, Tool, ToolError, ToolOutput, Toolbox, host};

/// Arguments of `alloc`.
#[derive(Deserialize, JsonSchema)]
struct AllocArgs {
    /// How many MiB to allocate and touch.
    mib: u32,
}

/// Arguments of `config`.
#[derive(Deserialize, JsonSchema)]
struct ConfigArgs {
    /// The configuration key to look up.
    key: String,
}

/// Arguments of `read_file`.
#[derive(Deserialize, JsonSchema)]
struct ReadFileArgs {
    /// The path to read.
    path: String,
}

/// Arguments of `env`.
#[derive(Deserialize, JsonSchema)]
struct EnvArgs {
    /// The environment variable to read.
    name: String,
}

/// Arguments of `write_file`.
#[derive(Deserialize, JsonSchema)]
struct WriteFileArgs {
    /// The path to write.
    path: String,
    /// What to write.
    text: String,
}

/// Arguments of `recurse`.
#[derive(Deserialize, JsonSchema)]
struct RecurseArgs {
    /// How deep to recurse.
    depth: u64,
}

/// Arguments of `big_output`.
#[derive(Deserialize, JsonSchema)]
struct BigOutputArgs {
    /// How many KiB of text to return.
    kib: u32,
}

/// Arguments of `connect`.
#[derive(Deserialize, JsonSchema)]
struct ConnectArgs {
    /// `ip:port` to open a TCP connection to.
    addr: String,
}

/// Arguments of `fetch`.
#[derive(Deserialize, JsonSchema)]
struct FetchArgs {
    /// An `http://` or `https://` URL to GET through `wasi:http`.
    url: String,
}

/// Counts the calls served by this instance, in its memory.
fn calls() -> u32 {
    static SERVED: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    SERVED.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1
}

/// Executes the WebAssembly `unreachable` instruction.
fn trap() -> ! {
    #[cfg(target_arch = "wasm32")]
    core::arch::wasm32::unreachable();
    #[cfg(not(target_arch = "wasm32"))]
    std::process::abort();
}

/// Loops forever without calling the host, so only the host's interruption stops it.
fn spin() -> ! {
    let mut turns: u64 = 0;
    loop {
        turns = black_box(turns.wrapping_add(1));
    }
}

/// Loops until the host says the call is cancelled.
fn wait_cancelled() -> Result<ToolOutput, ToolError> {
    let mut turns: u64 = 0;
    while !host::is_cancelled() {
        turns = black_box(turns.wrapping_add(1));
    }
    Ok(ToolOutput::text(format!("cancelled after {turns} checks")))
}

/// Allocates `mib` MiB and writes to every page of it. An allocation the host refuses
/// aborts the instance (a trap), as in any Rust program.
fn alloc(args: AllocArgs) -> Result<ToolOutput, ToolError> {
    const PAGE: usize = 4096;
    let bytes = (args.mib as usize)
        .checked_mul(1 << 20)
        .expect("the size overflows the address space");
    let mut block = vec![0u8; bytes];
    for at in (0..bytes).step_by(PAGE) {
        block[at] = 1;
    }
    let touched = black_box(&block).iter().step_by(PAGE).count();
    Ok(ToolOutput::text(format!(
        "allocated {} MiB ({touched} pages touched)",
        args.mib
    )))
}

/// Arguments of `progress`.
#[derive(Deserialize, JsonSchema)]
struct ProgressArgs {
    /// How many reports to make.
    reports: u32,
}

/// Logs at every level and reports progress three times.
fn log() -> Result<ToolOutput, ToolError> {
    use host::Level;
    for level in [
        Level::Debug,
        Level::Info,
        Level::Notice,
        Level::Warning,
        Level::Error,
        Level::Critical,
        Level::Alert,
        Level::Emergency,
    ] {
        host::log(level, &format!("misbehave logs at {level}"));
    }
    for step in 1..=3 {
        host::progress(
            f64::from(step),
            Some(3.0),
            Some(&format!("step {step} of 3")),
        );
    }
    Ok(ToolOutput::text("logged"))
}

/// Recurses `depth` times with a frame that cannot be optimised away.
#[inline(never)]
fn recurse(depth: u64) -> u64 {
    let mut frame = [0u8; 64];
    frame[0] = depth as u8;
    black_box(&mut frame);
    if depth == 0 {
        return u64::from(frame[0]);
    }
    recurse(depth - 1).wrapping_add(u64::from(black_box(frame[1])))
}

/// GETs `url` through `wasi:http` and returns `status body`.
fn fetch(args: FetchArgs) -> Result<ToolOutput, ToolError> {
    use wasip2::http::outgoing_handler;
    use wasip2::http::types::{Fields, OutgoingRequest, Scheme};
    use wasip2::io::streams::StreamError;

    let failed = |what: &str, detail: String| ToolError::failed(format!("{what}: {detail}"));
    let (scheme, rest) = match args.url.split_once("://") {
        Some(("http", rest)) => (Scheme::Http, rest),
        Some(("https", rest)) => (Scheme::Https, rest),
        _ => {
            return Err(ToolError::invalid_arguments(
                "the URL must start with http:// or https://",
            ));
        }
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let request = OutgoingRequest::new(Fields::new());
    let path = if path.is_empty() { "/" } else { path };
    request
        .set_scheme(Some(&scheme))
        .and_then(|()| request.set_authority(Some(authority)))
        .and_then(|()| request.set_path_with_query(Some(path)))
        .map_err(|()| ToolError::invalid_arguments("the URL is not valid"))?;
    let pending = outgoing_handler::handle(request, None)
        .map_err(|code| failed("the request was refused", format!("{code:?}")))?;
    pending.subscribe().block();
    let response = pending
        .get()
        .expect("the response is ready")
        .expect("the response is taken once")
        .map_err(|code| failed("the request failed", format!("{code:?}")))?;
    let status = response.status();
    let body = response.consume().expect("the body is taken once");
    let stream = body.stream().expect("the stream is taken once");
    let mut bytes = Vec::new();
    loop {
        match stream.blocking_read(64 << 10) {
            Ok(chunk) => bytes.extend(chunk),
            Err(StreamError::Closed) => break,
            Err(error) => return Err(failed("reading the body failed", format!("{error:?}"))),
        }
    }
    Ok(ToolOutput::text(format!(
        "{status} {}",
        String::from_utf8_lossy(&bytes)
    )))
}

fn toolbox() -> Toolbox {
    Toolbox::new()
        .with(
            Tool::new("trap", |()| trap())
                .description("Executes the WebAssembly `unreachable` instruction."),
        )
        .with(Tool::new("panic", |()| panic!("deliberate panic")).description("Panics."))
        .with(
            Tool::new("fail", |()| Err(ToolError::failed("deliberate failure")))
                .description("Returns the tool error `failed`."),
        )
        .with(
            Tool::new("error_result", |()| {
                Ok(ToolOutput::error("deliberate tool error"))
            })
            .description("Returns a result with is-error set."),
        )
        .with(Tool::new("spin", |()| spin()).description("Loops forever, checking nothing."))
        .with(
            Tool::new("calls", |()| Ok(ToolOutput::text(calls().to_string()))).description(
                "How many calls this instance has served, this one included: \
                 1 whenever each call gets an instance of its own.",
            ),
        )
        .with(
            Tool::new("wait_cancelled", |()| wait_cancelled())
                .description("Loops until the host reports the call cancelled."),
        )
        .with(Tool::new("alloc", alloc).description("Allocates and touches `mib` MiB."))
        .with(
            Tool::new("log", |()| log())
                .description("Logs at every level and reports progress 3 times."),
        )
        .with(
            Tool::new("progress", |args: ProgressArgs| {
                let total = f64::from(args.reports);
                for step in 1..=args.reports {
                    host::progress(f64::from(step), Some(total), None);
                }
                Ok(ToolOutput::text(format!("reported {} times", args.reports)))
            })
            .description("Reports progress `reports` times as fast as it can."),
        )
        .with(
            Tool::new("config", |args: ConfigArgs| {
                Ok(ToolOutput::text(
                    host::config(&args.key).unwrap_or_else(|| "(none)".into()),
                ))
            })
            .description("Returns the configuration value `key`, or `(none)`."),
        )
        .with(
            Tool::new("caller", |()| {
                Ok(ToolOutput::text(match host::caller() {
                    Some(caller) => format!("{:?} {:?}", caller.subject, caller.scopes),
                    None => "(none)".into(),
                }))
            })
            .description("Says who made the request, as `host.caller` tells it, or `(none)`."),
        )
        .with(
            Tool::new("read_file", |args: ReadFileArgs| {
                Ok(ToolOutput::text(
                    std::fs::read_to_string(&args.path).unwrap_or_else(|error| error.to_string()),
                ))
            })
            .description("Returns the content of the file `path`, or the error text."),
        )
        .with(
            Tool::new("write_file", |args: WriteFileArgs| {
                Ok(ToolOutput::text(
                    match std::fs::write(&args.path, &args.text) {
                        Ok(()) => "written".to_string(),
                        Err(error) => error.to_string(),
                    },
                ))
            })
            .description("Writes `text` to the file `path`; returns `written` or the error text."),
        )
        .with(
            Tool::new("recurse", |args: RecurseArgs| {
                Ok(ToolOutput::text(recurse(args.depth).to_string()))
            })
            .description("Recurses `depth` levels deep."),
        )
        .with(
            Tool::new("big_output", |args: BigOutputArgs| {
                Ok(ToolOutput::text("x".repeat(args.kib as usize * 1024)))
            })
            .description("Returns `kib` KiB of text."),
        )
        .with(
            Tool::new("connect", |args: ConnectArgs| {
                Ok(ToolOutput::text(
                    match std::net::TcpStream::connect(&args.addr) {
                        Ok(_) => "connected".to_string(),
                        Err(error) => error.to_string(),
                    },
                ))
            })
            .description(
                "Opens a TCP connection to `addr`; returns `connected` or the error text.",
            ),
        )
        .with(
            Tool::new("fetch", fetch)
                .description("GETs `url` through wasi:http; returns `status body` or fails."),
        )
        .with(
            Tool::new("env", |args: EnvArgs| {
                Ok(ToolOutput::text(
                    std::env::var(&args.name).unwrap_or_else(|error| error.to_string()),
                ))
            })
            .description("Returns the environment variable `name`, or the error text."),
        )
        // Changes on every read: subscribers hear of it through polling.
        .resource(
            Resource::new("test://clock", "clock", || {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_err(|e| wharf_sdk::ResourceError::failed(e.to_string()))?;
                Ok(ResourceOutput::text(now.as_nanos().to_string()))
            })
            .mime_type("text/plain")
            .poll_every(std::time::Duration::from_millis(100)),
        )
}

wharf_sdk::export_plugin!(toolbox);
