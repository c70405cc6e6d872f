//! Prompts as a plugin describes and renders them, in host terms.

use super::bindings::exports::wharf::plugin::prompts as wit;
use super::types::ContentItem;

/// A prompt a plugin offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptSpec {
    /// The name inside the plugin (not the name clients see).
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub arguments: Vec<PromptArgumentSpec>,
}

/// One (string) argument of a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptArgumentSpec {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub required: bool,
}

/// Who a prompt message speaks as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

/// A rendered prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderedPrompt {
    pub description: Option<String>,
    pub messages: Vec<(Role, ContentItem)>,
}

impl From<wit::Prompt> for PromptSpec {
    fn from(prompt: wit::Prompt) -> Self {
        Self {
            name: prompt.name,
            title: prompt.title,
            description: prompt.description,
            arguments: prompt
                .arguments
                .into_iter()
                .map(|a| PromptArgumentSpec {
                    name: a.name,
                    title: a.title,
                    description: a.description,
                    required: a.required,
                })
                .collect(),
        }
    }
}

impl From<wit::PromptResult> for RenderedPrompt {
    fn from(result: wit::PromptResult) -> Self {
        Self {
            description: result.description,
            messages: result
                .messages
                .into_iter()
                .map(|message| {
                    let role = match message.role {
                        wit::Role::User => Role::User,
                        wit::Role::Assistant => Role::Assistant,
                    };
                    (role, ContentItem::from(message.content))
                })
                .collect(),
        }
    }
}

impl PromptSpec {
    /// Why `arguments` cannot render this prompt: an argument it does not
    /// declare, or a required one that is missing.
    pub fn check_arguments<'a>(
        &self,
        mut names: impl Iterator<Item = &'a str>,
    ) -> Result<(), String> {
        let given: Vec<&str> = names.by_ref().collect();
        if let Some(unknown) = given
            .iter()
            .find(|name| !self.arguments.iter().any(|a| a.name == **name))
        {
            return Err(format!(
                "prompt `{}` has no argument `{unknown}`",
                self.name
            ));
        }
        let missing: Vec<&str> = self
            .arguments
            .iter()
            .filter(|a| a.required && !given.contains(&a.name.as_str()))
            .map(|a| a.name.as_str())
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "prompt `{}` needs the argument{} `{}`",
                self.name,
                if missing.len() > 1 { "s" } else { "" },
                missing.join("`, `")
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> PromptSpec {
        let argument = |name: &str, required| PromptArgumentSpec {
            name: name.into(),
            title: None,
            description: None,
            required,
        };
        PromptSpec {
            name: "summarize".into(),
            title: None,
            description: None,
            arguments: vec![
                argument("text", true),
                argument("style", true),
                argument("length", false),
            ],
        }
    }

    #[test]
    fn arguments_are_checked_by_name() {
        assert_eq!(
            spec().check_arguments(["text", "style"].into_iter()),
            Ok(())
        );
        assert_eq!(
            spec().check_arguments(["text", "colour"].into_iter()),
            Err("prompt `summarize` has no argument `colour`".into())
        );
        assert_eq!(
            spec().check_arguments(["length"].into_iter()),
            Err("prompt `summarize` needs the arguments `text`, `style`".into())
        );
        assert_eq!(
            spec().check_arguments(["text"].into_iter()),
            Err("prompt `summarize` needs the argument `style`".into())
        );
    }
}
