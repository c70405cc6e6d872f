//! Pipelined stdio load: one connection with `depth` requests always in
//! flight (a client that does not wait for each answer, e.g. an agent
//! calling tools in parallel), and the same with a competing process
//! spinning on one core, to check that the stdio busy-poll never hurts
//! (`host/src/stdio/busy_poll.rs`).
//!
//! The servers take turns of [`TURN`] as in `load::stdio_run`, so a change
//! in how busy the machine is falls on all alike; a turn ends once every
//! request sent in it is answered.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use wharf_wire::process::cpu_time;

use crate::load::{Era, LoadResult, Phases, Workload, call_body, is_success};
use crate::proc::StdioServer;

/// How long one server takes the load before the next.
const TURN: Duration = Duration::from_millis(250);

/// Requests in flight on the connection.
pub const DEPTH: usize = 16;

/// `DEPTH` requests in flight to each of `servers` in turn.
pub fn stdio_pipelined<const N: usize>(
    servers: [&mut StdioServer; N],
    workload: &Workload,
    phases: Phases,
) -> Result<[LoadResult; N]> {
    let mut sides = servers.map(|server| Side {
        server,
        id: 0,
        sent: HashMap::new(),
        samples: Vec::new(),
        errors: 0,
        window: Duration::ZERO,
        cpu: Duration::ZERO,
    });
    for (length, record) in [(phases.warmup, false), (phases.measure, true)] {
        let mut given = Duration::ZERO;
        while given < length {
            let turn = TURN.min(length - given);
            for side in &mut sides {
                side.run(workload, turn, record)?;
            }
            given += turn;
        }
    }
    Ok(
        sides
            .map(|side| LoadResult::from_samples(side.samples, side.errors, side.window, side.cpu)),
    )
}

/// One server's share.
struct Side<'a> {
    server: &'a mut StdioServer,
    id: u64,
    /// When each request in flight was sent, by id.
    sent: HashMap<u64, Instant>,
    samples: Vec<u64>,
    errors: usize,
    window: Duration,
    cpu: Duration,
}

impl Side<'_> {
    fn send(&mut self, workload: &Workload) -> Result<()> {
        self.id += 1;
        let mut line = call_body(self.id, workload, Era::Modern);
        line.push(b'\n');
        self.server.stdin.write_all(&line)?;
        self.sent.insert(self.id, Instant::now());
        Ok(())
    }

    /// Reads one answer: its latency and whether it succeeded.
    fn receive(&mut self) -> Result<(u64, bool)> {
        let mut line = String::new();
        if self.server.stdout.read_line(&mut line)? == 0 {
            bail!("the server closed its stdout");
        }
        let id = answer_id(&line).with_context(|| format!("an answer without an id: {line}"))?;
        let sent = self
            .sent
            .remove(&id)
            .with_context(|| format!("an answer to no request in flight: {id}"))?;
        Ok((
            sent.elapsed().as_nanos() as u64,
            is_success(line.as_bytes()),
        ))
    }

    fn run(&mut self, workload: &Workload, length: Duration, record: bool) -> Result<()> {
        let pid = self.server.pid();
        let cpu_before = cpu_time(pid)?;
        let started = Instant::now();
        let end = started + length;
        for _ in 0..DEPTH {
            self.send(workload)?;
        }
        self.server.stdin.flush()?;
        while !self.sent.is_empty() {
            let (took, ok) = self.receive()?;
            if record {
                self.samples.push(took);
                self.errors += usize::from(!ok);
            }
            if Instant::now() < end {
                self.send(workload)?;
                self.server.stdin.flush()?;
            }
        }
        if record {
            self.window += started.elapsed();
            self.cpu += cpu_time(pid)?.saturating_sub(cpu_before);
        }
        Ok(())
    }
}

/// The `id` of a JSON-RPC answer, read without parsing the rest.
fn answer_id(line: &str) -> Option<u64> {
    let at = line.find("\"id\":")? + 5;
    let digits: String = line[at..]
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// A process spinning on `cpu` until dropped: other work on a shared
/// machine.
pub struct Spinner(Child);

impl Spinner {
    pub fn start(cpu: usize) -> Result<Self> {
        let mut command = Command::new("sh");
        command
            .args(["-c", "while :; do :; done"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        crate::pin::pin_command(&mut command, cpu);
        Ok(Self(command.spawn().context("starting the spinner")?))
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The goals of issue 35 for pipelined stdio: the SDK echo plugin at least
/// as fast as the native baseline, and the default busy-poll at least as
/// good as none when another process spins.
pub fn goals(find: impl Fn(&str, &str) -> Option<LoadResult>) -> Vec<crate::report::Goal> {
    let mut goals = Vec::new();
    if let (Some(w), Some(b)) = (find(PIPELINED, "wharf"), find(PIPELINED, "baseline")) {
        let ratio = w.throughput_rps / b.throughput_rps;
        goals.push(crate::report::Goal {
            goal: "stdio pipelined x16 throughput vs baseline (SDK echo plugin)",
            measured: ratio,
            target: 1.0,
            unit: "x (at least)",
            met: ratio >= 1.0,
        });
    }
    if let (Some(on), Some(off)) = (find(CONTENDED, "wharf"), find(CONTENDED, POLL_OFF)) {
        let ratio = on.throughput_rps / off.throughput_rps;
        goals.push(crate::report::Goal {
            goal: "stdio pipelined x16 with a spinning process: default vs busy-poll off",
            measured: ratio,
            target: 1.0,
            unit: "x (at least, within noise)",
            met: ratio >= 0.95,
        });
    }
    goals
}

/// The transport label of the pipelined case.
pub const PIPELINED: &str = "stdio-x16";
/// ... and of the same with a process spinning on one core.
pub const CONTENDED: &str = "stdio-x16-spin";
/// The server label of Wharf with `--stdio-busy-poll-us 0`.
pub const POLL_OFF: &str = "wharf-poll-off";

/// The busy-poll comparison line of the table.
pub fn table(find: impl Fn(&str, &str) -> Option<LoadResult>) -> String {
    let (Some(on), Some(off)) = (find(CONTENDED, "wharf"), find(CONTENDED, POLL_OFF)) else {
        return String::new();
    };
    format!(
        "\nstdio pipelined x16 with a process spinning on one core: wharf {:.0} req/s ({:.0}us cpu/req), \
         with --stdio-busy-poll-us 0 {:.0} req/s ({:.0}us cpu/req): {:.2}x\n",
        on.throughput_rps,
        on.server_cpu_us,
        off.throughput_rps,
        off.server_cpu_us,
        on.throughput_rps / off.throughput_rps
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_is_read_from_an_answer() {
        assert_eq!(
            answer_id(r#"{"jsonrpc":"2.0","id":42,"result":{"content":[]}}"#),
            Some(42)
        );
        assert_eq!(
            answer_id(r#"{"jsonrpc":"2.0","id": 7,"error":{}}"#),
            Some(7)
        );
        assert_eq!(answer_id(r#"{"jsonrpc":"2.0","method":"x"}"#), None);
    }
}
