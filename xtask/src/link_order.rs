//! `cargo xtask link-order`: writes `host/link/startup-order.txt`, the
//! functions a start-up and its first calls run, which the release link of
//! `wharf` lays out together (`--symbol-ordering-file`, see host/build.rs).
//!
//! Left to the linker's order, the 2,600-odd functions a start-up runs are
//! spread over 34 MiB of code, and the kernel maps 64 KiB around every page
//! first touched: about 14 MiB of the binary became resident before the first
//! `tools/list`. Laid out together they fill under 3 MiB.
//!
//! The list comes from `valgrind --tool=callgrind`, which names every function
//! a run executed: a stdio server with the `echo` example cached, asked for
//! its lists and a few calls. Under valgrind the CPU looks different to
//! wasmtime, so the run first fills a compile cache of its own (under
//! valgrind, optimiser finished); it runs with on-demand instances, as
//! valgrind cannot reserve the pool's address space. Symbols that change
//! name later (an edited or new function) are skipped by the linker, so an
//! old list costs locality, never a build. ThinLTO's suffixes on the local
//! functions it shares between crates name the module, not a hash of its
//! code (`.cargo/config.toml`), so they survive edits.
//!
//! What valgrind cannot show is then found on the real CPU: the instance
//! pool (valgrind cannot reserve its address space), the spares it allows,
//! and the code paths a library picks for the CPU's own features (SHA-NI,
//! AVX-512, which valgrind does not emulate). A release build with the list
//! so far serves the same requests under `perf record -e page-faults`; every
//! instruction fetch that faults outside the listed functions names a
//! function the list lacks. Those are added and the binary is built again,
//! for at most [`FAULT_ROUNDS`] rounds or until one finds none (one fault
//! maps a 64 KiB window, so a round sees only the first function touched
//! in each window, and the next round the one behind it). Skipped, with a
//! warning, where `perf` is missing.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::{cargo, root, run};

/// Where the list is kept (read by host/build.rs).
pub const ORDER_FILE: &str = "host/link/startup-order.txt";

/// What the measured client sends: the lists and a few calls, 2026-07-28.
const REQUESTS: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo_echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo_echo","arguments":{"text":"again"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    r#"{"jsonrpc":"2.0","id":4,"method":"resources/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    r#"{"jsonrpc":"2.0","id":5,"method":"prompts/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    r#"{"jsonrpc":"2.0","id":6,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo_echo","arguments":{"text":"last"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
];

/// `faults_only`: start from the list as it is, without the callgrind run.
pub fn link_order(faults_only: bool) -> Result<()> {
    if !faults_only && Command::new("valgrind").arg("--version").output().is_err() {
        bail!("needs valgrind (apt-get install valgrind)");
    }
    // Checked before the builds, which take minutes.
    let perf = Command::new("perf").arg("--version").output().is_ok();
    if faults_only && !perf {
        bail!("--faults-only needs perf (apt-get install linux-perf)");
    }
    crate::build_plugins()?;
    run(cargo().args(["build", "--release", "-p", "wharf", "--bin", "wharf"]))?;
    let wharf = root().join("target/release/wharf");
    let work = root().join("target/link-order");
    let _ = std::fs::remove_dir_all(&work);
    let plugins = work.join("plugins");
    std::fs::create_dir_all(&plugins)?;
    std::fs::copy(
        root().join("target/plugins/echo.wasm"),
        plugins.join("echo.wasm"),
    )
    .context("copying the echo example")?;
    let mut names = if faults_only {
        listed_functions()?
    } else {
        callgrind_functions(&wharf, &work, &plugins)?
    };
    if !perf {
        eprintln!(
            "xtask: warning: no `perf` (apt-get install linux-perf): the list lacks the \
             instance pool's code and the CPU-specific paths valgrind cannot see"
        );
        return Ok(());
    }
    let native = NativeRun {
        wharf: &wharf,
        plugins: &plugins,
        cache: &work.join("cache-native"),
        faults: &work.join("faults.data"),
    };
    for round in 1..=FAULT_ROUNDS {
        run(cargo().args(["build", "--release", "-p", "wharf", "--bin", "wharf"]))?;
        if round == 1 {
            native.fill_cache()?;
        }
        let listed: HashSet<&str> = names.iter().map(String::as_str).collect();
        let mut missing = Vec::new();
        for _ in 0..RUNS_PER_ROUND {
            for name in native.code_faults()? {
                if !listed.contains(name.as_str()) && !missing.contains(&name) {
                    missing.push(name);
                }
            }
        }
        eprintln!(
            "xtask: round {round}: {} functions faulted in outside the list",
            missing.len()
        );
        if missing.is_empty() {
            break;
        }
        names.extend(missing);
        write_order(&names)?;
    }
    eprintln!("xtask: {} functions written to {ORDER_FILE}", names.len());
    Ok(())
}

/// The functions a start-up runs under callgrind, written to the list.
fn callgrind_functions(wharf: &Path, work: &Path, plugins: &Path) -> Result<Vec<String>> {
    // valgrind's own options, then the server.
    let serve = |valgrind_options: &[String]| {
        let mut cmd = Command::new("valgrind");
        cmd.args(valgrind_options)
            .arg("-q")
            .arg(wharf)
            .args(["serve", "--no-pool", "--plugins"])
            .arg(plugins)
            .arg("--cache-dir")
            .arg(work.join("cache"))
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        cmd
    };

    // The cache, compiled for the CPU valgrind shows and optimised (a
    // handoff fills an existing cache only).
    std::fs::create_dir_all(work.join("cache")).context("making the cache folder")?;
    let mut fill = serve(&["--tool=none".into()]);
    fill.env("WHARF_FINISH_OPTIMIZING", "1")
        .stdin(Stdio::null());
    run(&mut fill)?;

    let profile = work.join("callgrind.out");
    let mut child = serve(&[
        "--tool=callgrind".into(),
        "--demangle=no".into(),
        "--dump-instr=no".into(),
        "--compress-strings=no".into(),
        "--compress-pos=no".into(),
        format!("--callgrind-out-file={}", profile.display()),
    ])
    .stdin(Stdio::piped())
    .spawn()
    .context("starting valgrind")?;
    send_requests(child.stdin.take().expect("piped"))?;
    let status = child.wait()?;
    if !status.success() {
        bail!("the measured run failed: {status}");
    }

    let names = executed_functions(&std::fs::read_to_string(&profile)?, wharf);
    if names.len() < 500 {
        bail!("only {} functions recorded: not a real run", names.len());
    }
    write_order(&names)?;
    eprintln!("xtask: {} functions from callgrind", names.len());
    Ok(names)
}

/// The list as it stands, for `--faults-only`.
fn listed_functions() -> Result<Vec<String>> {
    let path = root().join(ORDER_FILE);
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "reading {}: make it first without --faults-only",
            path.display()
        )
    })?;
    let names: Vec<String> = text.lines().map(str::to_string).collect();
    eprintln!("xtask: {} functions listed already", names.len());
    Ok(names)
}

/// Writes [`REQUESTS`] to a server's stdin, one per line, and hands it back
/// (dropped, it closes the server's input).
fn send_requests<W: Write>(mut stdin: W) -> Result<W> {
    for request in REQUESTS {
        writeln!(stdin, "{request}")?;
    }
    Ok(stdin)
}

/// Rounds of the page-fault check at most; each builds the binary again.
const FAULT_ROUNDS: usize = 4;
/// Runs per round: what a start-up touches varies a little with timing.
const RUNS_PER_ROUND: usize = 3;

fn write_order(names: &[String]) -> Result<()> {
    let out = root().join(ORDER_FILE);
    std::fs::create_dir_all(out.parent().expect("a folder"))?;
    let mut text = String::new();
    for name in names {
        text.push_str(name);
        text.push('\n');
    }
    std::fs::write(&out, text).with_context(|| format!("writing {}", out.display()))
}

/// The release build serving [`REQUESTS`] on this CPU, with the instance pool.
struct NativeRun<'a> {
    wharf: &'a Path,
    plugins: &'a Path,
    cache: &'a Path,
    faults: &'a Path,
}

impl NativeRun<'_> {
    /// `serve` with the run's folder and cache, added to `cmd` after the
    /// binary's path.
    fn serve(&self, cmd: &mut Command) {
        cmd.args(["serve", "--plugins"])
            .arg(self.plugins)
            .arg("--cache-dir")
            .arg(self.cache)
            .stderr(Stdio::null());
    }

    /// Optimised code for this CPU, as a long-lived server leaves it.
    fn fill_cache(&self) -> Result<()> {
        // A handoff fills an existing cache only.
        std::fs::create_dir_all(self.cache).context("making the cache folder")?;
        let mut fill = Command::new(self.wharf);
        self.serve(&mut fill);
        fill.arg("--no-quick-compile")
            .env("WHARF_FINISH_OPTIMIZING", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null());
        run(&mut fill)
    }

    /// The functions of the binary whose first instruction fetch faulted in
    /// one run: its requests answered, and a moment for the work after them
    /// (the next spare, the stores dropped), then stdin closed.
    fn code_faults(&self) -> Result<Vec<String>> {
        let mut cmd = Command::new("perf");
        cmd.args(["record", "-q", "-e", "page-faults", "-c", "1", "-d", "-o"])
            .arg(self.faults)
            .arg("--")
            .arg(self.wharf);
        self.serve(&mut cmd);
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .context("starting perf record")?;
        let stdin = send_requests(child.stdin.take().expect("piped"))?;
        let mut answers = BufReader::new(child.stdout.take().expect("piped")).lines();
        for _ in REQUESTS {
            answers
                .next()
                .context("the server ended before answering")??;
        }
        std::thread::sleep(Duration::from_millis(300));
        drop(stdin);
        let status = child.wait()?;
        if !status.success() {
            bail!("the run under perf failed: {status}");
        }
        let script = Command::new("perf")
            .args(["script", "--no-demangle", "-F", "addr,ip,sym,dso", "-i"])
            .arg(self.faults)
            .output()
            .context("perf script")?;
        if !script.status.success() {
            bail!(
                "perf script failed: {}",
                String::from_utf8_lossy(&script.stderr)
            );
        }
        Ok(code_faults(
            &String::from_utf8_lossy(&script.stdout),
            self.wharf,
        ))
    }
}

/// From `perf script -F addr,ip,sym,dso` of page faults: the functions of
/// `binary` whose own code faulted (the faulting address is the instruction
/// pointer), each once. A line reads `ADDR SYM (DSO) IP SYM (DSO)`.
fn code_faults(script: &str, binary: &Path) -> Vec<String> {
    let dso = format!("({})", binary.display());
    let mut names = Vec::new();
    for line in script.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [addr, _, addr_dso, ip, symbol, ip_dso] = fields[..] else {
            continue;
        };
        let known = !symbol.starts_with('[') && symbol != "_start" && symbol != "_init";
        if addr == ip && addr_dso == dso && ip_dso == dso && known {
            let name = symbol.split('+').next().unwrap_or(symbol).to_string();
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
}

/// The mangled names of the functions of `binary` in a callgrind profile
/// (`--compress-strings=no`), each once, in the order the profile names them.
fn executed_functions(profile: &str, binary: &Path) -> Vec<String> {
    let mut object_is_binary = false;
    let mut seen = HashSet::new();
    let mut names = Vec::new();
    for line in profile.lines() {
        if let Some(object) = line.strip_prefix("ob=") {
            object_is_binary = Path::new(object.trim()) == binary;
        } else if let Some(function) = line.strip_prefix("fn=")
            && object_is_binary
        {
            // callgrind marks recursion levels as `name'2`.
            let name = function.trim();
            let name = match name.rsplit_once('\'') {
                Some((base, level)) if level.bytes().all(|b| b.is_ascii_digit()) => base,
                _ => name,
            };
            if seen.insert(name.to_string()) {
                names.push(name.to_string());
            }
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_the_binarys_own_instruction_faults_once() {
        let script = "\
    55ed0a386d20 [unknown] (/w/wharf)     7fcf00000010 _dl_relocate (/usr/lib/ld.so)
    55ed0844f650 _start (/w/wharf)     55ed0844f650 _start (/w/wharf)
    55ed0897a670 _ZN1a3new17h1E (/w/wharf)     55ed0897a670 _ZN1a3new17h1E (/w/wharf)
    55ed0897a900 _ZN1a3new17h1E (/w/wharf)     55ed0897a900 _ZN1a3new17h1E (/w/wharf)
    55ed08990000 _ZN1b4data17h2E (/w/wharf)     55ed0897b000 _ZN1b3get17h3E (/w/wharf)
    7fcf00001000 memcpy (/usr/lib/libc.so.6)     7fcf00001000 memcpy (/usr/lib/libc.so.6)
    55ed08999000 [unknown] (/w/wharf)     55ed08999000 [unknown] (/w/wharf)
    55ed089a0000 mi_free (/w/wharf)     55ed089a0000 mi_free (/w/wharf)
";
        assert_eq!(
            code_faults(script, Path::new("/w/wharf")),
            ["_ZN1a3new17h1E", "mi_free"]
        );
    }

    #[test]
    fn takes_the_binarys_functions_once_without_recursion_marks() {
        let profile = "ob=/usr/lib/libc.so.6\nfn=memcpy\n0 3\n\
                       ob=/w/wharf\nfn=_ZN5wharf4main17h0E\n0 1\nfn=_ZN1a1b17h1E'2\n\
                       fn=_ZN1a1b17h1E\nob=/usr/lib/libc.so.6\nfn=free\n";
        assert_eq!(
            executed_functions(profile, Path::new("/w/wharf")),
            ["_ZN5wharf4main17h0E", "_ZN1a1b17h1E"]
        );
    }
}
