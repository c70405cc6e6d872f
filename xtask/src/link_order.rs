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
//! name later (an edited generic, a new ThinLTO suffix) are skipped by the
//! linker, so an old list costs locality, never a build.

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

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

pub fn link_order() -> Result<()> {
    if Command::new("valgrind").arg("--version").output().is_err() {
        bail!("needs valgrind (apt-get install valgrind)");
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
    // valgrind's own options, then the server.
    let serve = |valgrind_options: &[String]| {
        let mut cmd = Command::new("valgrind");
        cmd.args(valgrind_options)
            .arg("-q")
            .arg(&wharf)
            .args(["serve", "--no-pool", "--plugins"])
            .arg(&plugins)
            .arg("--cache-dir")
            .arg(work.join("cache"))
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        cmd
    };

    // The cache, compiled for the CPU valgrind shows and optimised.
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
    {
        let mut stdin = child.stdin.take().expect("piped");
        for request in REQUESTS {
            writeln!(stdin, "{request}")?;
        }
    }
    let status = child.wait()?;
    if !status.success() {
        bail!("the measured run failed: {status}");
    }

    let names = executed_functions(&std::fs::read_to_string(&profile)?, &wharf);
    if names.len() < 500 {
        bail!("only {} functions recorded: not a real run", names.len());
    }
    let out = root().join(ORDER_FILE);
    std::fs::create_dir_all(out.parent().expect("a folder"))?;
    let mut text = String::new();
    for name in &names {
        text.push_str(name);
        text.push('\n');
    }
    std::fs::write(&out, text).with_context(|| format!("writing {}", out.display()))?;
    eprintln!("xtask: {} functions written to {ORDER_FILE}", names.len());
    Ok(())
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
