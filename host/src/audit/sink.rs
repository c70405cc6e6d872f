//! Where audit lines are written: standard error, or a file appended to and
//! rotated by size (`FILE` -> `FILE.1` -> `FILE.2` ..., the oldest deleted).

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::AuditDestination;

/// The audit file could not be opened.
#[derive(Debug, thiserror::Error)]
#[error("cannot open the audit log {path}: {source}")]
pub struct AuditError {
    path: PathBuf,
    source: io::Error,
}

/// An open destination.
#[derive(Debug)]
pub(super) enum Sink {
    Stderr,
    File(RotatingFile),
}

impl Sink {
    pub(super) fn open(
        destination: &AuditDestination,
        max_bytes: u64,
        keep: usize,
    ) -> Result<Self, AuditError> {
        match destination {
            AuditDestination::Stderr => Ok(Self::Stderr),
            AuditDestination::File(path) => RotatingFile::open(path, max_bytes, keep)
                .map(Self::File)
                .map_err(|source| AuditError {
                    path: path.clone(),
                    source,
                }),
        }
    }

    /// Writes one whole line in one call; a failure is logged, once until
    /// the next write succeeds.
    pub(super) fn write_line(&mut self, line: &[u8]) {
        let (result, failing) = match self {
            Self::Stderr => (io::stderr().lock().write_all(line), None),
            Self::File(file) => (file.write_line(line), Some(&mut file.failing)),
        };
        match (result, failing) {
            (Ok(()), Some(failing)) => *failing = false,
            (Ok(()), None) => {}
            (Err(error), Some(failing)) => {
                if !*failing {
                    tracing::error!("cannot write the audit log: {error}; calls go on unrecorded");
                }
                *failing = true;
            }
            (Err(_), None) => {}
        }
    }
}

/// An append-only file that is rotated once it would grow past `max_bytes`.
#[derive(Debug)]
pub(super) struct RotatingFile {
    path: PathBuf,
    file: File,
    size: u64,
    max_bytes: u64,
    keep: usize,
    /// The last write failed (and was logged).
    failing: bool,
}

impl RotatingFile {
    pub(super) fn open(path: &Path, max_bytes: u64, keep: usize) -> io::Result<Self> {
        let file = append_to(path)?;
        let size = file.metadata()?.len();
        Ok(Self {
            path: path.to_path_buf(),
            file,
            size,
            max_bytes,
            keep,
            failing: false,
        })
    }

    /// Appends `line`, first rotating if it would take the file past its
    /// size (a line longer than the limit gets a file of its own).
    pub(super) fn write_line(&mut self, line: &[u8]) -> io::Result<()> {
        if self.size > 0 && self.size + line.len() as u64 > self.max_bytes {
            self.rotate()?;
        }
        self.file.write_all(line)?;
        self.size += line.len() as u64;
        Ok(())
    }

    /// Shifts `FILE.i` to `FILE.i+1` (dropping the oldest), `FILE` to
    /// `FILE.1`, and starts a new `FILE`.
    fn rotate(&mut self) -> io::Result<()> {
        if self.keep == 0 {
            remove_if_there(&self.path)?;
        } else {
            remove_if_there(&numbered(&self.path, self.keep))?;
            for n in (1..self.keep).rev() {
                rename_if_there(&numbered(&self.path, n), &numbered(&self.path, n + 1))?;
            }
            std::fs::rename(&self.path, numbered(&self.path, 1))?;
        }
        self.file = append_to(&self.path)?;
        self.size = 0;
        Ok(())
    }
}

fn append_to(path: &Path) -> io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
}

/// `FILE.n`.
pub(super) fn numbered(path: &Path, n: usize) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{n}"));
    PathBuf::from(name)
}

fn remove_if_there(path: &Path) -> io::Result<()> {
    match std::fs::remove_file(path) {
        Err(error) if error.kind() != io::ErrorKind::NotFound => Err(error),
        _ => Ok(()),
    }
}

fn rename_if_there(from: &Path, to: &Path) -> io::Result<()> {
    match std::fs::rename(from, to) {
        Err(error) if error.kind() != io::ErrorKind::NotFound => Err(error),
        _ => Ok(()),
    }
}
