//! Hot reload: watches the plugin folder and swaps changed plugins into the registry.
//!
//! Strategy: notify delivers file events on its own thread into a channel. The
//! reload task waits for a burst of events to go quiet ([`DEBOUNCE`]), then scans
//! the folder ([`PluginFolder::scan`]), which compiles off the request path, and
//! swaps the new tool set into the registry. The registry tells subscribers only
//! if the listing changed. A file still being written is deferred: it counts as
//! complete once its writer closed it or renamed it into place, or once it has
//! not changed for [`SETTLE`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use notify::event::{AccessKind, AccessMode, ModifyKind, RenameMode};
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::mpsc;

use crate::loader::{PluginFolder, Settled};
use crate::metrics::Metrics;
use crate::registry::Registry;

/// Quiet time that ends a burst of events.
pub const DEBOUNCE: Duration = Duration::from_millis(15);
/// Age after which a file nobody was seen closing counts as complete.
pub const SETTLE: Duration = Duration::from_millis(300);

/// Why watching could not start.
#[derive(Debug, thiserror::Error)]
#[error("cannot watch the plugin folder {}: {source}", .path.display())]
pub struct WatchError {
    path: PathBuf,
    source: notify::Error,
}

/// The last thing seen happen to a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LastEvent {
    /// Written to and not yet closed.
    Writing,
    /// Closed after writing, or renamed into place: complete.
    Complete,
}

/// What the watcher knows about files in flux.
#[derive(Default)]
struct FileStates(HashMap<PathBuf, LastEvent>);

impl FileStates {
    fn record(&mut self, event: &Event) {
        let state = match event.kind {
            EventKind::Access(AccessKind::Close(AccessMode::Write)) => LastEvent::Complete,
            EventKind::Modify(ModifyKind::Name(RenameMode::To | RenameMode::Both)) => {
                // For `Both`, paths are [from, to]: only the destination is complete.
                if let Some(to) = event.paths.last() {
                    self.0.insert(to.clone(), LastEvent::Complete);
                }
                return;
            }
            EventKind::Create(_) | EventKind::Modify(_) => LastEvent::Writing,
            EventKind::Remove(_) => {
                for path in &event.paths {
                    self.0.remove(path);
                }
                return;
            }
            _ => return,
        };
        for path in &event.paths {
            self.0.insert(path.clone(), state);
        }
    }
}

impl Settled for FileStates {
    fn settled(&self, path: &Path, modified: SystemTime) -> bool {
        match self.0.get(path) {
            Some(LastEvent::Complete) => true,
            // Being written, or never seen (present before the watch, or events
            // lost): trust it once it has been still for a while.
            Some(LastEvent::Writing) | None => {
                modified.elapsed().map(|age| age >= SETTLE).unwrap_or(true)
            }
        }
    }
}

/// Whether an event can change what the folder serves.
fn relevant(event: &Event) -> bool {
    let kind_matters = match event.kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) | EventKind::Other => false,
        _ => true,
    };
    kind_matters
        && event.paths.iter().any(|path| {
            path.extension()
                .is_some_and(|ext| ext == "wasm" || ext == "toml")
        })
}

/// A watch on the plugin folder, started before the first scan so that nothing
/// written meanwhile is missed.
pub struct FolderWatch {
    watcher: RecommendedWatcher,
    events: mpsc::UnboundedReceiver<notify::Result<Event>>,
}

impl FolderWatch {
    /// Starts receiving events for the files directly inside `dir`.
    pub fn start(dir: &Path) -> Result<Self, WatchError> {
        let error = |source| WatchError {
            path: dir.to_path_buf(),
            source,
        };
        let (tx, events) = mpsc::unbounded_channel();
        let mut watcher = notify::recommended_watcher(move |event: notify::Result<Event>| {
            let _ = tx.send(event);
        })
        .map_err(error)?;
        watcher
            .watch(dir, RecursiveMode::NonRecursive)
            .map_err(error)?;
        Ok(Self { watcher, events })
    }

    /// Keeps the registry in step with `folder` until the process ends.
    pub fn spawn(
        self,
        folder: PluginFolder,
        registry: Arc<Registry>,
        metrics: Arc<Metrics>,
    ) -> tokio::task::JoinHandle<()> {
        tokio::spawn(self.run(folder, registry, metrics))
    }

    async fn run(self, mut folder: PluginFolder, registry: Arc<Registry>, metrics: Arc<Metrics>) {
        // Owned by the task: dropping the watcher would stop the events.
        let Self {
            watcher: _watcher,
            mut events,
        } = self;
        let mut states = FileStates::default();
        let mut recheck: Option<Instant> = None;
        loop {
            // Wait for the first event of a burst, or for a deferred file's turn.
            let first = match recheck {
                Some(at) => tokio::select! {
                    event = events.recv() => Some(event),
                    _ = tokio::time::sleep_until(at.into()) => None,
                },
                None => Some(events.recv().await),
            };
            let mut dirty = first.is_none();
            match first {
                Some(None) => return,
                Some(Some(event)) => dirty |= note(&mut states, event),
                None => {}
            }
            // Let the burst go quiet.
            loop {
                match tokio::time::timeout(DEBOUNCE, events.recv()).await {
                    Ok(Some(event)) => dirty |= note(&mut states, event),
                    Ok(None) => return,
                    Err(_) => break,
                }
            }
            if !dirty {
                continue;
            }
            recheck = None;
            let started = Instant::now();
            match folder.scan(&states).await {
                Ok(report) => {
                    if !report.deferred.is_empty() {
                        recheck = Some(Instant::now() + DEBOUNCE.max(SETTLE / 3));
                    }
                    if report.changed() {
                        let set = folder.tool_set();
                        metrics.record_reload();
                        metrics.set_plugins_loaded(set.plugins().len());
                        let changes = registry.replace(set);
                        tracing::info!(
                            loaded = ?report.loaded,
                            removed = ?report.removed,
                            tools_changed = changes.tools,
                            prompts_changed = changes.prompts,
                            elapsed_ms = started.elapsed().as_millis() as u64,
                            "plugins reloaded"
                        );
                    }
                }
                Err(error) => tracing::error!("{error}"),
            }
        }
    }
}

/// Records an event; returns whether it calls for a rescan.
fn note(states: &mut FileStates, event: notify::Result<Event>) -> bool {
    match event {
        Ok(event) => {
            tracing::trace!(?event, "file event");
            states.record(&event);
            relevant(&event)
        }
        Err(error) => {
            tracing::warn!("file watching reported an error: {error}; rescanning");
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify::event::{CreateKind, DataChange, RemoveKind};

    fn event(kind: EventKind, paths: &[&str]) -> Event {
        let mut event = Event::new(kind);
        for path in paths {
            event = event.add_path(PathBuf::from(path));
        }
        event
    }

    #[test]
    fn a_file_is_complete_when_closed_or_renamed_in() {
        let mut states = FileStates::default();
        let now = SystemTime::now();
        states.record(&event(EventKind::Create(CreateKind::File), &["/p/a.wasm"]));
        states.record(&event(
            EventKind::Modify(ModifyKind::Data(DataChange::Content)),
            &["/p/a.wasm"],
        ));
        assert!(!states.settled(Path::new("/p/a.wasm"), now));
        states.record(&event(
            EventKind::Access(AccessKind::Close(AccessMode::Write)),
            &["/p/a.wasm"],
        ));
        assert!(states.settled(Path::new("/p/a.wasm"), now));

        states.record(&event(
            EventKind::Modify(ModifyKind::Name(RenameMode::Both)),
            &["/p/.tmp", "/p/b.wasm"],
        ));
        assert!(states.settled(Path::new("/p/b.wasm"), now));
        assert!(!states.settled(Path::new("/p/.tmp"), now));

        states.record(&event(EventKind::Remove(RemoveKind::File), &["/p/b.wasm"]));
        assert!(!states.settled(Path::new("/p/b.wasm"), now));
    }

    #[test]
    fn an_unseen_file_settles_with_age() {
        let states = FileStates::default();
        let old = SystemTime::now() - SETTLE * 2;
        assert!(states.settled(Path::new("/p/x.wasm"), old));
        assert!(!states.settled(Path::new("/p/x.wasm"), SystemTime::now()));
    }

    #[test]
    fn only_plugin_files_matter() {
        let write = EventKind::Modify(ModifyKind::Data(DataChange::Content));
        assert!(relevant(&event(write, &["/p/a.wasm"])));
        assert!(relevant(&event(write, &["/p/a.toml"])));
        assert!(!relevant(&event(write, &["/p/notes.txt"])));
        assert!(!relevant(&event(
            EventKind::Access(AccessKind::Read),
            &["/p/a.wasm"]
        )));
    }
}
