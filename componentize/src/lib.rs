//! The `wasm-tools` and `wit-bindgen` steps of building a component from a
//! language that has no component toolchain of its own (Go, C, WAT), done with
//! the library crates instead of the CLIs (9 and 6 minutes to `cargo install`):
//! `component embed` and `component new` (wit-component, with the WASI
//! preview-1 reactor adapter of the wasmtime release Wharf uses), the C
//! bindings (wit-bindgen-c), the checks on what a built component exports
//! (wit-component's decoder), and the registry installs of the other
//! toolchains ([`install`]).
//!
//! Shared by `cargo xtask examples` (the example plugins) and `wharf build`
//! (an author's project), so both build a component the same way.

pub mod install;

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{Context, Result, bail};
use wasm_encoder::Encode;
use wit_component::{ComponentEncoder, DecodedWasm, StringEncoding, WitPrinter};
use wit_parser::{Resolve, WorldId, WorldItem, WorldKey};

/// A WIT folder and the world chosen from it.
pub struct Wit {
    pub resolve: Resolve,
    pub world: WorldId,
}

impl Wit {
    /// `wit_dir` parsed the way `wasm-tools component embed WIT_DIR --world WORLD` does.
    pub fn load(wit_dir: &Path, world: &str) -> Result<Self> {
        Self::load_world(wit_dir, Some(world))
    }

    /// `wit_dir` with `world` chosen, or, for `None`, the package's only world.
    pub fn load_world(wit_dir: &Path, world: Option<&str>) -> Result<Self> {
        let mut resolve = Resolve::default();
        let (package, _) = resolve
            .push_path(wit_dir)
            .with_context(|| format!("parsing the WIT in {}", wit_dir.display()))?;
        let world = resolve.select_world(&[package], world).with_context(|| {
            format!(
                "finding world `{}` in {}",
                world.unwrap_or("(the only one)"),
                wit_dir.display()
            )
        })?;
        Ok(Self { resolve, world })
    }

    /// The chosen world's name.
    pub fn world_name(&self) -> &str {
        &self.resolve.worlds[self.world].name
    }

    /// The world's exported functions, as tool suffixes: `f` for a top-level
    /// function, `iface.f` for function `f` of an exported interface.
    pub fn exported_functions(&self) -> BTreeSet<String> {
        exported_functions(&self.resolve, self.world)
    }

    /// The world, exported interfaces, functions and types that have no doc
    /// comment (Wharf turns the comments into tool descriptions).
    pub fn undocumented(&self) -> Vec<String> {
        let resolve = &self.resolve;
        let world = &resolve.worlds[self.world];
        let mut missing = Vec::new();
        if world.docs.contents.is_none() {
            missing.push(format!("world {}", world.name));
        }
        let check_type = |id: wit_parser::TypeId, missing: &mut Vec<String>| {
            let ty = &resolve.types[id];
            if ty.docs.contents.is_none() {
                missing.push(format!("type {}", ty.name.as_deref().unwrap_or("?")));
            }
        };
        for (key, item) in world.imports.iter().chain(&world.exports) {
            match item {
                WorldItem::Function(function) if function.docs.contents.is_none() => {
                    missing.push(format!("function {}", function.name));
                }
                WorldItem::Type { id, .. } => check_type(*id, &mut missing),
                WorldItem::Interface { id, .. } => {
                    let interface = &resolve.interfaces[*id];
                    if interface.docs.contents.is_none() {
                        missing.push(format!("interface {}", resolve.name_world_key(key)));
                    }
                    for function in interface.functions.values() {
                        if function.docs.contents.is_none() {
                            missing.push(format!("function {}", function.name));
                        }
                    }
                    for id in interface.types.values() {
                        check_type(*id, &mut missing);
                    }
                }
                WorldItem::Function(_) => {}
            }
        }
        missing
    }
}

/// `wasm-tools component embed`: the world's type information goes into a custom
/// section of the core module, for `component new` to read.
pub fn embed(core: &[u8], wit: &Wit) -> Result<Vec<u8>> {
    let mut module = core.to_vec();
    wit_component::embed_component_metadata(
        &mut module,
        &wit.resolve,
        wit.world,
        StringEncoding::UTF8,
        false,
    )
    .context("embedding the world's metadata in the core module")?;
    Ok(module)
}

/// How `component new` should treat a core module compiled against WASI preview 1.
#[derive(Clone, Copy)]
pub enum Adapter {
    /// The module imports no WASI (only the WAT example).
    None,
    /// Adapt `wasi_snapshot_preview1` imports to WASI 0.2 with the reactor adapter
    /// (a library-style module: no `_start`).
    Reactor,
    /// As `Reactor`, and give the adapter its memory by `memory.grow` instead of
    /// calling the module's `cabi_realloc`, which (in Go) must not run before the
    /// runtime has started.
    ReactorReallocViaMemoryGrow,
}

/// `wasm-tools component new [--adapt wasi_snapshot_preview1=REACTOR]
/// [--realloc-via-memory-grow]`, validating the result.
pub fn new(module: &[u8], adapter: Adapter) -> Result<Vec<u8>> {
    use wasi_preview1_component_adapter_provider::{
        WASI_SNAPSHOT_PREVIEW1_ADAPTER_NAME, WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER,
    };
    let mut encoder = ComponentEncoder::default();
    encoder
        .validate(true)
        .module(module)
        .context("reading the core module")?;
    match adapter {
        Adapter::None => {}
        Adapter::Reactor | Adapter::ReactorReallocViaMemoryGrow => {
            // Not stripped: wit-component finds the adapter's stack pointer by
            // its entry in the name section (without it the adapter faults).
            encoder
                .adapter(
                    WASI_SNAPSHOT_PREVIEW1_ADAPTER_NAME,
                    WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER,
                )
                .context("adding the WASI preview-1 reactor adapter")?;
        }
    }
    if let Adapter::ReactorReallocViaMemoryGrow = adapter {
        encoder.realloc_via_memory_grow(true);
    }
    encoder.encode().context("encoding the component")
}

/// What a built component offers and needs, decoded from its bytes.
pub struct Decoded {
    /// Exported functions, named like [`Wit::exported_functions`].
    pub exports: BTreeSet<String>,
    /// Imported interfaces and functions.
    pub imports: BTreeSet<String>,
    /// The component's WIT, as `wasm-tools component wit` prints it.
    pub wit: String,
}

/// `wasm-tools component wit`, plus the lists of exports and imports.
pub fn decode(component: &[u8]) -> Result<Decoded> {
    let decoded = wit_component::decode(component).context("decoding the component")?;
    let DecodedWasm::Component(resolve, world) = &decoded else {
        bail!("this is a WIT package, not a component");
    };
    let mut printer = WitPrinter::default();
    printer
        .print(resolve, decoded.package(), &[])
        .context("printing the component's WIT")?;
    let imports = resolve.worlds[*world]
        .imports
        .iter()
        .filter(|(_, item)| !matches!(item, WorldItem::Type { .. }))
        .map(|(key, _)| resolve.name_world_key(key))
        .collect();
    Ok(Decoded {
        exports: exported_functions(resolve, *world),
        imports,
        wit: printer.output.to_string(),
    })
}

fn exported_functions(resolve: &Resolve, world: WorldId) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (key, item) in &resolve.worlds[world].exports {
        match item {
            WorldItem::Function(function) => {
                names.insert(function.name.clone());
            }
            WorldItem::Interface { id, .. } => {
                let interface = &resolve.interfaces[*id];
                let prefix = match key {
                    WorldKey::Name(name) => name.clone(),
                    WorldKey::Interface(_) => interface.name.clone().unwrap_or_default(),
                };
                for name in interface.functions.keys() {
                    names.insert(format!("{prefix}.{name}"));
                }
            }
            WorldItem::Type { .. } => {}
        }
    }
    names
}

/// Drops the custom sections of a core module (names, producers, debug info)
/// except the `component-type` ones that `component new` reads, like
/// `wasm-tools strip --all` before `component new`.
pub fn strip_module(module: &[u8]) -> Result<Vec<u8>> {
    let mut out = module[..8].to_vec();
    for payload in wasmparser::Parser::new(0).parse_all(module) {
        let payload = payload.context("parsing the core module to strip it")?;
        if let wasmparser::Payload::CustomSection(section) = &payload
            && !section.name().starts_with("component-type")
        {
            continue;
        }
        if let Some((id, range)) = payload.as_section() {
            let range = usize::try_from(range.start)?..usize::try_from(range.end)?;
            out.push(id);
            u32::try_from(range.len())
                .context("section size")?
                .encode(&mut out);
            out.extend_from_slice(&module[range]);
        }
    }
    Ok(out)
}

/// `wit-bindgen c WIT --world WORLD --out-dir OUT`: writes the C bindings of
/// the world (`WORLD.h`, `WORLD.c`, `WORLD_component_type.o`) into `out_dir`
/// and returns the files a compiler must take as inputs (the `.c` and `.o`).
pub fn c_bindings(wit: &Wit, out_dir: &Path) -> Result<Vec<std::path::PathBuf>> {
    let mut resolve = wit.resolve.clone();
    std::fs::create_dir_all(out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    let mut files = wit_bindgen_core::Files::default();
    wit_bindgen_c::Opts::default()
        .build()
        .generate(&mut resolve, wit.world, &mut files)
        .context("generating the C bindings")?;
    let mut inputs = Vec::new();
    for (name, contents) in files.iter() {
        let path = out_dir.join(name);
        std::fs::write(&path, contents).with_context(|| format!("writing {}", path.display()))?;
        if name.ends_with(".c") || name.ends_with(".o") {
            inputs.push(path);
        }
    }
    Ok(inputs)
}
