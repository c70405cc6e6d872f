//! Why a tool call did not produce an ordinary result.

use std::fmt;

use crate::output::ToolOutput;

/// Why a tool call did not produce an ordinary result.
///
/// The first three cases mirror the WIT `tool-error` variant and reach Wharf as such.
/// [`ToolError::Output`] is the SDK's way for a tool whose closure must return a value
/// of a fixed type (a [`Tool::structured`](crate::Tool::structured) tool) to answer with
/// a whole [`ToolOutput`] instead, normally [`ToolOutput::error`]: the call then
/// succeeds at the WIT level with that result.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolError {
    /// The plugin has no tool of this name. The SDK returns it itself; a tool rarely
    /// needs it.
    UnknownTool(String),
    /// The arguments do not fit the tool's input schema; the text says how. The SDK
    /// returns it when the arguments do not deserialize; a tool returns it for checks
    /// the schema cannot express.
    InvalidArguments(String),
    /// The tool failed; the text says why. Wharf reports it to the client as a tool
    /// execution error.
    Failed(String),
    /// Not a failure of the call: answer with this output (normally an
    /// [`is_error`](ToolOutput::is_error) one) in place of the tool's usual result.
    Output(ToolOutput),
    /// A question to the client is still unanswered
    /// ([`InputError::Pending`](crate::input::InputError::Pending)): the tool
    /// stops here and Wharf runs it again once the client has answered.
    Pending,
}

/// Lets a tool write `input::elicit(...)?`: pending stops the call for this
/// round; an unsupported or failed question fails it.
impl From<crate::input::InputError> for ToolError {
    fn from(error: crate::input::InputError) -> Self {
        match error {
            crate::input::InputError::Pending => Self::Pending,
            other => Self::Failed(other.to_string()),
        }
    }
}

impl ToolError {
    /// A [`ToolError::Failed`] with this message.
    pub fn failed(message: impl Into<String>) -> Self {
        Self::Failed(message.into())
    }

    /// A [`ToolError::InvalidArguments`] with this message.
    pub fn invalid_arguments(message: impl Into<String>) -> Self {
        Self::InvalidArguments(message.into())
    }
}

/// Lets a structured tool write `Err(ToolOutput::error("...").into())`.
impl From<ToolOutput> for ToolError {
    fn from(output: ToolOutput) -> Self {
        Self::Output(output)
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownTool(name) => write!(f, "unknown tool `{name}`"),
            Self::InvalidArguments(message) => write!(f, "invalid arguments: {message}"),
            Self::Failed(message) => f.write_str(message),
            Self::Output(output) => write!(f, "tool answered: {}", output.text_summary()),
            Self::Pending => f.write_str("waiting for the client's answer"),
        }
    }
}

impl std::error::Error for ToolError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_says_what_went_wrong() {
        assert_eq!(
            ToolError::UnknownTool("nope".into()).to_string(),
            "unknown tool `nope`"
        );
        assert_eq!(
            ToolError::invalid_arguments("missing field `a`").to_string(),
            "invalid arguments: missing field `a`"
        );
        assert_eq!(ToolError::failed("disk full").to_string(), "disk full");
        assert_eq!(
            ToolError::from(ToolOutput::error("b is zero")).to_string(),
            "tool answered: b is zero"
        );
    }
}
