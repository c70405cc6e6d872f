//! How plugin and tool names are formed.
//!
//! The rule (also in docs/protocol.md): a plugin is named after its file, with every
//! character outside `A-Z a-z 0-9 -` replaced by `-` (`text_stats.wasm` is plugin
//! `text-stats`). Clients see each tool as `<plugin>_<tool>`. Because a plugin name
//! never contains `_`, the first `_` of an exposed name always marks where the plugin
//! name ends, so two different (plugin, tool) pairs can never produce the same name.
//! Two files that map to the same plugin name (`a_b.wasm`, `a-b.wasm`) cannot both
//! load: the first in byte order wins and the other is refused with a log line.

/// Longest plugin name; with [`MAX_TOOL_NAME`] and the separator an exposed name
/// stays within MCP's 128 characters.
pub const MAX_PLUGIN_NAME: usize = 63;
/// Longest tool name a plugin may use.
pub const MAX_TOOL_NAME: usize = 64;

/// Why a name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("the file name gives an empty plugin name")]
    EmptyPlugin,
    #[error("the plugin name `{0}` is longer than {MAX_PLUGIN_NAME} characters")]
    PluginTooLong(String),
    #[error("the name `{0}` is not 1 to {MAX_TOOL_NAME} characters of A-Z a-z 0-9 _ - .")]
    InvalidTool(String),
}

/// The plugin name for a file stem (the file name without `.wasm`).
pub fn plugin_name(file_stem: &str) -> Result<String, NameError> {
    let name: String = file_stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if name.is_empty() {
        Err(NameError::EmptyPlugin)
    } else if name.len() > MAX_PLUGIN_NAME {
        Err(NameError::PluginTooLong(name))
    } else {
        Ok(name)
    }
}

/// The name clients see for `tool` of `plugin`.
pub fn exposed_tool_name(plugin: &str, tool: &str) -> Result<String, NameError> {
    Ok(format!("{plugin}_{}", declared_tool_name(tool)?))
}

/// `tool` itself, checked, for a plugin whose manifest turns the prefix off.
pub fn declared_tool_name(tool: &str) -> Result<String, NameError> {
    let valid = !tool.is_empty()
        && tool.len() <= MAX_TOOL_NAME
        && tool
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if !valid {
        return Err(NameError::InvalidTool(tool.to_string()));
    }
    Ok(tool.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_names_keep_only_safe_characters() {
        assert_eq!(plugin_name("calc").unwrap(), "calc");
        assert_eq!(plugin_name("text_stats").unwrap(), "text-stats");
        assert_eq!(plugin_name("my plugin.v2").unwrap(), "my-plugin-v2");
        assert_eq!(plugin_name("Été").unwrap(), "-t-");
        assert_eq!(plugin_name(""), Err(NameError::EmptyPlugin));
        assert!(matches!(
            plugin_name(&"a".repeat(64)),
            Err(NameError::PluginTooLong(_))
        ));
    }

    #[test]
    fn exposed_names_join_with_underscore() {
        assert_eq!(exposed_tool_name("calc", "add").unwrap(), "calc_add");
        assert_eq!(
            exposed_tool_name("text-stats", "word_count").unwrap(),
            "text-stats_word_count"
        );
        let longest = exposed_tool_name(&"p".repeat(63), &"t".repeat(64)).unwrap();
        assert_eq!(longest.len(), 128);
    }

    #[test]
    fn invalid_tool_names_are_refused() {
        for bad in ["", "has space", "comma,", "slash/", &"t".repeat(65)] {
            assert_eq!(
                exposed_tool_name("p", bad),
                Err(NameError::InvalidTool(bad.to_string()))
            );
        }
    }

    #[test]
    fn first_underscore_splits_unambiguously() {
        // Different (plugin, tool) pairs never collide because plugins have no `_`.
        let a = exposed_tool_name("a", "b_c").unwrap();
        let b = exposed_tool_name(&plugin_name("a_b").unwrap(), "c").unwrap();
        assert_ne!(a, b);
        assert_eq!(b, "a-b_c");
    }
}
