//! The folder the plugin path names, and the watch on it.
//!
//! A watch follows a folder, not its path: inotify watches an inode, so once
//! the folder is deleted or moved away it reports nothing more about the path,
//! and a folder created or renamed in its place, or a symlink swapped to name
//! another, goes unseen. So the path is checked (one `stat`) after every burst
//! of events and every [`FOLDER_CHECK`]: when it names another folder than the
//! one watched, the watch is made anew on it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use notify::{Event, RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::mpsc;

use super::WatchError;

/// How often the path is checked for the folder it names.
pub const FOLDER_CHECK: Duration = Duration::from_millis(250);

/// Which folder a path names, after following symlinks: its device and inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct FolderId {
    device: u64,
    inode: u64,
}

impl FolderId {
    /// The folder `path` names now, or `None` if it names none (deleted, moved
    /// away, a file, a dangling or looping symlink).
    pub(super) fn of(path: &Path) -> Option<Self> {
        let metadata = std::fs::metadata(path).ok().filter(|m| m.is_dir())?;
        Some(Self::from_metadata(&metadata))
    }

    #[cfg(unix)]
    fn from_metadata(metadata: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        Self {
            device: metadata.dev(),
            inode: metadata.ino(),
        }
    }

    /// Without inodes, a folder is told from another only by being there.
    #[cfg(not(unix))]
    fn from_metadata(_: &std::fs::Metadata) -> Self {
        Self {
            device: 0,
            inode: 0,
        }
    }
}

/// What checking the path found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FolderChange {
    /// The folder watched is still the one the path names (or none was and none is).
    Same,
    /// The path no longer names the folder watched, nor any other.
    Gone,
    /// The path names a folder other than the one watched (back after being
    /// gone, or swapped in its place), and it is watched now.
    Arrived,
}

/// The watch on the folder a path names, made anew when that folder changes.
pub(super) struct WatchedFolder {
    path: PathBuf,
    /// The folder watched and the watch on it; `None` while the path names
    /// no folder (dropping the watch ends its events).
    current: Option<(FolderId, RecommendedWatcher)>,
    /// Where every watch sends its events.
    events: mpsc::UnboundedSender<notify::Result<Event>>,
}

impl WatchedFolder {
    /// Watches the folder `path` names now.
    pub(super) fn start(
        path: &Path,
        events: mpsc::UnboundedSender<notify::Result<Event>>,
    ) -> Result<Self, WatchError> {
        let id = FolderId::of(path);
        let watcher = watch(path, events.clone()).map_err(|source| WatchError {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Self {
            path: path.to_path_buf(),
            current: id.map(|id| (id, watcher)),
            events,
        })
    }

    /// Whether the path still names the folder watched; re-watches it if it
    /// names another.
    pub(super) fn check(&mut self) -> FolderChange {
        let now = FolderId::of(&self.path);
        let watched = self.current.as_ref().map(|(id, _)| *id);
        if now == watched {
            return FolderChange::Same;
        }
        // Whatever happens next, the old watch is of a folder the path no
        // longer names: its events would be about another folder.
        self.current = None;
        let Some(id) = now else {
            return FolderChange::Gone;
        };
        match watch(&self.path, self.events.clone()) {
            // Swapped again while the watch was made: watch on the next check.
            Ok(_) if FolderId::of(&self.path) != Some(id) => FolderChange::Gone,
            Ok(watcher) => {
                self.current = Some((id, watcher));
                FolderChange::Arrived
            }
            Err(error) => {
                tracing::debug!(dir = %self.path.display(), "cannot watch the plugin folder yet: {error}");
                FolderChange::Gone
            }
        }
    }
}

/// A watch on the files directly inside `dir`, sending to `events`.
fn watch(
    dir: &Path,
    events: mpsc::UnboundedSender<notify::Result<Event>>,
) -> Result<RecommendedWatcher, notify::Error> {
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<Event>| {
        let _ = events.send(event);
    })?;
    watcher.watch(dir, RecursiveMode::NonRecursive)?;
    Ok(watcher)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder() -> (tempfile::TempDir, PathBuf) {
        let root = tempfile::tempdir().unwrap();
        let path = root.path().join("plugins");
        std::fs::create_dir(&path).unwrap();
        (root, path)
    }

    #[tokio::test]
    async fn a_folder_deleted_and_made_again_is_watched_again() {
        let (_root, path) = folder();
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut watched = WatchedFolder::start(&path, tx).unwrap();
        assert_eq!(watched.check(), FolderChange::Same);
        std::fs::remove_dir(&path).unwrap();
        assert_eq!(watched.check(), FolderChange::Gone);
        assert_eq!(watched.check(), FolderChange::Same, "gone is reported once");
        std::fs::create_dir(&path).unwrap();
        assert_eq!(watched.check(), FolderChange::Arrived);
        assert_eq!(watched.check(), FolderChange::Same);
        // The new folder's files are seen. Events of the folder itself (its
        // removal and creation) may still be on their way under load: skip
        // them, but an event naming the new file must come.
        std::fs::write(path.join("a.wasm"), b"x").unwrap();
        let file = path.join("a.wasm");
        tokio::time::timeout(Duration::from_secs(5), async {
            loop {
                let event = rx.recv().await.unwrap().unwrap();
                if event.paths.contains(&file) {
                    break;
                }
                assert_eq!(
                    event.paths,
                    std::slice::from_ref(&path),
                    "only the folder's own events"
                );
            }
        })
        .await
        .expect("an event from the new folder");
    }

    #[tokio::test]
    async fn a_folder_moved_away_and_replaced_is_told_apart() {
        let (root, path) = folder();
        let (tx, _rx) = mpsc::unbounded_channel();
        let mut watched = WatchedFolder::start(&path, tx).unwrap();
        std::fs::rename(&path, root.path().join("old")).unwrap();
        std::fs::create_dir(root.path().join("new")).unwrap();
        std::fs::rename(root.path().join("new"), &path).unwrap();
        assert_eq!(watched.check(), FolderChange::Arrived);
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_symlink_swapped_to_another_folder_is_followed() {
        let root = tempfile::tempdir().unwrap();
        let (a, b, link) = (
            root.path().join("a"),
            root.path().join("b"),
            root.path().join("plugins"),
        );
        std::fs::create_dir(&a).unwrap();
        std::fs::create_dir(&b).unwrap();
        std::os::unix::fs::symlink(&a, &link).unwrap();
        let (tx, _rx) = mpsc::unbounded_channel();
        let mut watched = WatchedFolder::start(&link, tx).unwrap();
        assert_eq!(watched.check(), FolderChange::Same);
        let temp = root.path().join("plugins.new");
        std::os::unix::fs::symlink(&b, &temp).unwrap();
        std::fs::rename(&temp, &link).unwrap();
        assert_eq!(watched.check(), FolderChange::Arrived);
        // A symlink to itself names no folder.
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink(&link, &link).unwrap();
        assert_eq!(watched.check(), FolderChange::Gone);
    }
}
