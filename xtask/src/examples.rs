//! `cargo xtask examples`: builds the example plugins written in languages other
//! than Rust (JavaScript, TypeScript, Python, C, Go, WAT) into `target/plugins/`,
//! beside the Rust ones from `cargo xtask plugins`. The examples written with the
//! TypeScript and Python SDKs (`sdk/`) also run the SDK's unit tests and their own
//! before they are built.
//!
//! Strategy: each example is built in two stages. The slow stage (the language's
//! toolchain, up to a minute for JavaScript and Python) writes
//! `target/examples/NAME/component.wasm` and a stamp: the SHA-256 of the example's
//! sources, its toolchain's version and this build code. When the stamp still
//! matches, that stage is skipped. The fast stage always runs: check that the
//! component exports exactly the functions of its WIT world, copy it to
//! `target/plugins/NAME.wasm` and embed the WIT doc comments there (see
//! [`crate::docs`]; not for SDK examples, whose tool records carry their
//! descriptions). Toolchains from registries are installed under `target/`
//! (npm packages under the example, from its package-lock); a missing system
//! toolchain stops the build with a message naming what to install.

use wharf_componentize as component;

mod languages;
mod toolchains;

pub use toolchains::author_env;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

use crate::root;

/// The source language of an example, which picks its toolchain and build steps.
#[derive(Clone, Copy, Debug)]
pub enum Language {
    JavaScript,
    /// TypeScript with the SDK in `sdk/typescript`: `tsc`, then `jco componentize
    /// --bundle` (which resolves the `wharf-sdk` import).
    TypeScript,
    Python,
    C,
    Go,
    Wat,
}

/// One example plugin: a folder `plugins/NAME` with `wit/` and its sources.
pub struct Example {
    /// Folder under `plugins/`, and the component's file stem (so the plugin name).
    pub name: &'static str,
    pub language: Language,
    /// The world in `wit/` that the component implements.
    pub world: &'static str,
    /// Exports the toolchain adds that are not the example's own functions (and
    /// that a host must not offer as tools).
    pub toolchain_exports: &'static [&'static str],
    /// The SDK folder the example is written with (part of its stamp; its unit
    /// tests run before the example is built).
    pub sdk: Option<&'static str>,
}

/// Every example, in build order (fast ones first).
pub const EXAMPLES: &[Example] = &[
    Example {
        name: "wat-add",
        language: Language::Wat,
        world: "add",
        toolchain_exports: &[],
        sdk: None,
    },
    Example {
        name: "c-checksum",
        language: Language::C,
        world: "checksum",
        toolchain_exports: &[],
        sdk: None,
    },
    Example {
        name: "go-roman",
        language: Language::Go,
        world: "roman",
        toolchain_exports: &[],
        sdk: None,
    },
    Example {
        name: "py-stats",
        language: Language::Python,
        world: "stats",
        // componentize-py's own initialisation hook.
        toolchain_exports: &["exports.init"],
        sdk: None,
    },
    Example {
        name: "js-strings",
        language: Language::JavaScript,
        world: "strings",
        toolchain_exports: &[],
        sdk: None,
    },
    Example {
        name: "py-notes",
        language: Language::Python,
        world: "plugin",
        toolchain_exports: &["exports.init"],
        sdk: Some("sdk/python"),
    },
    Example {
        name: "ts-notes",
        language: Language::TypeScript,
        world: "plugin",
        toolchain_exports: &[],
        sdk: Some("sdk/typescript"),
    },
];

impl Example {
    /// `plugins/NAME`.
    pub fn source_dir(&self) -> PathBuf {
        root().join("plugins").join(self.name)
    }

    /// `target/examples/NAME`: the toolchain's scratch space and the cached build.
    pub fn work_dir(&self) -> PathBuf {
        root().join("target/examples").join(self.name)
    }

    /// The SDK's folder, for the examples written with one.
    pub fn sdk_dir(&self) -> Option<PathBuf> {
        self.sdk.map(|dir| root().join(dir))
    }

    fn cached_component(&self) -> PathBuf {
        self.work_dir().join("component.wasm")
    }
}

/// Fails unless every name in `only` is an example.
pub fn check_names(only: &[String]) -> Result<()> {
    for name in only {
        if !EXAMPLES.iter().any(|example| example.name == name) {
            bail!("no example named `{name}`; the examples are {}", names());
        }
    }
    Ok(())
}

/// Builds every example (or those named in `only`) into `target/plugins/`, with
/// the docs embedded by `wharf_bin`. Returns the paths written.
pub fn build(wharf_bin: &Path, only: &[String]) -> Result<Vec<PathBuf>> {
    check_names(only)?;
    let out_dir = root().join("target/plugins");
    std::fs::create_dir_all(&out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    let mut written = Vec::new();
    for example in EXAMPLES {
        if !only.is_empty() && !only.iter().any(|name| name == example.name) {
            continue;
        }
        let component = build_cached(example)
            .with_context(|| format!("building the example `{}`", example.name))?;
        check_exports(example, &std::fs::read(&component)?)?;
        let dest = out_dir.join(format!("{}.wasm", example.name));
        std::fs::copy(&component, &dest)
            .with_context(|| format!("copying {} to {}", component.display(), dest.display()))?;
        // SDK examples describe their tools in the records the SDK returns.
        if example.sdk.is_none() {
            crate::docs::embed_docs(wharf_bin, &dest, &example.source_dir().join("wit"))
                .with_context(|| format!("embedding the WIT docs in {}", dest.display()))?;
        }
        let size = std::fs::metadata(&dest)?.len();
        eprintln!("xtask: {} ({size} bytes)", dest.display());
        written.push(dest);
    }
    Ok(written)
}

/// Prints the WIT, the exports and the imports decoded from each built example.
pub fn print_wit(only: &[String]) -> Result<()> {
    for example in EXAMPLES {
        if !only.is_empty() && !only.iter().any(|name| name == example.name) {
            continue;
        }
        let path = root()
            .join("target/plugins")
            .join(format!("{}.wasm", example.name));
        let bytes = std::fs::read(&path).with_context(|| {
            format!(
                "reading {}: run `cargo xtask examples` first",
                path.display()
            )
        })?;
        let decoded = component::decode(&bytes)?;
        println!("// {} ({} bytes)", path.display(), bytes.len());
        println!("// exports: {:?}", decoded.exports);
        println!("// imports: {:?}", decoded.imports);
        println!("{}", decoded.wit);
    }
    Ok(())
}

fn names() -> String {
    EXAMPLES
        .iter()
        .map(|example| example.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The component of `example` from the cache, rebuilt when its stamp changed.
fn build_cached(example: &Example) -> Result<PathBuf> {
    let toolchain = toolchains::prepare(example)?;
    let stamp = stamp(example, &toolchain)?;
    let stamp_file = example.work_dir().join("stamp");
    let cached = example.cached_component();
    if cached.is_file() && std::fs::read_to_string(&stamp_file).ok().as_deref() == Some(&stamp) {
        eprintln!("xtask: {} is up to date ({toolchain})", example.name);
        return Ok(cached);
    }
    std::fs::create_dir_all(example.work_dir())?;
    let _ = std::fs::remove_file(&stamp_file);
    let started = std::time::Instant::now();
    eprintln!("xtask: building {} with {toolchain}", example.name);
    let bytes = languages::build(example)?;
    std::fs::write(&cached, &bytes).with_context(|| format!("writing {}", cached.display()))?;
    std::fs::write(&stamp_file, stamp)?;
    eprintln!(
        "xtask: built {} in {:.1} s ({} bytes)",
        example.name,
        started.elapsed().as_secs_f64(),
        bytes.len()
    );
    Ok(cached)
}

/// SHA-256 over the example's files and its SDK's (not `node_modules/`, build
/// output or bytecode caches), the toolchain's version and the build code
/// (this module and the `wharf-componentize` crate).
fn stamp(example: &Example, toolchain: &str) -> Result<String> {
    let mut hasher = Sha256::new();
    hasher.update(toolchain.as_bytes());
    hasher.update([0]);
    let xtask = root().join("xtask");
    let componentize = root().join("componentize");
    let mut inputs = vec![
        xtask.join("Cargo.toml"),
        xtask.join("src/examples.rs"),
        componentize.join("Cargo.toml"),
    ];
    files_under(&xtask.join("src/examples"), &mut inputs)?;
    files_under(&componentize.join("src"), &mut inputs)?;
    files_under(&example.source_dir(), &mut inputs)?;
    if let Some(sdk) = example.sdk_dir() {
        files_under(&sdk, &mut inputs)?;
    }
    let root = root();
    for file in inputs {
        // Relative paths: the same sources in another checkout have the same stamp.
        let name = file.strip_prefix(&root).unwrap_or(&file);
        hasher.update(name.to_string_lossy().as_bytes());
        hasher.update([0]);
        hasher.update(std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?);
        hasher.update([0]);
    }
    Ok(format!("{:x}", hasher.finalize()))
}

/// Folders that builds and tests write inside an example or an SDK.
const GENERATED_DIRS: &[&str] = &["node_modules", "dist", "__pycache__"];

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let mut entries = std::fs::read_dir(dir)
        .with_context(|| format!("listing {}", dir.display()))?
        .collect::<std::io::Result<Vec<_>>>()?;
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            if !GENERATED_DIRS.iter().any(|dir| entry.file_name() == *dir) {
                files_under(&path, out)?;
            }
        } else {
            out.push(path);
        }
    }
    Ok(())
}

/// The component must export the functions of its WIT world, plus the
/// toolchain's known extras, and nothing else.
fn check_exports(example: &Example, component: &[u8]) -> Result<()> {
    let wit = component::Wit::load(&example.source_dir().join("wit"), example.world)?;
    // An SDK example's descriptions come from the tool records the SDK returns,
    // not from its WIT (the host's `wharf:plugin` contract, which it copies).
    let undocumented = if example.sdk.is_some() {
        Vec::new()
    } else {
        wit.undocumented()
    };
    if !undocumented.is_empty() {
        bail!(
            "{}: give these a doc comment in wit/ (they become tool descriptions): {}",
            example.name,
            undocumented.join(", ")
        );
    }
    let mut expected = wit.exported_functions();
    expected.extend(
        example
            .toolchain_exports
            .iter()
            .map(|name| name.to_string()),
    );
    let found = component::decode(component)?.exports;
    if found != expected {
        let missing: BTreeSet<_> = expected.difference(&found).collect();
        let extra: BTreeSet<_> = found.difference(&expected).collect();
        bail!(
            "{} exports the wrong functions: missing {missing:?}, unexpected {extra:?}",
            example.name
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use wharf_componentize::{self as component, Wit};

    fn example(name: &str) -> &'static Example {
        EXAMPLES.iter().find(|e| e.name == name).unwrap()
    }

    /// The WAT example needs no toolchain: build it and check what it is.
    #[test]
    fn wat_add_is_a_tiny_component_exporting_add() {
        let example = example("wat-add");
        let bytes = languages::build(example).unwrap();
        let decoded = component::decode(&bytes).unwrap();
        assert_eq!(decoded.exports, BTreeSet::from(["add".to_string()]));
        assert!(decoded.imports.is_empty(), "{:?}", decoded.imports);
        assert!(bytes.len() < 1000, "{} bytes", bytes.len());
        check_exports(example, &bytes).unwrap();
    }

    /// A component built for one world does not pass as another example.
    #[test]
    fn a_component_with_other_exports_is_refused() {
        let bytes = languages::build(example("wat-add")).unwrap();
        let error = check_exports(example("go-roman"), &bytes).unwrap_err();
        let message = format!("{error:#}");
        assert!(
            message.contains("missing {\"from-roman\", \"to-roman\"}"),
            "{message}"
        );
        assert!(message.contains("unexpected {\"add\"}"), "{message}");
    }

    /// Every plain example documents its world, functions and types (SDK
    /// examples describe their tools through the SDK), and every world exports
    /// what the table above says.
    #[test]
    fn every_example_wit_is_documented() {
        for example in EXAMPLES {
            let wit = Wit::load(&example.source_dir().join("wit"), example.world).unwrap();
            if example.sdk.is_none() {
                assert_eq!(wit.undocumented(), Vec::<String>::new(), "{}", example.name);
            }
            assert!(!wit.exported_functions().is_empty(), "{}", example.name);
        }
    }

    /// The SDK examples carry a copy of the `wharf:plugin` WIT (as `wharf new`
    /// projects do); it must not drift from the host's.
    #[test]
    fn sdk_examples_carry_the_hosts_wit() {
        let host = std::fs::read_to_string(root().join("wit/plugin.wit")).unwrap();
        for example in EXAMPLES.iter().filter(|e| e.sdk.is_some()) {
            let copy = example.source_dir().join("wit/plugin.wit");
            assert_eq!(
                std::fs::read_to_string(&copy).unwrap(),
                host,
                "{} differs from wit/plugin.wit: copy it over",
                copy.display()
            );
            assert!(example.sdk_dir().unwrap().is_dir(), "{}", example.name);
        }
    }

    #[test]
    fn missing_docs_are_named() {
        let dir = std::env::temp_dir().join(format!("xtask-wit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("w.wit"),
            "package a:b;\n/// Documented.\nworld w {\n  record r { x: u32 }\n  \
             /// Documented.\n  export f: func(v: r);\n  export g: func();\n}\n",
        )
        .unwrap();
        let wit = Wit::load(&dir, "w").unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(wit.undocumented(), ["type r", "function g"]);
    }

    #[test]
    fn stripping_keeps_code_and_component_type() {
        let core = wat::parse_str(
            r#"(module (@custom "name-ish" "x") (@custom "component-type:w" "y")
                 (func (export "f") (result i32) i32.const 7))"#,
        )
        .unwrap();
        let stripped = component::strip_module(&core).unwrap();
        let names: Vec<String> = wasmparser::Parser::new(0)
            .parse_all(&stripped)
            .filter_map(|p| match p.unwrap() {
                wasmparser::Payload::CustomSection(c) => Some(c.name().to_string()),
                _ => None,
            })
            .collect();
        assert_eq!(names, ["component-type:w"]);
        wasmparser::Validator::new()
            .validate_all(&stripped)
            .unwrap();
    }
}
