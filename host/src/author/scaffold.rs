//! `wharf new NAME --lang LANG`: a project folder that builds as it is, from
//! the templates built into the binary (so it works offline).
//!
//! Every template file is copied with `{{name}}`, `{{name_snake}}` and
//! `{{wharf_version}}` replaced and a `.tmpl` suffix dropped (so the templates'
//! `Cargo.toml.tmpl`, `package.json.tmpl`... do not look like projects to the
//! tools working on this repository). Projects in the `wharf:plugin` languages
//! also get `wit/plugin.wit`; a Rust project gets the SDK's sources in
//! `wharf-sdk/`, referenced by path, so it needs nothing but crates.io.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::embedded::{PLUGIN_WIT, PYTHON_SDK, RUST_SDK, TEMPLATES, TYPESCRIPT_SDK};
use super::language::Language;

/// The longest name: a plugin name's limit (`naming::MAX_PLUGIN_NAME`).
const MAX_NAME: usize = crate::naming::MAX_PLUGIN_NAME;

/// WIT keywords, which cannot name the world of a Go or C project.
const WIT_KEYWORDS: &[&str] = &[
    "as",
    "async",
    "bool",
    "borrow",
    "char",
    "constructor",
    "enum",
    "export",
    "f32",
    "f64",
    "flags",
    "func",
    "future",
    "import",
    "include",
    "interface",
    "list",
    "own",
    "package",
    "record",
    "resource",
    "result",
    "s16",
    "s32",
    "s64",
    "s8",
    "static",
    "stream",
    "string",
    "tuple",
    "type",
    "u16",
    "u32",
    "u64",
    "u8",
    "use",
    "variant",
    "with",
    "world",
];

/// Why a project name was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum NameError {
    #[error(
        "invalid project name `{0}`: use lower-case letters, digits and single hyphens, \
         starting with a letter and each part after a hyphen too (like `my-tools`)"
    )]
    Shape(String),
    #[error("invalid project name `{0}`: at most {MAX_NAME} characters")]
    TooLong(String),
    #[error("invalid project name `{0}`: it is a WIT keyword")]
    Keyword(String),
}

/// Checks `name`: kebab-case words that each start with a letter (a WIT
/// identifier, a Cargo, npm and Python package name, and a Wharf plugin name).
pub fn check_name(name: &str) -> Result<(), NameError> {
    if name.len() > MAX_NAME {
        return Err(NameError::TooLong(name.to_string()));
    }
    let word_ok = |word: &str| {
        word.starts_with(|c: char| c.is_ascii_lowercase())
            && word
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    };
    if !name.split('-').all(word_ok) {
        return Err(NameError::Shape(name.to_string()));
    }
    if WIT_KEYWORDS.contains(&name) {
        return Err(NameError::Keyword(name.to_string()));
    }
    Ok(())
}

/// Writes a new `language` project called `name` into `dir`, which must not
/// exist or be empty. Returns the files written, relative to `dir`.
pub fn new_project(dir: &Path, name: &str, language: Language) -> Result<Vec<PathBuf>> {
    check_name(name)?;
    if dir.exists() {
        let empty = std::fs::read_dir(dir)
            .with_context(|| format!("{} exists and is not a folder", dir.display()))?
            .next()
            .is_none();
        anyhow::ensure!(
            empty,
            "{} already exists and is not empty: choose another name, or remove it",
            dir.display()
        );
    }
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let prefix = format!("{}/", language.name());
    for (path, bytes) in TEMPLATES {
        if let Some(relative) = path.strip_prefix(&prefix) {
            let relative = relative.strip_suffix(".tmpl").unwrap_or(relative);
            files.push((relative.to_string(), render(bytes, name)));
        }
    }
    if language.uses_plugin_wit() {
        files.push(("wit/plugin.wit".into(), PLUGIN_WIT.to_vec()));
    }
    let (sdk_dir, sdk): (&str, &[(&str, &[u8])]) = match language {
        Language::Rust => ("wharf-sdk", RUST_SDK),
        Language::Typescript => ("wharf-sdk", TYPESCRIPT_SDK),
        Language::Python => ("wharf_sdk", PYTHON_SDK),
        _ => ("", &[]),
    };
    for (path, bytes) in sdk {
        files.push((format!("{sdk_dir}/{path}"), bytes.to_vec()));
    }
    let mut written = Vec::new();
    for (relative, bytes) in files {
        let path = dir.join(&relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
        written.push(PathBuf::from(relative));
    }
    written.sort();
    Ok(written)
}

/// A template file with its placeholders filled in.
fn render(template: &[u8], name: &str) -> Vec<u8> {
    let Ok(text) = std::str::from_utf8(template) else {
        return template.to_vec();
    };
    text.replace("{{name}}", name)
        .replace("{{name_snake}}", &name.replace('-', "_"))
        .replace("{{wharf_version}}", env!("CARGO_PKG_VERSION"))
        .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_kebab_case_words_starting_with_letters() {
        for good in ["a", "my-tools", "tools2", "a1-b2-c3"] {
            assert_eq!(check_name(good), Ok(()), "{good}");
        }
        for bad in [
            "", "My", "my_tools", "-a", "a-", "a--b", "2x", "a-2b", "a.b", "é",
        ] {
            assert_eq!(check_name(bad), Err(NameError::Shape(bad.into())), "{bad}");
        }
        assert_eq!(check_name("world"), Err(NameError::Keyword("world".into())));
        let long = "a".repeat(MAX_NAME + 1);
        assert_eq!(check_name(&long), Err(NameError::TooLong(long.clone())));
        assert_eq!(
            NameError::Shape("My_Tools".into()).to_string(),
            "invalid project name `My_Tools`: use lower-case letters, digits and single \
             hyphens, starting with a letter and each part after a hyphen too (like `my-tools`)"
        );
    }

    #[test]
    fn every_language_has_a_readme_a_gitignore_and_its_manifest() {
        for language in Language::ALL {
            let dir = tempfile::tempdir().unwrap();
            let project = dir.path().join("my-tools");
            let files = new_project(&project, "my-tools", language).unwrap();
            let has = |f: &str| files.iter().any(|p| p == Path::new(f));
            assert!(
                has("README.md") && has(".gitignore"),
                "{language}: {files:?}"
            );
            assert!(
                !files.iter().any(|p| p.to_string_lossy().ends_with(".tmpl")),
                "{language}: {files:?}"
            );
            let text = files
                .iter()
                .filter_map(|f| std::fs::read_to_string(project.join(f)).ok())
                .collect::<String>();
            assert!(!text.contains("{{"), "{language}: a placeholder is left");
            let opened = super::super::Project::open(&project).unwrap();
            assert_eq!(opened.language, language);
            assert_eq!(opened.name, "my-tools");
        }
    }

    /// The vendored SDK builds outside this workspace: no inherited keys.
    #[test]
    fn the_rust_sdk_is_standalone() {
        let dir = tempfile::tempdir().unwrap();
        new_project(dir.path(), "x", Language::Rust).unwrap();
        for manifest in ["wharf-sdk/Cargo.toml", "wharf-sdk/uri-template/Cargo.toml"] {
            let text = std::fs::read_to_string(dir.path().join(manifest)).unwrap();
            assert!(!text.contains("workspace"), "{manifest}:\n{text}");
        }
        let sdk = std::fs::read_to_string(dir.path().join("wharf-sdk/Cargo.toml")).unwrap();
        assert!(
            sdk.contains("wharf-uri-template = { path = \"uri-template\" }"),
            "{sdk}"
        );
        assert!(dir.path().join("wit/plugin.wit").is_file());
    }

    #[test]
    fn a_non_empty_folder_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("keep"), "").unwrap();
        let error = new_project(dir.path(), "x", Language::C).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "{} already exists and is not empty: choose another name, or remove it",
                dir.path().display()
            )
        );
    }
}
