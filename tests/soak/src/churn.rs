//! The plugin folder under change: every few seconds one step of a cycle
//! replaces, corrupts, deletes or re-adds a plugin, in the ways a user or a
//! deployment does it (an atomic rename, a slow copy in place, a plain write).
//!
//! Each step knows whether it changes the visible tool list. After one that
//! does, the churn waits until every open listener has seen one more
//! `tools/list_changed` (or a patience runs out, which is a failure), so no
//! two changes fall into one reload and the count each listener must reach is
//! exact: one per changing step, no more.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::{Value, json};
use wharf_wire::process::tagged_copy;

use crate::ledger::Ledger;
use crate::listeners::Listener;

/// How long a listener may take to see a change.
const NOTICE_PATIENCE: Duration = Duration::from_secs(30);
/// A slow copy writes the component in this many pieces...
const SLOW_PIECES: usize = 12;
/// ...with this pause between them (below the watcher's 300 ms of stillness,
/// so the file is complete only when it is closed).
const SLOW_PAUSE: Duration = Duration::from_millis(60);
/// New bytes of `twin` and `flip` come from this many tags, then repeat: the
/// first cycles compile, later ones hit the compile cache.
const TAGS: u64 = 6;

/// The components the folder is built from.
pub struct Components {
    pub echo: Vec<u8>,
    pub calc: Vec<u8>,
    pub textstats: Vec<u8>,
    pub misbehave: Vec<u8>,
    pub conformance: Vec<u8>,
}

/// The limits of the misbehaving plugin: a spin ends after a second, a bomb
/// at 64 MiB.
const MISBEHAVE_MANIFEST: &str = "[limits]\ntimeout-ms = 1000\nmemory-mib = 64\n";

/// Fills `dir` with the soak's starting set.
pub fn fill(dir: &Path, components: &Components) -> Result<()> {
    let files: [(&str, &[u8]); 7] = [
        ("stable.wasm", &components.echo),
        ("twin.wasm", &components.echo),
        ("flip.wasm", &components.echo),
        ("gone.wasm", &components.textstats),
        ("misbehave.wasm", &components.misbehave),
        ("misbehave.toml", MISBEHAVE_MANIFEST.as_bytes()),
        ("conformance.wasm", &components.conformance),
    ];
    for (name, bytes) in files {
        let path = dir.join(name);
        std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// How a step writes a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Write {
    /// To a temporary name, then renamed over the file.
    Rename,
    /// In place, in pieces with pauses, closed at the end.
    Slow,
    /// Truncated bytes renamed over the file: it must fail to load and leave
    /// the previous version serving.
    Corrupt,
    /// `std::fs::write` of a file that was deleted.
    Readd,
    Delete,
}

/// One step of the cycle.
#[derive(Debug, Clone, Copy)]
struct Step {
    write: Write,
    file: &'static str,
    /// Which component (for writes).
    content: Content,
    /// Whether the visible tool list changes.
    changes: bool,
}

#[derive(Debug, Clone, Copy)]
enum Content {
    Echo,
    Calc,
    Textstats,
    None,
}

/// The cycle. `twin` always offers `twin_echo` (new bytes, or corrupt bytes
/// that do not load); `flip` alternates between echo's tool and calc's;
/// `gone` goes and comes back.
const CYCLE: [Step; 8] = [
    step(Write::Rename, "twin", Content::Echo, false),
    step(Write::Rename, "flip", Content::Calc, true),
    step(Write::Slow, "twin", Content::Echo, false),
    step(Write::Slow, "flip", Content::Echo, true),
    step(Write::Corrupt, "twin", Content::Echo, false),
    step(Write::Delete, "gone", Content::None, true),
    step(Write::Rename, "twin", Content::Echo, false),
    step(Write::Readd, "gone", Content::Textstats, true),
];

const fn step(write: Write, file: &'static str, content: Content, changes: bool) -> Step {
    Step {
        write,
        file,
        content,
        changes,
    }
}

/// What the churn did.
#[derive(Debug, Default, Clone)]
pub struct ChurnTally {
    /// Steps done, by kind of write.
    pub steps: std::collections::BTreeMap<&'static str, u64>,
    /// Steps that changed the tool list: what each listener must have seen.
    pub changes: u64,
}

impl ChurnTally {
    pub fn to_json(&self) -> Value {
        json!({"steps": self.steps, "changes": self.changes})
    }
}

/// The folder's changer.
pub struct Churn {
    pub dir: PathBuf,
    pub components: Components,
    pub listeners: Vec<Arc<Listener>>,
    pub ledger: Arc<Ledger>,
    pub interval: Duration,
    pub stopping: Arc<AtomicBool>,
}

impl Churn {
    /// Runs steps until `stopping` is set; returns what it did.
    pub async fn run(self) -> ChurnTally {
        let mut tally = ChurnTally::default();
        for turn in 0u64.. {
            tokio::time::sleep(self.interval).await;
            if self.stopping.load(Ordering::Relaxed) {
                break;
            }
            let step = CYCLE[(turn % CYCLE.len() as u64) as usize];
            let tag = format!("soak-{}", (turn / CYCLE.len() as u64) % TAGS);
            let before: Vec<u64> = self.listeners.iter().map(|l| l.seen()).collect();
            if let Err(error) = self.apply(step, &tag).await {
                self.ledger
                    .failure("churn", &format!("{step:?}"), format!("{error:#}"));
                continue;
            }
            *tally.steps.entry(write_label(step.write)).or_default() += 1;
            if step.changes {
                tally.changes += 1;
                self.await_notices(&before, step).await;
            }
        }
        tally
    }

    /// Waits until each open listener has seen one more change than `before`.
    async fn await_notices(&self, before: &[u64], step: Step) {
        let deadline = tokio::time::Instant::now() + NOTICE_PATIENCE;
        loop {
            let waiting: Vec<&str> = self
                .listeners
                .iter()
                .zip(before)
                .filter(|(l, seen)| l.is_open() && l.seen() <= **seen)
                .map(|(l, _)| l.name)
                .collect();
            if waiting.is_empty() {
                return;
            }
            if tokio::time::Instant::now() > deadline {
                let detail = format!("{waiting:?} saw no list_changed within {NOTICE_PATIENCE:?}");
                self.ledger.failure("churn", &format!("{step:?}"), detail);
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    async fn apply(&self, step: Step, tag: &str) -> Result<()> {
        let path = self.dir.join(format!("{}.wasm", step.file));
        let bytes = match step.content {
            Content::Echo => tagged_copy(&self.components.echo, tag),
            Content::Calc => tagged_copy(&self.components.calc, tag),
            Content::Textstats => self.components.textstats.clone(),
            Content::None => Vec::new(),
        };
        match step.write {
            Write::Rename => rename_into(&path, &bytes)?,
            Write::Corrupt => rename_into(&path, &bytes[..bytes.len() / 2])?,
            Write::Slow => self.slow_copy(&path, &bytes).await?,
            Write::Readd => std::fs::write(&path, &bytes)?,
            Write::Delete => std::fs::remove_file(&path)?,
        }
        Ok(())
    }

    /// Writes `bytes` over `path` in pieces, pausing between them.
    async fn slow_copy(&self, path: &Path, bytes: &[u8]) -> Result<()> {
        let mut file = std::fs::File::create(path)?;
        for piece in bytes.chunks(bytes.len().div_ceil(SLOW_PIECES)) {
            file.write_all(piece)?;
            file.flush()?;
            tokio::time::sleep(SLOW_PAUSE).await;
        }
        file.sync_all()?;
        Ok(())
    }
}

fn write_label(write: Write) -> &'static str {
    match write {
        Write::Rename => "atomic rename",
        Write::Slow => "slow copy",
        Write::Corrupt => "corrupt file",
        Write::Readd => "re-add",
        Write::Delete => "delete",
    }
}

/// Writes `bytes` to a temporary name beside `to`, then renames it over `to`.
fn rename_into(to: &Path, bytes: &[u8]) -> Result<()> {
    let temp = to.with_extension("partial");
    std::fs::write(&temp, bytes)?;
    std::fs::rename(&temp, to)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cycle_changes_the_list_at_every_flip_and_gone_step_only() {
        for step in CYCLE {
            assert_eq!(step.changes, step.file != "twin", "{step:?}");
        }
        // flip alternates between calc and echo, and starts as echo.
        let flips: Vec<_> = CYCLE.iter().filter(|s| s.file == "flip").collect();
        assert!(matches!(flips[0].content, Content::Calc));
        assert!(matches!(flips[1].content, Content::Echo));
        // gone is deleted before it is re-added.
        let gone: Vec<Write> = CYCLE
            .iter()
            .filter(|s| s.file == "gone")
            .map(|s| s.write)
            .collect();
        assert_eq!(gone, [Write::Delete, Write::Readd]);
    }

    #[tokio::test]
    async fn a_slow_copy_ends_with_the_whole_file() {
        let dir = std::env::temp_dir().join(format!("wharf-soak-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let churn = Churn {
            dir: dir.clone(),
            components: Components {
                echo: vec![],
                calc: vec![],
                textstats: vec![],
                misbehave: vec![],
                conformance: vec![],
            },
            listeners: vec![],
            ledger: Arc::default(),
            interval: Duration::ZERO,
            stopping: Arc::default(),
        };
        let bytes: Vec<u8> = (0..1000u32).map(|i| i as u8).collect();
        let path = dir.join("x.wasm");
        std::fs::write(&path, b"old").unwrap();
        churn.slow_copy(&path, &bytes).await.unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), bytes);
        rename_into(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert!(!dir.join("x.partial").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
