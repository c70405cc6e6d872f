//! The audit trail's flags (`--audit-log` and its settings) for `serve`.

use std::path::PathBuf;

use clap::Args;
use wharf::audit::{AuditDestination, AuditSettings};

/// The audit trail: a JSON line per tool call and per plugin change.
#[derive(Args)]
pub struct AuditArgs {
    /// Append a JSON line per tool call and per plugin change to this file
    /// (`-`: standard error). Off when not given.
    #[arg(long, env = "WHARF_AUDIT_LOG", value_name = "FILE")]
    audit_log: Option<PathBuf>,

    /// Rotate the audit file before it grows past this many bytes.
    #[arg(long, default_value_t = 100 << 20, value_parser = clap::value_parser!(u64).range(1024..))]
    audit_max_bytes: u64,

    /// Rotated audit files kept (FILE.1 the newest); older ones are deleted.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u16).range(0..=1000))]
    audit_keep: u16,

    /// Write each call's arguments into its audit line (they may hold what
    /// users typed: off by default).
    #[arg(long)]
    audit_arguments: bool,
}

impl AuditArgs {
    /// The settings, or `None` when the audit trail is off.
    pub fn settings(&self) -> Option<AuditSettings> {
        let path = self.audit_log.as_ref()?;
        let destination = if path.as_os_str() == "-" {
            AuditDestination::Stderr
        } else {
            AuditDestination::File(path.clone())
        };
        Some(AuditSettings {
            destination,
            max_bytes: self.audit_max_bytes,
            keep: usize::from(self.audit_keep),
            arguments: self.audit_arguments,
        })
    }
}
