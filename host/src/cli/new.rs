//! `wharf new NAME --lang LANG`: a plugin project from a built-in template.

use std::path::PathBuf;

use clap::Args;
use wharf::author::{self, Language};

/// The arguments of `wharf new`.
#[derive(Args)]
pub struct NewArgs {
    /// The project's name, which is also the plugin's (kebab-case, like `my-tools`).
    name: String,
    /// The language to write the plugin in.
    #[arg(long, value_enum)]
    lang: Language,
    /// The folder to create [default: ./NAME]; it must not exist or be empty.
    #[arg(long)]
    dir: Option<PathBuf>,
}

impl NewArgs {
    /// Writes the project and prints what to do next.
    pub fn run(self) -> anyhow::Result<()> {
        let dir = self.dir.unwrap_or_else(|| PathBuf::from(&self.name));
        let files = author::new_project(&dir, &self.name, self.lang)?;
        println!(
            "created {} ({} project, {} files)",
            dir.display(),
            self.lang,
            files.len()
        );
        println!(
            "next: cd {} && wharf build   (see README.md)",
            dir.display()
        );
        Ok(())
    }
}
