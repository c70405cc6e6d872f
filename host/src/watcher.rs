//! Hot reload: watches the plugin folder and swaps changed plugins into the registry.
//!
//! Strategy: notify delivers file events on its own thread into a channel. The
//! reload task waits for a burst of events to go quiet ([`DEBOUNCE`]), then scans
//! the folder ([`PluginFolder::scan`]), which compiles off the request path, and
//! swaps the new tool set into the registry. The registry tells subscribers only
//! if the listing changed. A file still being written is deferred: it counts as
//! complete once its writer closed it or renamed it into place, or once it has
//! not changed for [`SETTLE`].
//!
//! The watch follows the path, not the folder ([`folder`]): a folder deleted
//! and made again, moved away and replaced, or swapped for a symlink is
//! watched anew and scanned whole. While the path names no folder, the plugins
//! loaded from it keep serving (a deploy that swaps the folder should not take
//! the tools away meanwhile); deleting the files themselves removes them.
//!
//! A plugin may also say its lists changed (`lists.changed`, see
//! `runtime::list_changes`): the same task asks it again ([`relists`] paces
//! that), keeps the new lists in the folder's state and swaps the tool set in,
//! so listeners hear of it as of a file change.
//!
//! Registry references (`NAME.oci`) change without a file event: when the
//! folder has a registry source, the task also scans every poll interval
//! (`--oci-poll-secs`), and the source decides which tags are due a look.

mod file_states;
mod folder;
pub mod relists;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use notify::Event;
use tokio::sync::mpsc;

use crate::audit::AuditLog;
use crate::loader::PluginFolder;
use crate::metrics::Metrics;
use crate::registry::Registry;
use file_states::{FileStates, relevant};
pub use folder::FOLDER_CHECK;
use folder::{FolderChange, WatchedFolder};
use relists::RelistQueue;

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

/// A watch on the plugin folder, started before the first scan so that nothing
/// written meanwhile is missed.
pub struct FolderWatch {
    folder: WatchedFolder,
    events: mpsc::UnboundedReceiver<notify::Result<Event>>,
}

/// What woke the reload task.
enum Wake {
    Event(notify::Result<Event>),
    /// A deferred file's turn.
    Recheck,
    /// Time to check the path names the folder watched.
    FolderCheck,
    /// Time to look at the registry tags again.
    Poll,
    /// A plugin's turn to be listed again.
    Relist(Arc<str>),
    /// The watch is gone for good (the process is ending).
    Closed,
}

impl FolderWatch {
    /// Starts receiving events for the files directly inside `dir`.
    pub fn start(dir: &Path) -> Result<Self, WatchError> {
        let (tx, events) = mpsc::unbounded_channel();
        Ok(Self {
            folder: WatchedFolder::start(dir, tx)?,
            events,
        })
    }

    /// Keeps the registry in step with `folder` (and with the plugins that
    /// say their lists changed, from `relists`) until the process ends,
    /// writing each plugin change to `audit` if there is one.
    pub fn spawn(
        self,
        folder: PluginFolder,
        registry: Arc<Registry>,
        metrics: Arc<Metrics>,
        audit: Option<Arc<AuditLog>>,
        relists: Option<RelistQueue>,
    ) -> tokio::task::JoinHandle<()> {
        tokio::spawn(self.run(folder, registry, metrics, audit, relists))
    }

    async fn run(
        self,
        mut plugins: PluginFolder,
        registry: Arc<Registry>,
        metrics: Arc<Metrics>,
        audit: Option<Arc<AuditLog>>,
        mut relists: Option<RelistQueue>,
    ) {
        // Owned by the task: dropping the watch would stop the events.
        let Self {
            mut folder,
            mut events,
        } = self;
        let mut states = FileStates::default();
        let mut recheck: Option<Instant> = None;
        let mut checks = tokio::time::interval(FOLDER_CHECK);
        checks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut presence = Presence::default();
        // Without a registry source, a poll that never comes.
        let poll_every = plugins.poll_interval();
        let mut polls = tokio::time::interval(poll_every.unwrap_or(Duration::from_secs(86_400)));
        polls.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        polls.reset();
        let mut last_error: Option<String> = None;
        loop {
            // Wait for the first event of a burst, a deferred file's turn, or
            // the next look at the path.
            let wake = tokio::select! {
                event = events.recv() => event.map_or(Wake::Closed, Wake::Event),
                _ = sleep_until(recheck) => Wake::Recheck,
                _ = checks.tick() => Wake::FolderCheck,
                _ = polls.tick(), if poll_every.is_some() => Wake::Poll,
                name = next_relist(&mut relists) => Wake::Relist(name),
            };
            let mut dirty = matches!(wake, Wake::Recheck | Wake::Poll);
            match wake {
                Wake::Closed => return,
                Wake::Event(event) => {
                    dirty |= note(&mut states, event);
                    // Let the burst go quiet.
                    loop {
                        match tokio::time::timeout(DEBOUNCE, events.recv()).await {
                            Ok(Some(event)) => dirty |= note(&mut states, event),
                            Ok(None) => return,
                            Err(_) => break,
                        }
                    }
                }
                Wake::Relist(name) => {
                    relist(&mut plugins, &name, &registry, &metrics, audit.as_deref()).await;
                    continue;
                }
                Wake::Recheck | Wake::FolderCheck | Wake::Poll => {}
            }
            match presence.update(folder.check(), &plugins) {
                Look::Skip => continue,
                Look::AsBefore => {}
                Look::Arrived => {
                    // What was seen of the old folder's files says nothing of these.
                    states.clear();
                    dirty = true;
                }
            }
            if !dirty {
                continue;
            }
            recheck = None;
            let started = Instant::now();
            match plugins.scan(&states).await {
                Ok(report) => {
                    last_error = None;
                    if !report.deferred.is_empty() {
                        recheck = Some(Instant::now() + DEBOUNCE.max(SETTLE / 3));
                    }
                    if let Some(audit) = &audit {
                        plugins.audit_scan(&report, &registry.snapshot(), audit);
                    }
                    if report.changed() {
                        let set = plugins.tool_set();
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
                Err(error) => {
                    // Gone or swapped while it was read: say so, and scan the new one.
                    match presence.update(folder.check(), &plugins) {
                        Look::AsBefore => {}
                        Look::Skip => continue,
                        Look::Arrived => {
                            states.clear();
                            recheck = Some(Instant::now());
                            continue;
                        }
                    }
                    let error = error.to_string();
                    if last_error.as_ref() != Some(&error) {
                        tracing::error!("{error}; the plugins loaded keep serving");
                        last_error = Some(error);
                    }
                }
            }
        }
    }
}

/// Serves the plugins' `lists.changed` for a folder that is not watched
/// (`--no-watch`): the only changes the registry then sees.
pub fn spawn_relists(
    mut plugins: PluginFolder,
    registry: Arc<Registry>,
    metrics: Arc<Metrics>,
    audit: Option<Arc<AuditLog>>,
    mut relists: RelistQueue,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            let name = relists.next().await;
            relist(&mut plugins, &name, &registry, &metrics, audit.as_deref()).await;
        }
    })
}

/// Lists the plugin `name` again and, if it was, swaps the set in, writes a
/// `relisted` audit line and counts a reload when its lists changed.
async fn relist(
    plugins: &mut PluginFolder,
    name: &str,
    registry: &Registry,
    metrics: &Metrics,
    audit: Option<&AuditLog>,
) {
    let started = Instant::now();
    if !plugins.relist(name).await {
        return;
    }
    if let Some(audit) = audit {
        plugins.audit_relist(name, audit);
    }
    let changes = registry.replace(plugins.tool_set());
    if changes.tools || changes.prompts || changes.resources {
        metrics.record_reload();
    }
    tracing::info!(
        plugin = name,
        tools_changed = changes.tools,
        prompts_changed = changes.prompts,
        resources_changed = changes.resources,
        elapsed_ms = started.elapsed().as_millis() as u64,
        "plugin lists swapped in"
    );
}

/// The next plugin to list again, or never without a queue.
async fn next_relist(relists: &mut Option<RelistQueue>) -> Arc<str> {
    match relists {
        Some(queue) => queue.next().await,
        None => std::future::pending().await,
    }
}

/// Whether the path names a folder, as the reload task last saw it.
#[derive(Default)]
struct Presence {
    gone: bool,
}

/// What to do after a look at the path.
enum Look {
    /// Same folder as before: scan if events call for it.
    AsBefore,
    /// No folder there: nothing to scan.
    Skip,
    /// A folder other than the one before (back, or swapped in): scan it whole.
    Arrived,
}

impl Presence {
    /// Takes in what a check of the path found; logs each change once.
    fn update(&mut self, change: FolderChange, plugins: &PluginFolder) -> Look {
        match change {
            FolderChange::Same if self.gone => Look::Skip,
            FolderChange::Same => Look::AsBefore,
            FolderChange::Gone => {
                if !self.gone {
                    tracing::warn!(
                        dir = %plugins.dir().display(),
                        plugins = plugins.len(),
                        "the plugin folder is gone; the plugins loaded from it keep serving until a folder is there again"
                    );
                    self.gone = true;
                }
                Look::Skip
            }
            FolderChange::Arrived => {
                tracing::info!(
                    dir = %plugins.dir().display(),
                    "a plugin folder is there again (or another took its place); loading what it holds"
                );
                self.gone = false;
                Look::Arrived
            }
        }
    }
}

/// Sleeps until `at`, or forever without it.
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

/// Records an event; returns whether it calls for a rescan.
fn note(states: &mut FileStates, event: notify::Result<Event>) -> bool {
    match event {
        Ok(event) => {
            tracing::trace!(?event, "file event");
            if event.need_rescan() {
                tracing::warn!(
                    "file events were lost (too many at once); rescanning the plugin folder"
                );
                states.clear();
            }
            states.record(&event);
            relevant(&event)
        }
        Err(error) => {
            tracing::warn!("file watching reported an error: {error}; rescanning");
            true
        }
    }
}
