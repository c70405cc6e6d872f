//! Driving tools/call load: sequential round trips over stdio, and N concurrent
//! keep-alive clients over HTTP. Both servers get the same bytes.
//!
//! Requests are 2026-07-28 (stateless) ones: `_meta` in every request, no
//! handshake, the `MCP-Protocol-Version`/`Mcp-Method`/`Mcp-Name` headers on HTTP,
//! as `tests/e2e/harness.rs` sends them. Over HTTP the driver can also speak the
//! legacy revision most clients use today ([`Era::Legacy`]): one `initialize`
//! per connection, then the `Mcp-Session-Id` on every request. Both rmcp and
//! Wharf accept both.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde::Serialize;
use serde_json::{Value, json};
use wharf_wire::http::Connection;
use wharf_wire::process::cpu_time;

use crate::proc::StdioServer;

pub use wharf_wire::MODERN;

/// Which protocol revision the HTTP clients speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// 2026-07-28: `_meta` in every request, no handshake, no session.
    Modern,
    /// 2025-11-25: a session per connection (`initialize`, `Mcp-Session-Id`).
    Legacy,
}

/// A tool and the arguments it is called with.
#[derive(Debug, Clone)]
pub struct Workload {
    /// Short label: `trivial` or `compute`.
    pub label: &'static str,
    pub tool: &'static str,
    pub arguments: Value,
    /// A W3C `traceparent` sent in every request's `_meta` (the tracing
    /// cost case, `otlp.rs`).
    pub traceparent: Option<&'static str>,
}

/// How long to warm up and to measure.
#[derive(Debug, Clone, Copy)]
pub struct Phases {
    pub warmup: Duration,
    pub measure: Duration,
}

/// Latency distribution and rate of one run.
#[derive(Debug, Clone, Serialize)]
pub struct LoadResult {
    pub requests: usize,
    pub errors: usize,
    pub p50_us: f64,
    pub p99_us: f64,
    pub mean_us: f64,
    pub throughput_rps: f64,
    /// The server's CPU time (all threads, user and system) over the measured
    /// window, per request: what a request costs, apart from how the two
    /// cores were shared with the load driver.
    pub server_cpu_us: f64,
}

impl LoadResult {
    pub(crate) fn from_samples(
        mut nanos: Vec<u64>,
        errors: usize,
        window: Duration,
        server_cpu: Duration,
    ) -> Self {
        nanos.sort_unstable();
        let pick = |q: f64| {
            if nanos.is_empty() {
                return f64::NAN;
            }
            nanos[((nanos.len() - 1) as f64 * q).round() as usize] as f64 / 1e3
        };
        let mean = if nanos.is_empty() {
            f64::NAN
        } else {
            nanos.iter().sum::<u64>() as f64 / nanos.len() as f64 / 1e3
        };
        Self {
            requests: nanos.len(),
            errors,
            p50_us: pick(0.5),
            p99_us: pick(0.99),
            mean_us: mean,
            throughput_rps: nanos.len() as f64 / window.as_secs_f64(),
            server_cpu_us: server_cpu.as_secs_f64() * 1e6 / nanos.len().max(1) as f64,
        }
    }
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "wharf-bench", "version": "0"}
    })
}

/// The JSON-RPC body of one `tools/call` (`_meta` only in the modern era).
pub fn call_body(id: u64, workload: &Workload, era: Era) -> Vec<u8> {
    let mut params = json!({"name": workload.tool, "arguments": workload.arguments});
    if era == Era::Modern {
        params["_meta"] = meta();
    }
    if let Some(traceparent) = workload.traceparent {
        params["_meta"]["traceparent"] = json!(traceparent);
    }
    serde_json::to_vec(
        &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}),
    )
    .expect("serialisable")
}

/// The JSON-RPC body of a `tools/list`.
pub fn list_body(id: u64) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {"_meta": meta()}
    }))
    .expect("serialisable")
}

/// Whether a response body is a successful tool result (not a JSON-RPC error,
/// not `isError: true`).
pub fn is_success(body: &[u8]) -> bool {
    serde_json::from_slice::<Value>(body).is_ok_and(|v| {
        v.get("result")
            .is_some_and(|r| r.get("isError") != Some(&Value::Bool(true)))
    })
}

/// How long one server runs before the other takes its turn in [`stdio_run`].
const TURN: Duration = Duration::from_millis(250);

/// One client, one request at a time, over each server's stdin/stdout. The
/// servers (two: Wharf and the baseline, or Wharf without and with tracing)
/// take turns of [`TURN`] through the warm-up and the measured window,
/// until each has had the whole of each: a change in how busy the machine is
/// (other VMs on the host, a late build) then falls on both alike, and the
/// ratio of the two results means what it says. A server's CPU time is counted
/// over its own turns only.
pub fn stdio_run<const N: usize>(
    servers: [&mut StdioServer; N],
    workload: &Workload,
    phases: Phases,
) -> Result<[LoadResult; N]> {
    let mut turns = servers.map(|server| Turns {
        server,
        id: 0,
        samples: Vec::new(),
        errors: 0,
        window: Duration::ZERO,
        cpu: Duration::ZERO,
    });
    for turn in &mut turns {
        // The first call must work, or every number after it is meaningless.
        let (_, ok) = turn.call(workload)?;
        if !ok {
            bail!("the first {} call failed", workload.tool);
        }
    }
    for (length, record) in [(phases.warmup, false), (phases.measure, true)] {
        let mut given = Duration::ZERO;
        while given < length {
            let turn_length = TURN.min(length - given);
            for turn in &mut turns {
                turn.run(workload, turn_length, record)?;
            }
            given += turn_length;
        }
    }
    Ok(
        turns
            .map(|turn| LoadResult::from_samples(turn.samples, turn.errors, turn.window, turn.cpu)),
    )
}

/// One server's share of [`stdio_run`].
struct Turns<'a> {
    server: &'a mut StdioServer,
    id: u64,
    samples: Vec<u64>,
    errors: usize,
    /// Measured time and server CPU time, summed over the measured turns.
    window: Duration,
    cpu: Duration,
}

impl Turns<'_> {
    /// One round trip: how long it took and whether it succeeded.
    fn call(&mut self, workload: &Workload) -> Result<(u64, bool)> {
        self.id += 1;
        let mut line = call_body(self.id, workload, Era::Modern);
        line.push(b'\n');
        let started = Instant::now();
        let reply = self.server.round_trip(&line)?;
        let took = started.elapsed().as_nanos() as u64;
        Ok((took, is_success(reply.as_bytes())))
    }

    /// Calls for `length`, keeping the samples if `record`.
    fn run(&mut self, workload: &Workload, length: Duration, record: bool) -> Result<()> {
        let pid = self.server.pid();
        let cpu_before = cpu_time(pid)?;
        let started = Instant::now();
        let end = started + length;
        while Instant::now() < end {
            let (took, ok) = self.call(workload)?;
            if record {
                self.samples.push(took);
                self.errors += usize::from(!ok);
            }
        }
        if record {
            self.window += started.elapsed();
            self.cpu += cpu_time(pid)?.saturating_sub(cpu_before);
        }
        Ok(())
    }
}

/// How long one server takes the load before the other in [`http_run`].
const HTTP_TURN: Duration = Duration::from_millis(500);

/// A server under HTTP load: where it listens, and its process (for CPU time).
#[derive(Debug, Clone, Copy)]
pub struct HttpTarget {
    pub addr: SocketAddr,
    pub pid: u32,
}

/// `clients` keep-alive connections to each server, each sending its next
/// request as soon as the previous answer arrived (closed loop). As in
/// [`stdio_run`], the two servers take turns of [`HTTP_TURN`] through the
/// warm-up and the measured window, until each has had the whole of each, so
/// a change in how busy the machine is falls on both alike. A turn starts
/// every client at once and ends when the last answer of a request sent
/// within it arrived; a server's CPU time is counted over its own turns.
/// Runs on a single-threaded runtime, so the driver takes at most one core
/// from the server.
pub fn http_run(
    servers: [HttpTarget; 2],
    workload: &Workload,
    clients: usize,
    phases: Phases,
    era: Era,
) -> Result<[LoadResult; 2]> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let [first, second] = servers;
        let mut sides = [
            HttpTurns::open(first, clients, workload, era).await?,
            HttpTurns::open(second, clients, workload, era).await?,
        ];
        for (length, record) in [(phases.warmup, false), (phases.measure, true)] {
            let mut given = Duration::ZERO;
            while given < length {
                let turn_length = HTTP_TURN.min(length - given);
                for side in &mut sides {
                    side.run(workload, era, turn_length, record).await?;
                }
                given += turn_length;
            }
        }
        Ok(sides
            .map(|side| LoadResult::from_samples(side.samples, side.errors, side.window, side.cpu)))
    })
}

/// One server's share of [`http_run`]: its open connections and what they
/// measured so far.
struct HttpTurns {
    pid: u32,
    /// Between turns; each turn lends them to the clients' tasks.
    clients: Vec<HttpClient>,
    samples: Vec<u64>,
    errors: usize,
    /// Measured time and server CPU time, summed over the measured turns.
    window: Duration,
    cpu: Duration,
}

/// A connection and the id of its last request.
struct HttpClient {
    connection: Connection,
    id: u64,
}

impl HttpTurns {
    /// Opens the connections (and their legacy sessions), and checks that a
    /// first call works, or every number after it is meaningless.
    async fn open(
        target: HttpTarget,
        clients: usize,
        workload: &Workload,
        era: Era,
    ) -> Result<Self> {
        let mut opened = Vec::with_capacity(clients);
        for client in 0..clients as u64 {
            let mut connection = Connection::open(target.addr).await?;
            if era == Era::Legacy {
                connection.handshake().await?;
            }
            opened.push(HttpClient {
                connection,
                id: client << 32,
            });
        }
        if let Some(first) = opened.first_mut() {
            let (status, reply) = first.call(workload, era).await?;
            if status != 200 || !is_success(&reply) {
                bail!(
                    "the first {} call failed: HTTP {status}: {}",
                    workload.tool,
                    String::from_utf8_lossy(&reply)
                );
            }
        }
        Ok(Self {
            pid: target.pid,
            clients: opened,
            samples: Vec::new(),
            errors: 0,
            window: Duration::ZERO,
            cpu: Duration::ZERO,
        })
    }

    /// Every client calls for `length`, keeping the samples if `record`.
    async fn run(
        &mut self,
        workload: &Workload,
        era: Era,
        length: Duration,
        record: bool,
    ) -> Result<()> {
        let cpu_before = cpu_time(self.pid)?;
        let started = Instant::now();
        let end = started + length;
        let tasks: Vec<_> = self
            .clients
            .drain(..)
            .map(|mut client| {
                let workload = workload.clone();
                tokio::spawn(async move {
                    let mut samples = Vec::new();
                    let mut errors = 0;
                    loop {
                        let sent = Instant::now();
                        if sent >= end {
                            break;
                        }
                        let (status, reply) = client.call(&workload, era).await?;
                        samples.push(sent.elapsed().as_nanos() as u64);
                        errors += usize::from(status != 200 || !is_success(&reply));
                    }
                    Ok::<_, anyhow::Error>((client, samples, errors))
                })
            })
            .collect();
        for task in tasks {
            let (client, samples, errors) = task.await.context("client task")??;
            self.clients.push(client);
            if record {
                self.samples.extend(samples);
                self.errors += errors;
            }
        }
        if record {
            self.window += length;
            self.cpu += cpu_time(self.pid)?.saturating_sub(cpu_before);
        }
        Ok(())
    }
}

impl HttpClient {
    async fn call(&mut self, workload: &Workload, era: Era) -> Result<(u16, Vec<u8>)> {
        self.id += 1;
        let body = call_body(self.id, workload, era);
        self.connection.post(&body, workload.tool).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles() {
        let result = LoadResult::from_samples(
            (1..=100).map(|us| us * 1000).collect(),
            0,
            Duration::from_secs(1),
            Duration::from_millis(5),
        );
        assert_eq!(result.p50_us, 51.0);
        assert_eq!(result.p99_us, 99.0);
        assert_eq!(result.throughput_rps, 100.0);
        assert_eq!(result.server_cpu_us, 50.0);
    }

    #[test]
    fn success_means_a_result_without_is_error() {
        assert!(is_success(br#"{"result":{"content":[],"isError":false}}"#));
        assert!(!is_success(br#"{"result":{"isError":true}}"#));
        assert!(!is_success(br#"{"error":{"code":-32602}}"#));
    }

    #[test]
    fn only_the_modern_era_puts_meta_in_the_body() {
        let workload = Workload {
            label: "trivial",
            tool: "echo_echo",
            arguments: json!({"text": "hi"}),
            traceparent: None,
        };
        let modern: Value = serde_json::from_slice(&call_body(7, &workload, Era::Modern)).unwrap();
        let legacy: Value = serde_json::from_slice(&call_body(7, &workload, Era::Legacy)).unwrap();
        assert_eq!(
            modern["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            MODERN
        );
        assert!(legacy["params"].get("_meta").is_none());
        assert_eq!(legacy["params"]["arguments"], json!({"text": "hi"}));
    }

    #[test]
    fn a_traceparent_goes_into_meta() {
        let workload = Workload {
            label: "trivial",
            tool: "echo_echo",
            arguments: json!({}),
            traceparent: Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
        };
        let body: Value = serde_json::from_slice(&call_body(1, &workload, Era::Modern)).unwrap();
        assert_eq!(
            body["params"]["_meta"]["traceparent"],
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        );
        assert_eq!(
            body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            MODERN
        );
    }
}
