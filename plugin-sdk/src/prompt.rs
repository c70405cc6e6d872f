//! Prompts: message templates a user picks and a client fills in with arguments.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use crate::bindings::exports::wharf::plugin::prompts as wit;
use crate::bindings::wharf::plugin::types::Content;

pub use wit::Role;

type Text = Cow<'static, str>;
type Render = Box<dyn Fn(&PromptArguments) -> Result<PromptOutput, PromptError>>;
type Complete = Box<dyn Fn(&str, &str, &PromptArguments) -> Vec<String>>;

/// One prompt: a name, its arguments, and a closure that renders it.
///
/// ```
/// use wharf_sdk::{Prompt, PromptArgument, PromptOutput};
///
/// let review = Prompt::new("review", |args| {
///     let code = args.require("code")?;
///     let focus = args.get("focus").unwrap_or("correctness");
///     Ok(PromptOutput::new().user(format!("Review this code for {focus}:\n\n{code}")))
/// })
/// .description("Asks for a code review.")
/// .argument(PromptArgument::required("code").description("The code to review."))
/// .argument(PromptArgument::optional("focus").description("What to look at."))
/// .complete(|argument, value, _| match argument {
///     "focus" => ["correctness", "performance", "style"]
///         .into_iter()
///         .filter(|f| f.starts_with(value))
///         .map(String::from)
///         .collect(),
///     _ => Vec::new(),
/// });
/// let output = review.render(&[("code".into(), "x = 1".into())]).unwrap();
/// assert_eq!(output.messages().len(), 1);
/// assert_eq!(review.suggestions("focus", "p", &[]), ["performance"]);
/// ```
pub struct Prompt {
    name: Text,
    title: Option<Text>,
    description: Option<Text>,
    arguments: Vec<PromptArgument>,
    render: Render,
    complete: Option<Complete>,
}

impl fmt::Debug for Prompt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Prompt")
            .field("name", &self.name)
            .field("arguments", &self.arguments)
            .finish_non_exhaustive()
    }
}

impl Prompt {
    /// A prompt called `name` (1 to 64 characters of `A-Z a-z 0-9 _ - .`) that
    /// `render` turns into messages. Declare its arguments with
    /// [`argument`](Self::argument): Wharf checks that required ones are present
    /// before `render` runs.
    pub fn new<F>(name: impl Into<Text>, render: F) -> Self
    where
        F: Fn(&PromptArguments) -> Result<PromptOutput, PromptError> + 'static,
    {
        Self {
            name: name.into(),
            title: None,
            description: None,
            arguments: Vec::new(),
            render: Box::new(render),
            complete: None,
        }
    }

    /// Sets the short human-readable name shown by clients.
    pub fn title(mut self, title: impl Into<Text>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets what the prompt is for.
    pub fn description(mut self, description: impl Into<Text>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Adds an argument after those already there.
    pub fn argument(mut self, argument: PromptArgument) -> Self {
        self.arguments.push(argument);
        self
    }

    /// Sets how argument values are completed: `complete(argument, value so far,
    /// arguments already chosen)` returns suggestions, best first.
    pub fn complete<F>(mut self, complete: F) -> Self
    where
        F: Fn(&str, &str, &PromptArguments) -> Vec<String> + 'static,
    {
        self.complete = Some(Box::new(complete));
        self
    }

    /// The prompt's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Renders the prompt with `arguments` (name, value pairs), after checking
    /// that every required argument is there and no unknown one is.
    pub fn render(&self, arguments: &[(String, String)]) -> Result<PromptOutput, PromptError> {
        for (name, _) in arguments {
            if !self.arguments.iter().any(|a| a.name == *name) {
                return Err(PromptError::InvalidArguments(format!(
                    "prompt `{}` has no argument `{name}`",
                    self.name
                )));
            }
        }
        let arguments = PromptArguments::new(arguments);
        for declared in self.arguments.iter().filter(|a| a.required) {
            arguments.require(&declared.name)?;
        }
        (self.render)(&arguments)
    }

    /// Suggestions for `argument` whose value so far is `value`.
    pub fn suggestions(
        &self,
        argument: &str,
        value: &str,
        context: &[(String, String)],
    ) -> Vec<String> {
        match &self.complete {
            Some(complete) => complete(argument, value, &PromptArguments::new(context)),
            None => Vec::new(),
        }
    }

    /// The WIT `prompt` record that describes this prompt to Wharf.
    pub(crate) fn to_wit(&self) -> wit::Prompt {
        wit::Prompt {
            name: self.name.to_string(),
            title: self.title.as_deref().map(str::to_owned),
            description: self.description.as_deref().map(str::to_owned),
            arguments: self
                .arguments
                .iter()
                .map(|a| wit::PromptArgument {
                    name: a.name.to_string(),
                    title: a.title.as_deref().map(str::to_owned),
                    description: a.description.as_deref().map(str::to_owned),
                    required: a.required,
                })
                .collect(),
        }
    }
}

/// One argument of a prompt; its value is always a string.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptArgument {
    name: Text,
    title: Option<Text>,
    description: Option<Text>,
    required: bool,
}

impl PromptArgument {
    /// An argument the prompt cannot render without.
    pub fn required(name: impl Into<Text>) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: None,
            required: true,
        }
    }

    /// An argument that may be left out.
    pub fn optional(name: impl Into<Text>) -> Self {
        Self {
            required: false,
            ..Self::required(name)
        }
    }

    /// Sets a human-readable title.
    pub fn title(mut self, title: impl Into<Text>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets what the argument is for.
    pub fn description(mut self, description: impl Into<Text>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// The argument values a prompt is rendered or completed with.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PromptArguments(BTreeMap<String, String>);

impl PromptArguments {
    fn new(pairs: &[(String, String)]) -> Self {
        Self(pairs.iter().cloned().collect())
    }

    /// The value of `name`, if given.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// The value of `name`, or an [`PromptError::InvalidArguments`] naming it.
    pub fn require(&self, name: &str) -> Result<&str, PromptError> {
        self.get(name)
            .ok_or_else(|| PromptError::InvalidArguments(format!("missing argument `{name}`")))
    }
}

/// A rendered prompt: messages, and optionally a description of this rendering.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PromptOutput {
    description: Option<String>,
    messages: Vec<(Role, Content)>,
}

impl PromptOutput {
    /// No messages yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a text message from the user.
    pub fn user(self, text: impl Into<String>) -> Self {
        self.message(Role::User, Content::Text(text.into()))
    }

    /// Adds a text message from the assistant.
    pub fn assistant(self, text: impl Into<String>) -> Self {
        self.message(Role::Assistant, Content::Text(text.into()))
    }

    /// Adds a message with any content (an image, an embedded resource, ...; see
    /// [`ToolOutput::image_content`](crate::ToolOutput::image_content) and
    /// [`ToolOutput::embedded_text`](crate::ToolOutput::embedded_text)).
    pub fn message(mut self, role: Role, content: impl Into<Content>) -> Self {
        self.messages.push((role, content.into()));
        self
    }

    /// Sets a description of this rendering.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The messages, in order.
    pub fn messages(&self) -> &[(Role, Content)] {
        &self.messages
    }

    pub(crate) fn into_wit(self) -> wit::PromptResult {
        wit::PromptResult {
            description: self.description,
            messages: self
                .messages
                .into_iter()
                .map(|(role, content)| wit::PromptMessage { role, content })
                .collect(),
        }
    }
}

/// Why a prompt could not be rendered.
#[derive(Debug, Clone, PartialEq)]
pub enum PromptError {
    /// The plugin has no prompt of this name (the SDK returns it itself).
    UnknownPrompt(String),
    /// An argument is missing or has a bad value; the text says which.
    InvalidArguments(String),
    /// Rendering failed; the text says why.
    Failed(String),
    /// A question to the client is still unanswered; Wharf renders the prompt
    /// again once the client has answered (see [`crate::input`]).
    Pending,
}

/// Lets a prompt write `input::elicit(...)?`, as a tool does.
impl From<crate::input::InputError> for PromptError {
    fn from(error: crate::input::InputError) -> Self {
        match error {
            crate::input::InputError::Pending => Self::Pending,
            other => Self::Failed(other.to_string()),
        }
    }
}

impl PromptError {
    /// A [`PromptError::Failed`] with this message.
    pub fn failed(message: impl Into<String>) -> Self {
        Self::Failed(message.into())
    }

    pub(crate) fn into_wit(self) -> wit::PromptError {
        match self {
            Self::UnknownPrompt(name) => wit::PromptError::UnknownPrompt(name),
            Self::InvalidArguments(why) => wit::PromptError::InvalidArguments(why),
            Self::Failed(why) => wit::PromptError::Failed(why),
            // Wharf answers with the pending questions, whatever comes back.
            Self::Pending => wit::PromptError::Failed("waiting for the client's answer".into()),
        }
    }
}

impl fmt::Display for PromptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownPrompt(name) => write!(f, "unknown prompt `{name}`"),
            Self::InvalidArguments(message) => write!(f, "invalid arguments: {message}"),
            Self::Failed(message) => f.write_str(message),
            Self::Pending => f.write_str("waiting for the client's answer"),
        }
    }
}

impl std::error::Error for PromptError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn greet() -> Prompt {
        Prompt::new("greet", |args| {
            Ok(PromptOutput::new().user(format!("Say hello to {}.", args.require("name")?)))
        })
        .argument(PromptArgument::required("name"))
        .argument(PromptArgument::optional("tone"))
    }

    #[test]
    fn required_and_unknown_arguments_are_checked() {
        assert_eq!(
            greet().render(&[]),
            Err(PromptError::InvalidArguments(
                "missing argument `name`".into()
            ))
        );
        assert_eq!(
            greet().render(&[("nam".into(), "x".into())]),
            Err(PromptError::InvalidArguments(
                "prompt `greet` has no argument `nam`".into()
            ))
        );
        let output = greet().render(&[("name".into(), "Ada".into())]).unwrap();
        assert_eq!(
            output.messages(),
            &[(Role::User, Content::Text("Say hello to Ada.".into()))]
        );
    }

    #[test]
    fn without_a_completer_there_are_no_suggestions() {
        assert!(greet().suggestions("tone", "f", &[]).is_empty());
    }
}
