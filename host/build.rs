//! Embeds what `wharf new` writes into a project, so the installed binary
//! scaffolds offline: the templates (`templates/<lang>/`), the WIT package
//! (`../wit/plugin.wit`) and the Rust SDK's sources (`../plugin-sdk`, with the
//! `../uri-template` crate it depends on).
//!
//! A build script rather than a crate such as `include_dir`: it adds no
//! dependency, `rerun-if-changed` on the folders makes an edited template
//! rebuild the binary (a proc macro cannot tell Cargo that on stable Rust),
//! and the SDK's `Cargo.toml` files need rewriting anyway: their
//! `key.workspace = true` lines name this repository's workspace, which an
//! author's project does not have, so they are replaced here by the values of
//! the root `Cargo.toml`'s `[workspace.package]` and `[workspace.dependencies]`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest_dir.parent().unwrap().to_path_buf();
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    link_relocations_packed();
    link_startup_order(&manifest_dir.join("link/startup-order.txt"));
    for watched in [
        manifest_dir.join("templates"),
        root.join("wit"),
        root.join("plugin-sdk"),
        root.join("uri-template"),
        root.join("sdk/typescript"),
        root.join("sdk/python/wharf_sdk"),
        root.join("Cargo.toml"),
    ] {
        println!("cargo:rerun-if-changed={}", watched.display());
    }

    let workspace = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let mut code = String::new();

    code.push_str("/// `templates/<lang>/<path>` and each file's bytes.\n");
    code.push_str("pub static TEMPLATES: &[(&str, &[u8])] = &[\n");
    for file in files_under(&manifest_dir.join("templates")) {
        let name = relative(&file, &manifest_dir.join("templates"));
        writeln!(
            code,
            "    ({name:?}, include_bytes!({:?})),",
            file.display()
        )
        .unwrap();
    }
    code.push_str("];\n");

    writeln!(
        code,
        "/// The `wharf:plugin` WIT package.\npub static PLUGIN_WIT: &[u8] = include_bytes!({:?});",
        root.join("wit/plugin.wit").display()
    )
    .unwrap();

    // The SDK as `wharf-sdk/`, its URI-template crate as `wharf-sdk/uri-template/`.
    code.push_str("/// The Rust SDK's sources, as vendored into a project's `wharf-sdk/`.\n");
    code.push_str("pub static RUST_SDK: &[(&str, &[u8])] = &[\n");
    for (crate_dir, prefix) in [("plugin-sdk", ""), ("uri-template", "uri-template/")] {
        let dir = root.join(crate_dir);
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        let rewritten = out_dir.join(format!("{crate_dir}.Cargo.toml"));
        std::fs::write(&rewritten, standalone_manifest(&manifest, &workspace)).unwrap();
        writeln!(
            code,
            "    (\"{prefix}Cargo.toml\", include_bytes!({:?})),",
            rewritten.display()
        )
        .unwrap();
        let readme = dir.join("README.md");
        if readme.is_file() {
            writeln!(
                code,
                "    (\"{prefix}README.md\", include_bytes!({:?})),",
                readme.display()
            )
            .unwrap();
        }
        for file in files_under(&dir.join("src")) {
            let name = format!("{prefix}{}", relative(&file, &dir));
            writeln!(
                code,
                "    ({name:?}, include_bytes!({:?})),",
                file.display()
            )
            .unwrap();
        }
    }
    code.push_str("];\n");

    // The TypeScript SDK as `wharf-sdk/` (an npm package the project names
    // `file:./wharf-sdk`), the Python SDK as the `wharf_sdk/` package.
    let typescript = root.join("sdk/typescript");
    let mut typescript_files = vec![
        typescript.join("package.json"),
        typescript.join("README.md"),
    ];
    typescript_files.extend(files_under(&typescript.join("src")));
    embed_list(
        &mut code,
        "TYPESCRIPT_SDK",
        "The TypeScript SDK, as vendored into a project's `wharf-sdk/`.",
        &typescript,
        &typescript_files,
    );
    let python = root.join("sdk/python/wharf_sdk");
    embed_list(
        &mut code,
        "PYTHON_SDK",
        "The Python SDK package, as vendored into a project's `wharf_sdk/`.",
        &python,
        &files_under(&python),
    );
    std::fs::write(out_dir.join("embedded.rs"), code).unwrap();
}

/// `pub static NAME: &[(&str, &[u8])]`: each of `files`, named relative to `base`.
fn embed_list(code: &mut String, name: &str, doc: &str, base: &Path, files: &[PathBuf]) {
    writeln!(code, "/// {doc}\npub static {name}: &[(&str, &[u8])] = &[").unwrap();
    for file in files {
        writeln!(
            code,
            "    ({:?}, include_bytes!({:?})),",
            relative(file, base),
            file.display()
        )
        .unwrap();
    }
    code.push_str("];\n");
}

/// A member's `Cargo.toml` without workspace inheritance: each
/// `key.workspace = true` line becomes the root's `key = value` line, and the
/// path dependency on the URI-template crate points at its vendored copy.
fn standalone_manifest(manifest: &str, workspace: &str) -> String {
    let mut out = String::new();
    for line in manifest.lines() {
        let Some(key) = line.strip_suffix(".workspace = true") else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        let value = if key == "wharf-uri-template" {
            "{ path = \"uri-template\" }".to_string()
        } else {
            workspace_value(workspace, key)
                .unwrap_or_else(|| panic!("no `{key} = ...` line in the workspace Cargo.toml"))
        };
        writeln!(out, "{key} = {value}").unwrap();
    }
    out
}

/// The value of the one-line `key = value` entry of `[workspace.package]` or
/// `[workspace.dependencies]`.
fn workspace_value(workspace: &str, key: &str) -> Option<String> {
    let mut section = "";
    for line in workspace.lines() {
        if line.starts_with('[') {
            section = line;
            continue;
        }
        if (section == "[workspace.package]" || section == "[workspace.dependencies]")
            && let Some(value) = line.strip_prefix(&format!("{key} = "))
        {
            return Some(value.to_string());
        }
    }
    None
}

fn relative(file: &Path, base: &Path) -> String {
    file.strip_prefix(base)
        .unwrap()
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// Every file under `dir`, sorted, so the generated code is stable.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("listing {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        // Caches a local test run leaves behind are not sources.
        let name = path.file_name().unwrap().to_string_lossy();
        if name == "__pycache__" || name == "node_modules" || name.ends_with(".pyc") {
            continue;
        }
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// Packs the `wharf` binary's relative relocations (`DT_RELR`, glibc 2.36 and
/// later): the dynamic loader otherwise reads 68,000 `RELA` entries (1.6 MB,
/// 24 bytes each, every page of them resident) before `main`, where the
/// packed table is a few KiB.
fn link_relocations_packed() {
    if target("CARGO_CFG_TARGET_OS") == "linux" && target("CARGO_CFG_TARGET_ENV") == "gnu" {
        println!("cargo:rustc-link-arg-bin=wharf=-Wl,-z,pack-relative-relocs");
    }
}

/// Lays out the functions a start-up and its first calls run next to each
/// other in optimised builds (`cargo xtask link-order` writes the list).
/// Spread over the binary's 34 MiB of code by the default order, they made
/// about 14 MiB of it resident, the kernel mapping 64 KiB around each first
/// touch; together they fill under 3 MiB. Only for x86-64 Linux, whose Rust
/// links with LLD (GNU ld has no `--symbol-ordering-file`); a name the list
/// has and the binary lacks is skipped. The names ThinLTO gives the local
/// functions it shares between crates end in the module's name rather than a
/// hash of its code (`.cargo/config.toml`), so an edit renames only what it
/// touches.
fn link_startup_order(order: &Path) {
    println!("cargo:rerun-if-changed={}", order.display());
    let optimized = target("PROFILE") == "release";
    if optimized
        && target("CARGO_CFG_TARGET_OS") == "linux"
        && target("CARGO_CFG_TARGET_ARCH") == "x86_64"
        && order.exists()
    {
        println!(
            "cargo:rustc-link-arg-bin=wharf=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo:rustc-link-arg-bin=wharf=-Wl,--no-warn-symbol-ordering");
    }
}

/// A variable Cargo sets for build scripts (target and profile), or "".
fn target(key: &str) -> String {
    std::env::var(key).unwrap_or_default()
}
