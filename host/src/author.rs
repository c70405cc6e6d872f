//! Plugin authors' tooling: `wharf new` (a project from a template), `wharf
//! build` (the language's toolchain, then a component with its docs) and the
//! pieces `wharf dev` repeats on every save.
//!
//! A room of its own beside the server: it imports only the `docs` leaf (to
//! embed the WIT doc comments) and the `wharf-componentize` crate it shares
//! with `cargo xtask examples` (component embed/new with the WASI adapter, C
//! bindings, registry installs). The command line (`cli/new.rs`,
//! `cli/build.rs`, `cli/dev.rs`) prints; this room does the work.
//!
//! - `language`: the languages and how a project folder tells which it is.
//! - `embedded`: the templates, the WIT package and the Rust SDK, built into
//!   the binary by `host/build.rs`.
//! - `scaffold`: `wharf new`.
//! - `toolchain`: finding each toolchain, or installing it into a cache.
//! - `build`: `wharf build`.

pub mod build;
mod embedded;
pub mod language;
pub mod scaffold;
pub mod toolchain;

pub use build::{Built, build};
pub use language::{Language, Project};
pub use scaffold::{NameError, new_project};
pub use toolchain::Toolchains;
