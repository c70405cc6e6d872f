//! The audit trail (`--audit-log`): one JSON line per tool call and per
//! plugin change, answering "who called what, when, with which build of the
//! plugin, and how did it end" after the fact.
//!
//! A leaf, like `metrics`: the server and the loader describe what happened
//! in the plain records here ([`CallEntry`], [`PluginEntry`]); this module
//! stamps the time, writes the line and rotates the file (`audit/sink.rs`).
//! Arguments are left out unless `--audit-arguments` asks for them: they may
//! hold what a user typed.
//!
//! Strategy: a line is written (one `write` call) before the answer it
//! describes goes out, under a lock shared by every transport thread, so no
//! line is lost when the process ends and lines never interleave. A write
//! that fails is logged (once per kind of error) and the call is answered
//! all the same: the audit trail observes calls, it does not gate them.

mod sink;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{SecondsFormat, Utc};
use serde::Serialize;
use serde_json::Value;

pub use sink::AuditError;

use crate::caller::Caller;
use sink::Sink;

/// Where audit lines go and how the file is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditSettings {
    pub destination: AuditDestination,
    /// A file reaching this size is rotated before the next line.
    pub max_bytes: u64,
    /// Rotated files kept (`FILE.1` is the newest); older ones are deleted.
    pub keep: usize,
    /// Whether call lines carry the call's arguments.
    pub arguments: bool,
}

/// The audit log's destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuditDestination {
    /// Standard error, beside the logs (`--audit-log -`); never rotated.
    Stderr,
    /// A file, appended to and rotated by size.
    File(PathBuf),
}

/// The audit trail; share it as `Arc<AuditLog>`.
#[derive(Debug)]
pub struct AuditLog {
    sink: Mutex<Sink>,
    arguments: bool,
    /// Per plugin, the argument fields its manifest marks secret.
    secret_fields: Mutex<HashMap<String, Arc<[String]>>>,
}

/// What a secret field's value becomes in an audit line.
pub const REDACTED: &str = "[redacted]";

/// How a call ended, as the audit trail tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CallOutcome {
    /// A result without `isError`.
    Success,
    /// The tool answered with `isError: true`.
    ToolError,
    /// The call failed in the host (a limit, a trap, a refused grant): a
    /// tool execution error for the client.
    Failed,
    /// The arguments did not match the tool's input schema.
    InvalidArguments,
    /// No tool by that name.
    UnknownTool,
    /// The caller's access token lacks a scope the tool needs (`[auth]`).
    Forbidden,
    /// The plugin asked the client for input; the call goes on in a later request.
    InputRequired,
    /// The call ended in a JSON-RPC error (a bad `requestState`, say).
    ProtocolError,
    /// The request was abandoned (cancelled, or its client left) before an answer.
    Abandoned,
}

/// One tool call.
#[derive(Debug, Clone, Serialize)]
pub struct CallEntry<'a> {
    /// The W3C trace id of the call's trace, when one is known.
    pub trace_id: Option<&'a str>,
    /// The legacy HTTP session the call came in (`Mcp-Session-Id`).
    pub session_id: Option<&'a str>,
    /// Who made the call, when auth is on (`null` otherwise).
    pub caller: Option<&'a Caller>,
    pub tool: &'a str,
    pub plugin: Option<&'a str>,
    /// The SHA-256 of the plugin's component file, in hexadecimal.
    pub digest: Option<&'a str>,
    pub outcome: CallOutcome,
    /// From the request's arrival at the tool to its answer, in milliseconds.
    pub duration_ms: f64,
    /// The limit that stopped the call, by its setting's name (`timeout`, `memory`, ...).
    pub limit: Option<&'static str>,
    /// Only with `--audit-arguments`, the fields the plugin's manifest
    /// marks secret redacted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<&'a Value>,
}

/// What happened to a plugin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PluginChange {
    /// Loaded for the first time, or a new version replaced the old.
    Loaded,
    /// Its file is gone; its tools are no longer served.
    Removed,
    /// A file failed to load; the previous version, if any, keeps serving.
    Failed,
    /// The plugin said its lists changed (`lists.changed`) and was listed
    /// again: the same file, new tools, prompts or resources.
    Relisted,
}

/// One change to the plugins served.
#[derive(Debug, Clone, Serialize)]
pub struct PluginEntry<'a> {
    pub change: PluginChange,
    pub plugin: &'a str,
    /// The SHA-256 of the component file now served (`loaded`), or of the
    /// one no longer served (`removed`).
    pub digest: Option<&'a str>,
    /// The digest of the version a `loaded` replaced, if any.
    pub previous_digest: Option<&'a str>,
    pub file: Option<&'a str>,
}

/// One line: the time, then the event and its fields.
#[derive(Serialize)]
struct Line<'a, E: Serialize> {
    time: String,
    event: &'static str,
    #[serde(flatten)]
    entry: &'a E,
}

impl AuditLog {
    /// Opens the destination (creating the file, appending to one that
    /// exists), so a path that cannot be written stops the server at start.
    pub fn open(settings: &AuditSettings) -> Result<Self, AuditError> {
        Ok(Self {
            sink: Mutex::new(Sink::open(
                &settings.destination,
                settings.max_bytes,
                settings.keep,
            )?),
            arguments: settings.arguments,
            secret_fields: Mutex::default(),
        })
    }

    /// The argument fields (object keys at any depth) whose values the call
    /// lines of `plugin` redact, from its manifest's `[audit] secret`; set
    /// at each load, emptied when it is removed.
    pub fn set_secret_fields(&self, plugin: &str, fields: Arc<[String]>) {
        let mut all = self.secret_fields.lock().expect("audit lock");
        if fields.is_empty() {
            all.remove(plugin);
        } else {
            all.insert(plugin.to_string(), fields);
        }
    }

    /// Whether call lines carry the arguments (`--audit-arguments`).
    pub fn wants_arguments(&self) -> bool {
        self.arguments
    }

    /// Writes the line of one call; `arguments` is dropped unless wanted,
    /// and its secret fields redacted.
    pub fn call(&self, entry: &CallEntry<'_>) {
        let Some(arguments) = entry.arguments else {
            return self.write("call", entry);
        };
        if !self.arguments {
            let entry = CallEntry {
                arguments: None,
                ..entry.clone()
            };
            return self.write("call", &entry);
        }
        let fields = entry.plugin.and_then(|plugin| {
            let all = self.secret_fields.lock().expect("audit lock");
            all.get(plugin).cloned()
        });
        match fields {
            Some(fields) => {
                let mut arguments = arguments.clone();
                redact(&mut arguments, &fields);
                self.write(
                    "call",
                    &CallEntry {
                        arguments: Some(&arguments),
                        ..entry.clone()
                    },
                );
            }
            None => self.write("call", entry),
        }
    }

    /// Writes the line of one plugin change.
    pub fn plugin(&self, entry: &PluginEntry<'_>) {
        self.write("plugin", entry);
    }

    fn write<E: Serialize>(&self, event: &'static str, entry: &E) {
        let line = Line {
            time: Utc::now().to_rfc3339_opts(SecondsFormat::Micros, true),
            event,
            entry,
        };
        let mut bytes = serde_json::to_vec(&line).expect("audit lines serialize");
        bytes.push(b'\n');
        self.sink.lock().expect("audit lock").write_line(&bytes);
    }
}

/// Replaces the value of every object key in `fields`, at any depth, with
/// [`REDACTED`].
fn redact(value: &mut Value, fields: &[String]) {
    match value {
        Value::Object(object) => {
            for (key, value) in object.iter_mut() {
                if fields.iter().any(|field| field == key) {
                    *value = Value::String(REDACTED.into());
                } else {
                    redact(value, fields);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| redact(item, fields)),
        _ => {}
    }
}

/// A duration in milliseconds with microsecond precision, for `duration_ms`.
pub fn millis(elapsed: Duration) -> f64 {
    (elapsed.as_micros() as f64) / 1000.0
}

#[cfg(test)]
mod tests;
