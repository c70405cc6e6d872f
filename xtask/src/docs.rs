//! Carrying WIT doc comments into a built component, so that Wharf can describe
//! a plain component's tools. No component toolchain keeps the comments; they go
//! into a `package-docs` custom section, written by `wharf embed-docs`.

use std::path::Path;

use anyhow::Result;

/// Embeds the doc comments of the WIT in `wit_dir` into `component`, in place,
/// with `wharf embed-docs --wit WIT_DIR IN.wasm -o OUT.wasm`.
///
/// TODO-at-merge: this is a placeholder on the `langs` branch. The `plain` branch
/// owns `wharf embed-docs` and the real body of this function (same signature);
/// take that version when merging. Until then the components keep no docs, and
/// this does nothing.
pub fn embed_docs(wharf_bin: &Path, component: &Path, wit_dir: &Path) -> Result<()> {
    let _ = (wharf_bin, component, wit_dir);
    Ok(())
}
