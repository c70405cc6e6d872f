//! The build steps of each language, from an example's sources to component
//! bytes. Each example's entry file is `app.EXT` beside its `wit/` folder, but
//! for TypeScript (`src/index.ts`, compiled to `dist/index.js`). Examples written
//! with an SDK run the SDK's unit tests and their own first.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result};

use super::toolchains::{self, WASI_SYSROOT};
use super::{Example, Language};
use crate::run;
use wharf_componentize::{self as component, Adapter, Wit};

/// Builds `example` with its language's toolchain (already prepared).
pub fn build(example: &Example) -> Result<Vec<u8>> {
    let source = example.source_dir();
    let work = example.work_dir();
    match example.language {
        Language::Wat => wat(&source, example.world),
        Language::C => c(&source, &work, example.world),
        Language::Go => go(&source, &work, example.world),
        Language::Python => python(example, &source, &work),
        Language::JavaScript => javascript(&source, &work, example.world),
        Language::TypeScript => typescript(example, &source, &work),
    }
}

/// `wasm-tools parse app.wat`, `component embed wit`, `component new`.
fn wat(source: &Path, world: &str) -> Result<Vec<u8>> {
    let core = wat::parse_file(source.join("app.wat")).context("parsing app.wat")?;
    let wit = Wit::load(&source.join("wit"), world)?;
    component::new(&component::embed(&core, &wit)?, Adapter::None)
}

/// `wit-bindgen c wit --world WORLD --out-dir gen`, clang-19 for wasm32-wasi as a
/// reactor, then `component new --adapt wasi_snapshot_preview1=REACTOR`.
fn c(source: &Path, work: &Path, world: &str) -> Result<Vec<u8>> {
    let wit = Wit::load(&source.join("wit"), world)?;
    let gen_dir = work.join("gen");
    let mut inputs = vec![source.join("app.c")];
    inputs.extend(component::c_bindings(&wit, &gen_dir)?);
    let core = work.join("core.wasm");
    run(Command::new("clang-19")
        .args([
            "--target=wasm32-wasi",
            "-O2",
            "-mexec-model=reactor",
            "-Wall",
            "-Werror",
            "-fuse-ld=lld",
        ])
        .arg(format!("--sysroot={WASI_SYSROOT}"))
        .arg("-I")
        .arg(&gen_dir)
        .arg("-o")
        .arg(&core)
        .args(&inputs))?;
    let core = std::fs::read(&core)?;
    component::new(&component::strip_module(&core)?, Adapter::Reactor)
}

/// `GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared`, `component embed`,
/// then `component new --adapt … --realloc-via-memory-grow`.
fn go(source: &Path, work: &Path, world: &str) -> Result<Vec<u8>> {
    let core = work.join("core.wasm");
    run(Command::new(toolchains::go())
        .args([
            "build",
            "-buildmode=c-shared",
            "-trimpath",
            "-ldflags=-s -w",
            "-o",
        ])
        .arg(&core)
        .arg(".")
        .current_dir(source)
        .env("GOOS", "wasip1")
        .env("GOARCH", "wasm")
        // Offline and reproducible: no module downloads, no toolchain switching.
        .env("GOTOOLCHAIN", "local")
        .env("GOPROXY", "off")
        .env("GOFLAGS", "-mod=mod")
        .env("GOCACHE", work.join("go-cache"))
        .env("GOPATH", work.join("go-path")))?;
    let wit = Wit::load(&source.join("wit"), world)?;
    let core = component::strip_module(&std::fs::read(&core)?)?;
    component::new(
        &component::embed(&core, &wit)?,
        Adapter::ReactorReallocViaMemoryGrow,
    )
}

/// `componentize-py -d wit -w WORLD componentize app -o OUT`, with the SDK on
/// the module path (`-p SDK`) after its unit tests and the example's
/// (`python -m unittest`) passed.
fn python(example: &Example, source: &Path, work: &Path) -> Result<Vec<u8>> {
    let out = work.join("componentize-py.wasm");
    let mut componentize = Command::new(toolchains::componentize_py());
    componentize.args(["-d", "wit", "-w", example.world, "componentize", "app"]);
    if let Some(sdk) = example.sdk_dir() {
        let python = toolchains::python();
        run(Command::new(&python)
            .args(["-m", "unittest", "-q"])
            .current_dir(&sdk)
            .env("PYTHONDONTWRITEBYTECODE", "1"))
        .context("the Python SDK's unit tests failed")?;
        run(Command::new(&python)
            .args(["-m", "unittest", "-q"])
            .current_dir(source)
            .env("PYTHONPATH", &sdk)
            .env("PYTHONDONTWRITEBYTECODE", "1"))
        .with_context(|| format!("the unit tests of {} failed", example.name))?;
        componentize.arg("-p").arg(".").arg("-p").arg(&sdk);
    }
    run(componentize
        .arg("-o")
        .arg(&out)
        .current_dir(source)
        .env("PYTHONDONTWRITEBYTECODE", "1"))?;
    std::fs::read(&out).with_context(|| format!("reading {}", out.display()))
}

/// `tsc` (the example's tsconfig, into `dist/`), the SDK's type tests (`tsc -p
/// SDK/test`) and unit tests and the example's (`node --test`), then `jco componentize dist/index.js --bundle
/// --wit wit -n WORLD -o OUT`: bundling resolves the `wharf-sdk` import, which
/// the engine alone cannot.
fn typescript(example: &Example, source: &Path, work: &Path) -> Result<Vec<u8>> {
    let _ = std::fs::remove_dir_all(source.join("dist"));
    run(Command::new(toolchains::tsc(source))
        .args(["-p", "."])
        .current_dir(source))
    .context("tsc failed")?;
    if let Some(sdk) = example.sdk_dir() {
        // The SDK's type-level tests (schema inference), with the example's tsc.
        run(Command::new(toolchains::tsc(source))
            .arg("-p")
            .arg(sdk.join("test")))
        .context("the TypeScript SDK's type tests failed")?;
        run(Command::new("node")
            .args(["--import", "./src/testing/register.js", "--test", "test/"])
            .current_dir(&sdk))
        .context("the TypeScript SDK's unit tests failed")?;
    }
    run(Command::new("node")
        .args(["--import", "wharf-sdk/testing", "--test", "test/"])
        .current_dir(source))
    .with_context(|| format!("the unit tests of {} failed", example.name))?;
    let out = work.join("jco.wasm");
    run(Command::new(toolchains::jco(source))
        .args([
            "componentize",
            "dist/index.js",
            "--bundle",
            "--wit",
            "wit",
            "--world-name",
            example.world,
            "--out",
        ])
        .arg(&out)
        .current_dir(source))?;
    std::fs::read(&out).with_context(|| format!("reading {}", out.display()))
}

/// `jco componentize app.js --wit wit --world-name WORLD --out OUT`.
fn javascript(source: &Path, work: &Path, world: &str) -> Result<Vec<u8>> {
    let out = work.join("jco.wasm");
    run(Command::new(toolchains::jco(source))
        .args([
            "componentize",
            "app.js",
            "--wit",
            "wit",
            "--world-name",
            world,
            "--out",
        ])
        .arg(&out)
        .current_dir(source))?;
    std::fs::read(&out).with_context(|| format!("reading {}", out.display()))
}
