//! `[tasks]`: which of a plugin's tools answer a `tools/call` with a task
//! (the `io.modelcontextprotocol/tasks` extension) instead of waiting for the
//! result. Only clients that declare the extension ever get a task.
//!
//! ```toml
//! [tasks]
//! tools = ["render"]      # a task from the start of the call
//! after-ms = 2000         # any other tool still running after 2 s becomes one
//! required = ["render"]   # never run without a task: -32021 to other clients
//! ```
//!
//! A tool's own hint (the SDK's `Tool::task`) adds to these lists.

use std::collections::BTreeSet;
use std::time::Duration;

use serde::Deserialize;

/// Longest `after-ms`: a day.
pub const MAX_AFTER_MS: u64 = 24 * 60 * 60 * 1000;

/// `[tasks]`, as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TasksSection {
    /// Tools (by the plugin's own names) whose every call is a task.
    #[serde(default)]
    pub tools: Vec<String>,
    /// A call of any other tool still running after this long becomes a task.
    pub after_ms: Option<u64>,
    /// Tools that cannot run without a task.
    #[serde(default)]
    pub required: Vec<String>,
}

/// When a tool's call becomes a task, for a client that declared the
/// extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskStart {
    /// Never: the call is answered when it ends.
    Never,
    /// At once, before the guest runs.
    Immediately,
    /// When the call is still running after this long.
    After(Duration),
}

/// How one tool uses tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskMode {
    pub start: TaskStart,
    /// A client that did not declare the extension gets -32021.
    pub required: bool,
}

impl TaskMode {
    pub const NEVER: TaskMode = TaskMode {
        start: TaskStart::Never,
        required: false,
    };
}

/// A plugin's `[tasks]`, checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskPolicy {
    immediate: BTreeSet<String>,
    required: BTreeSet<String>,
    after: Option<Duration>,
}

impl TaskPolicy {
    /// The tools the policy names, by the plugin's own names (each must exist).
    pub fn named_tools(&self) -> impl Iterator<Item = (&'static str, &str)> {
        self.immediate
            .iter()
            .map(|t| ("tasks.tools", t.as_str()))
            .chain(self.required.iter().map(|t| ("tasks.required", t.as_str())))
    }

    /// How the tool the plugin calls `tool` uses tasks; `hint` is the tool's
    /// own (`None`, or `Some(required)` for "make every call a task").
    pub fn for_tool(&self, tool: &str, hint: Option<bool>) -> TaskMode {
        let required = self.required.contains(tool) || hint == Some(true);
        let start = if self.immediate.contains(tool) || hint.is_some() {
            TaskStart::Immediately
        } else if let Some(after) = self.after {
            TaskStart::After(after)
        } else if required {
            TaskStart::Immediately
        } else {
            TaskStart::Never
        };
        TaskMode { start, required }
    }
}

/// Checks `[tasks]`; an error names the key.
pub fn resolve(section: &TasksSection) -> Result<TaskPolicy, (String, String)> {
    if let Some(after) = section.after_ms
        && !(1..=MAX_AFTER_MS).contains(&after)
    {
        return Err((
            "tasks.after-ms".into(),
            format!("must be 1 to {MAX_AFTER_MS} milliseconds"),
        ));
    }
    for (key, list) in [
        ("tasks.tools", &section.tools),
        ("tasks.required", &section.required),
    ] {
        if let Some(index) = list.iter().position(String::is_empty) {
            return Err((
                format!("{key}[{index}]"),
                "a tool name cannot be empty".into(),
            ));
        }
    }
    Ok(TaskPolicy {
        immediate: section.tools.iter().cloned().collect(),
        required: section.required.iter().cloned().collect(),
        after: section.after_ms.map(Duration::from_millis),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(toml: &str) -> Result<TaskPolicy, (String, String)> {
        resolve(&toml::from_str::<TasksSection>(toml).unwrap())
    }

    #[test]
    fn each_tool_gets_its_mode() {
        let policy =
            policy("tools = [\"slow\"]\nafter-ms = 250\nrequired = [\"slow\", \"late\"]").unwrap();
        assert_eq!(
            policy.for_tool("slow", None),
            TaskMode {
                start: TaskStart::Immediately,
                required: true
            }
        );
        assert_eq!(
            policy.for_tool("late", None),
            TaskMode {
                start: TaskStart::After(Duration::from_millis(250)),
                required: true
            }
        );
        assert_eq!(
            policy.for_tool("other", None),
            TaskMode {
                start: TaskStart::After(Duration::from_millis(250)),
                required: false
            }
        );
        let none = TaskPolicy::default();
        assert_eq!(none.for_tool("other", None), TaskMode::NEVER);
        assert_eq!(
            none.for_tool("hinted", Some(false)),
            TaskMode {
                start: TaskStart::Immediately,
                required: false
            }
        );
        assert_eq!(
            none.for_tool("hinted", Some(true)),
            TaskMode {
                start: TaskStart::Immediately,
                required: true
            }
        );
        let required_only = self::policy("required = [\"r\"]").unwrap();
        assert_eq!(
            required_only.for_tool("r", None).start,
            TaskStart::Immediately
        );
    }

    #[test]
    fn bad_values_name_their_key() {
        assert_eq!(
            policy("after-ms = 0"),
            Err((
                "tasks.after-ms".into(),
                "must be 1 to 86400000 milliseconds".into()
            ))
        );
        assert_eq!(
            policy("required = [\"a\", \"\"]"),
            Err((
                "tasks.required[1]".into(),
                "a tool name cannot be empty".into()
            ))
        );
        assert!(toml::from_str::<TasksSection>("after = 3").is_err());
    }
}
