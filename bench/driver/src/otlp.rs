//! What tracing a call costs (issue 34): the trivial tool over stdio, every
//! request carrying a sampled `_meta.traceparent`, on two Wharf processes in
//! alternating turns (`load::stdio_run`, so both see the same machine): one
//! with OpenTelemetry export off, one exporting every span and the metrics
//! over OTLP http/protobuf to a sink on loopback ([`Sink`]). The server's CPU
//! time counts all its threads, the batch exporter's included, so the
//! difference is the whole price of tracing a call; p50 is what a client
//! waits.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, Result};
use serde::Serialize;

use crate::load::{self, LoadResult, Phases, Workload};
use crate::proc::{ServerCmd, StdioServer};

/// A sampled trace context, as an instrumented agent would send it.
const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// Export off against on.
#[derive(Debug, Clone, Serialize)]
pub struct TracingCost {
    pub off: LoadResult,
    pub on: LoadResult,
    /// OTLP requests and body bytes the sink received (spans and metrics).
    pub exports: u64,
    pub exported_bytes: u64,
}

impl TracingCost {
    /// The report's section.
    pub fn table(&self) -> String {
        let row = |label: &str, r: &LoadResult| {
            format!(
                "{label:<6} {:>7.0}us {:>7.0}us {:>9.0} {:>7.1}us\n",
                r.p50_us, r.p99_us, r.throughput_rps, r.server_cpu_us
            )
        };
        format!(
            "\ntracing cost (stdio, echo, a sampled _meta.traceparent in every request; \
             on = OTLP http/protobuf to a loopback sink)\n\
             {:<6} {:>9} {:>9} {:>9} {:>9}\n{}{}\
             on - off: p50 {:+.1} us, server CPU {:+.1} us per call ({} exports, {:.0} KiB)\n",
            "export",
            "p50",
            "p99",
            "req/s",
            "cpu/req",
            row("off", &self.off),
            row("on", &self.on),
            self.on.p50_us - self.off.p50_us,
            self.on.server_cpu_us - self.off.server_cpu_us,
            self.exports,
            self.exported_bytes as f64 / 1024.0
        )
    }
}

/// Runs the two servers through the same load.
pub fn measure(wharf: &ServerCmd, trivial: &Workload, phases: Phases) -> Result<TracingCost> {
    let sink = Sink::start().context("starting the OTLP sink")?;
    let mut traced = wharf.clone();
    traced.label = "wharf-otlp";
    traced
        .args
        .extend(["--otlp-endpoint".into(), format!("http://{}", sink.addr)]);
    let workload = Workload {
        traceparent: Some(TRACEPARENT),
        ..trivial.clone()
    };
    let mut off = StdioServer::start(wharf, None)?;
    let mut on = StdioServer::start(&traced, None)?;
    let [off, on] = load::stdio_run([&mut off, &mut on], &workload, phases)?;
    Ok(TracingCost {
        off,
        on,
        exports: sink.requests.load(Ordering::Relaxed),
        exported_bytes: sink.bytes.load(Ordering::Relaxed),
    })
}

/// An OTLP/HTTP endpoint that answers every POST with 200 and counts them;
/// it decodes nothing (the e2e tests check what is sent).
struct Sink {
    addr: SocketAddr,
    requests: Arc<AtomicU64>,
    bytes: Arc<AtomicU64>,
}

impl Sink {
    fn start() -> Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let requests = Arc::new(AtomicU64::new(0));
        let bytes = Arc::new(AtomicU64::new(0));
        let counts = (requests.clone(), bytes.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (requests, bytes) = counts.clone();
                std::thread::spawn(move || {
                    let _ = answer(stream, &requests, &bytes);
                });
            }
        });
        Ok(Self {
            addr,
            requests,
            bytes,
        })
    }
}

/// Serves one keep-alive connection until it closes.
fn answer(stream: TcpStream, requests: &AtomicU64, bytes: &AtomicU64) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let mut length = 0usize;
        loop {
            line.clear();
            if reader.read_line(&mut line)? == 0 {
                return Ok(());
            }
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        std::io::copy(&mut (&mut reader).take(length as u64), &mut std::io::sink())?;
        requests.fetch_add(1, Ordering::Relaxed);
        bytes.fetch_add(length as u64, Ordering::Relaxed);
        reader
            .get_mut()
            .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sink_answers_and_counts_keep_alive_posts() {
        let sink = Sink::start().unwrap();
        let mut stream = TcpStream::connect(sink.addr).unwrap();
        let post = b"POST /v1/traces HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc";
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        for _ in 0..2 {
            stream.write_all(post).unwrap();
            let mut status = String::new();
            reader.read_line(&mut status).unwrap();
            assert_eq!(status, "HTTP/1.1 200 OK\r\n");
            let mut rest = String::new();
            reader.read_line(&mut rest).unwrap();
            reader.read_line(&mut rest).unwrap();
            assert_eq!(rest, "Content-Length: 0\r\n\r\n");
        }
        assert_eq!(sink.requests.load(Ordering::Relaxed), 2);
        assert_eq!(sink.bytes.load(Ordering::Relaxed), 6);
    }
}
