//! What the watcher knows about files in flux: whether each was last seen
//! being written or complete, so a scan never loads half a file.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use notify::event::{AccessKind, AccessMode, ModifyKind, RenameMode};
use notify::{Event, EventKind};

use super::SETTLE;
use crate::loader::Settled;

/// The last thing seen happen to a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LastEvent {
    /// Written to and not yet closed.
    Writing,
    /// Closed after writing, or renamed into place: complete.
    Complete,
}

/// The last event seen for each path that had one.
#[derive(Default)]
pub(super) struct FileStates(HashMap<PathBuf, LastEvent>);

impl FileStates {
    pub(super) fn record(&mut self, event: &Event) {
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

    /// Forgets everything: events were lost, or the folder is another one now,
    /// so every file is judged by its age.
    pub(super) fn clear(&mut self) {
        self.0.clear();
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
pub(super) fn relevant(event: &Event) -> bool {
    if event.need_rescan() {
        // The kernel's queue overflowed: events were lost, any file may have changed.
        return true;
    }
    let kind_matters = match event.kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) | EventKind::Other => false,
        _ => true,
    };
    kind_matters
        && event.paths.iter().any(|path| {
            path.extension()
                .is_some_and(|ext| ext == "wasm" || ext == "toml" || ext == "oci" || ext == "sig")
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify::event::{CreateKind, DataChange, Flag, RemoveKind};

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
    fn clearing_forgets_what_was_complete() {
        let mut states = FileStates::default();
        states.record(&event(
            EventKind::Modify(ModifyKind::Name(RenameMode::To)),
            &["/p/a.wasm"],
        ));
        assert!(states.settled(Path::new("/p/a.wasm"), SystemTime::now()));
        // The folder was replaced: a new a.wasm may be half-copied.
        states.clear();
        assert!(!states.settled(Path::new("/p/a.wasm"), SystemTime::now()));
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

    #[test]
    fn a_lost_event_queue_calls_for_a_rescan() {
        // What notify reports when inotify's queue overflowed: no path at all.
        let overflow = Event::new(EventKind::Other).set_flag(Flag::Rescan);
        assert!(relevant(&overflow));
    }
}
