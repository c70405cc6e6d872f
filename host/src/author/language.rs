//! The languages a plugin project may be written in, and how a folder tells
//! which one it is and what it builds.

use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// A language `wharf new` has a template for and `wharf build` can build.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Language {
    Rust,
    Typescript,
    Javascript,
    Python,
    Go,
    C,
}

impl Language {
    /// Every language, in `--lang`'s order.
    pub const ALL: [Language; 6] = [
        Language::Rust,
        Language::Typescript,
        Language::Javascript,
        Language::Python,
        Language::Go,
        Language::C,
    ];

    /// Its `--lang` value, and its folder under `host/templates/`.
    pub fn name(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::Typescript => "typescript",
            Language::Javascript => "javascript",
            Language::Python => "python",
            Language::Go => "go",
            Language::C => "c",
        }
    }

    /// Whether its projects implement the `wharf:plugin` package (and so get
    /// `wit/plugin.wit`), rather than a plain world of their own.
    pub fn uses_plugin_wit(self) -> bool {
        !matches!(self, Language::Go | Language::C)
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A project folder: its language, its name (the component's file stem, so the
/// plugin name) and the WIT world its component implements.
#[derive(Debug, Clone)]
pub struct Project {
    pub dir: PathBuf,
    pub language: Language,
    pub name: String,
    /// `None` for Rust, whose world the SDK chooses.
    pub world: Option<String>,
}

impl Project {
    /// Reads the project in `dir`, telling its language from the files there:
    /// `Cargo.toml` (Rust), `package.json` with `tsconfig.json` (TypeScript) or
    /// without (JavaScript), `pyproject.toml` (Python), `go.mod` (Go),
    /// `src/*.c` beside `wit/` (C).
    pub fn open(dir: &Path) -> Result<Self> {
        if !dir.is_dir() {
            bail!("{} is not a folder", dir.display());
        }
        let has = |file: &str| dir.join(file).is_file();
        let (language, name, world) = if has("Cargo.toml") {
            let name = toml_string(&dir.join("Cargo.toml"), &["package", "name"])?;
            (Language::Rust, name, None)
        } else if has("package.json") {
            let language = if has("tsconfig.json") {
                Language::Typescript
            } else {
                Language::Javascript
            };
            let path = dir.join("package.json");
            let json: serde_json::Value = serde_json::from_slice(
                &std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?,
            )
            .with_context(|| format!("parsing {}", path.display()))?;
            let name = json["name"]
                .as_str()
                .with_context(|| format!("{} has no `name`", path.display()))?;
            // A scoped npm name (`@me/tools`) names the plugin by its last part.
            let name = name.rsplit('/').next().unwrap_or(name).to_string();
            let world = json["wharf"]["world"].as_str().map(str::to_string);
            (
                language,
                name,
                Some(world_or_only(dir, world, "package.json's `wharf.world`")?),
            )
        } else if has("pyproject.toml") {
            let path = dir.join("pyproject.toml");
            let name = toml_string(&path, &["project", "name"])?;
            let world = toml_string(&path, &["tool", "wharf", "world"]).ok();
            let world = world_or_only(dir, world, "pyproject.toml's `[tool.wharf] world`")?;
            (Language::Python, name, Some(world))
        } else if has("go.mod") {
            let world = world_or_only(dir, None, "")?;
            (Language::Go, world.clone(), Some(world))
        } else if has_c_sources(dir) && dir.join("wit").is_dir() {
            let world = world_or_only(dir, None, "")?;
            (Language::C, world.clone(), Some(world))
        } else {
            bail!(
                "no plugin project in {}: expected Cargo.toml (rust), package.json \
                 (typescript, javascript), pyproject.toml (python), go.mod (go) or \
                 src/*.c beside wit/ (c); start one with `wharf new NAME --lang LANG`",
                dir.display()
            );
        };
        // Absolute: toolchains run inside the folder, their paths must not be relative to it.
        let dir =
            std::fs::canonicalize(dir).with_context(|| format!("resolving {}", dir.display()))?;
        Ok(Self {
            dir,
            language,
            name,
            world,
        })
    }

    /// `NAME.wasm` in the project folder: what `wharf build` writes.
    pub fn output(&self) -> PathBuf {
        self.dir.join(format!("{}.wasm", self.name))
    }

    /// `target/wharf/` in the project: the toolchains' scratch space.
    pub fn work_dir(&self) -> PathBuf {
        self.dir.join("target/wharf")
    }
}

fn has_c_sources(dir: &Path) -> bool {
    std::fs::read_dir(dir.join("src")).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.path().extension().is_some_and(|ext| ext == "c"))
    })
}

/// `declared`, or the only world of the project's `wit/` package.
fn world_or_only(dir: &Path, declared: Option<String>, key: &str) -> Result<String> {
    if let Some(world) = declared {
        return Ok(world);
    }
    let wit = wharf_componentize::Wit::load_world(&dir.join("wit"), None).with_context(|| {
        if key.is_empty() {
            "choosing the world to build: give wit/ one world".to_string()
        } else {
            format!("choosing the world to build: name it in {key}")
        }
    })?;
    Ok(wit.world_name().to_string())
}

/// The string at `keys` in a TOML file.
fn toml_string(path: &Path, keys: &[&str]) -> Result<String> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let table: toml::Value =
        toml::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    let mut value = &table;
    for key in keys {
        value = value
            .get(key)
            .with_context(|| format!("{} has no `{}`", path.display(), keys.join(".")))?;
    }
    value
        .as_str()
        .map(str::to_string)
        .with_context(|| format!("`{}` in {} is not a string", keys.join("."), path.display()))
}
