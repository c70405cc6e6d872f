//! WIT doc comments carried inside a component, in custom sections.
//!
//! No component toolchain keeps WIT doc comments (wit-bindgen, `wasm-tools
//! component new`, jco, componentize-py all drop them), so a plain component's
//! tool descriptions need a carrier: the `package-docs` section that
//! wit-component's own decoder reads (one version byte, then JSON with `worlds`
//! and `interfaces`).
//!
//! That decoder is strict: it applies the section to the component's decoded
//! package (`root:component`, world `root`) and refuses the whole component if
//! the section names anything that package lacks, and an exported interface
//! such as `ns:pkg/iface` always lies in a package of its own. So [`embed()`]
//! writes two sections: `package-docs` with only what the decoder accepts
//! (checked by decoding), and `wharf-package-docs`, the same format with
//! everything the WIT folder documents (interfaces by their short names).
//! [`PackageDocs`] reads the latter when present, else the former.
//!
//! The rooms: `package_docs` reads the docs ([`PackageDocs`]), `embed` writes
//! them from a WIT folder, and `sections` finds and replaces custom sections in
//! a binary, for both.

mod embed;
mod package_docs;
mod sections;

pub use embed::{embed, section_from_wit};
pub use package_docs::{PackageDocs, TypeDocs, interface_short_name};
pub use sections::{custom_sections, with_section};

/// The custom section's name, as defined by the component-model tooling.
pub const SECTION_NAME: &str = "package-docs";
/// Wharf's section: `package-docs`' format, with docs the standard one cannot hold.
pub const FULL_SECTION_NAME: &str = "wharf-package-docs";
/// The format version this host writes (it reads 0 and 1).
const SECTION_VERSION: u8 = 1;
/// The world key wit-component's decoder gives a component's own world.
const DECODED_WORLD: &str = "root";

/// Why doc comments could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum DocsError {
    #[error("this is not a WebAssembly binary")]
    NotWasm,
    #[error("the WebAssembly binary is truncated or malformed at byte {0}")]
    Malformed(usize),
    #[error("the package-docs section has unknown version {0}")]
    Version(u8),
    #[error("the package-docs section is not valid JSON: {0}")]
    Json(String),
    #[error("reading the WIT folder {path} failed: {message}")]
    Wit { path: String, message: String },
    #[error("the WIT package has several worlds ({0}); choose one with --world")]
    WhichWorld(String),
    #[error("the WIT package has no world named `{0}`")]
    NoWorld(String),
}

/// The smallest component: the header alone (a fixture of the unit tests).
#[cfg(test)]
const EMPTY_COMPONENT: &[u8] = b"\0asm\x0d\x00\x01\x00";
