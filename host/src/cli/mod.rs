//! The `wharf` command line: what each subcommand takes and what it does.
//!
//! One file per subcommand (`serve`, `inspect`, `call`, `embed_docs`), each
//! with its argument struct (every flag's doc comment is its `--help`) and
//! its `run`. The argument groups several subcommands share are files of
//! their own (`limits`, `cache`), as are serve's HTTP settings (`http`) and
//! the one-component runtime of `inspect` and `call` (`single`). `process`
//! prepares the process itself: logging, memory policy, async runtimes and
//! shutdown signals.
//!
//! A new subcommand is one more file here and one more arm of [`Command`].

mod audit;
mod cache;
mod call;
mod embed_docs;
mod http;
mod inspect;
mod limits;
mod process;
mod serve;
mod single;

use clap::{Parser, Subcommand};

/// The target of the command line's log lines. They were written from the
/// binary's root module, so `wharf`; kept so the lines read as before.
const LOG_TARGET: &str = "wharf";

/// Serve WebAssembly components as MCP tools.
#[derive(Parser)]
#[command(name = "wharf", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    command: Command,
}

/// The subcommands; each arm's doc comment is its line in `wharf --help`.
#[derive(Subcommand)]
enum Command {
    /// Load every component in a folder and serve its tools over MCP (stdio, or
    /// Streamable HTTP with `--http`).
    Serve(Box<serve::ServeArgs>),
    /// Describe one component without serving it: its kind, tools with their
    /// schemas, skipped functions, and the permissions it imports and is granted.
    Inspect(inspect::InspectArgs),
    /// Run one tool of one component once and print its result.
    Call(call::CallArgs),
    /// Write the doc comments of a WIT folder into a component (its
    /// `package-docs` and `wharf-package-docs` sections), so Wharf can use them as
    /// tool descriptions.
    EmbedDocs(embed_docs::EmbedDocsArgs),
}

impl Cli {
    /// Prepares the process (logging, memory policy) and runs the subcommand.
    pub fn run(self) -> anyhow::Result<()> {
        // Export starts before logging, whose subscriber carries its layer.
        let telemetry = match &self.command {
            Command::Serve(args) => args.telemetry()?,
            _ => None,
        };
        process::init_logging(telemetry.as_ref());
        process::no_transparent_huge_pages();
        match self.command {
            Command::Serve(args) => args.run(telemetry),
            Command::Inspect(args) => args.run(),
            Command::Call(args) => args.run(),
            Command::EmbedDocs(args) => args.run(),
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    /// clap's own consistency checks (duplicate flags, bad defaults, ...),
    /// which otherwise run only when a subcommand's arguments are parsed.
    #[test]
    fn arguments_are_consistent() {
        Cli::command().debug_assert();
    }
}
