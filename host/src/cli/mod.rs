//! The `wharf` command line: what each subcommand takes and what it does.
//!
//! One file per subcommand (`serve`, `inspect`, `call`, `embed_docs`, the
//! authors' `new`, `build` and `dev`), each
//! with its argument struct (every flag's doc comment is its `--help`) and
//! its `run`. The argument groups several subcommands share are files of
//! their own (`limits`, `cache`), as are serve's HTTP settings (`http`) and
//! the one-component runtime of `inspect` and `call` (`single`). `process`
//! prepares the process itself: logging, memory policy, async runtimes and
//! shutdown signals.
//!
//! A new subcommand is one more file here and one more arm of [`Command`].

mod audit;
mod build;
mod cache;
mod call;
mod dev;
mod embed_docs;
mod handoff;
mod http;
mod inspect;
mod limits;
mod new;
mod oci;
mod process;
#[cfg(target_os = "linux")]
pub(crate) use process::no_transparent_huge_pages;
mod registry;
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
    /// Streamable HTTP with `--http`). Boxed: its flags outweigh the other
    /// subcommands' many times over.
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
    /// Make an ECDSA P-256 key pair for signing plugins (cosign-compatible public key).
    Keygen(oci::KeygenArgs),
    /// Push a component to an OCI registry, with its manifest as an annotation.
    Push(oci::PushArgs),
    /// Sign what an OCI reference names (a cosign signature in the registry).
    Sign(oci::SignArgs),
    /// Pull a component from an OCI registry, verifying its signature with `--trust`.
    Pull(oci::PullArgs),
    /// Start a plugin project from a template: rust, typescript, javascript,
    /// python, go or c.
    New(new::NewArgs),
    /// Build the plugin project in a folder into `NAME.wasm`, with its docs.
    Build(build::BuildArgs),
    /// Rebuild a plugin project on every save and drop it into a server's
    /// plugin folder (optionally serving it too).
    Dev(dev::DevArgs),
}

impl Cli {
    /// Prepares the process (logging, memory policy) and runs the subcommand.
    pub fn run(self) -> anyhow::Result<()> {
        // Export starts before logging, whose subscriber carries its layer.
        let telemetry = match &self.command {
            Command::Serve(args) => process::with_start_up_log(|| args.telemetry())?,
            _ => None,
        };
        process::init_logging(telemetry.as_ref());
        process::report_transparent_huge_pages();
        match self.command {
            Command::Serve(args) => (*args).run(telemetry),
            Command::Inspect(args) => args.run(),
            Command::Call(args) => args.run(),
            Command::EmbedDocs(args) => args.run(),
            Command::Keygen(args) => args.run(),
            Command::Push(args) => args.run(),
            Command::Sign(args) => args.run(),
            Command::Pull(args) => args.run(),
            Command::New(args) => args.run(),
            Command::Build(args) => args.run(),
            Command::Dev(args) => args.run(),
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

    /// The OAuth flags: exclusive with the static token, and each needs the
    /// public URL (what tokens' `aud` must name).
    #[test]
    fn oauth_flags_need_a_public_url_and_no_static_token() {
        let parse = |extra: &[&str]| {
            let mut args = vec!["wharf", "serve", "--plugins", "p", "--http", "0"];
            args.extend_from_slice(extra);
            Cli::try_parse_from(args).map(|_| ()).map_err(|e| e.kind())
        };
        use clap::error::ErrorKind;
        assert_eq!(
            parse(&["--auth-issuer", "https://as.example"]),
            Err(ErrorKind::MissingRequiredArgument)
        );
        assert_eq!(
            parse(&[
                "--auth-issuer",
                "https://as.example",
                "--public-url",
                "https://w.example/mcp",
                "--auth-token",
                "t"
            ]),
            Err(ErrorKind::ArgumentConflict)
        );
        assert_eq!(
            parse(&[
                "--auth-introspection",
                "https://as.example/i",
                "--public-url",
                "https://w.example/mcp"
            ]),
            Err(ErrorKind::MissingRequiredArgument)
        );
        assert_eq!(
            parse(&[
                "--auth-issuer",
                "https://as.example",
                "--auth-issuer",
                "https://b.example",
                "--public-url",
                "https://w.example/mcp"
            ]),
            Ok(())
        );
    }
}
