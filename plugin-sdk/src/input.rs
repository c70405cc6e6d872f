//! Asking the client in the middle of a call: elicitation (a form or a URL for the
//! user), sampling (a completion from the client's model) and roots.
//!
//! Each question has a key, unique within the call. Over a 2026-07-28 connection
//! Wharf cannot wait for the answer: the first time, the answer is
//! [`InputError::Pending`], which `?` turns into an early return; Wharf sends the
//! client the pending questions, and when the client calls again with the answers
//! the tool runs again from the start, and the same questions (same keys) now
//! return their answers at once. Over a legacy connection Wharf asks the client
//! directly and the call simply waits. Either way, write the tool as if the answer
//! came back immediately:
//!
//! ```
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use wharf_sdk::input::{self, Elicited};
//! use wharf_sdk::{Tool, ToolOutput};
//!
//! /// What the user is asked.
//! #[derive(Deserialize, JsonSchema)]
//! struct Login {
//!     /// Your GitHub user name.
//!     name: String,
//! }
//!
//! let tool = Tool::new("greet", |()| {
//!     match input::elicit::<Login>("login", "Who are you?")? {
//!         Elicited::Accepted(login) => Ok(ToolOutput::text(format!("Hello, {}!", login.name))),
//!         Elicited::Declined | Elicited::Cancelled => Ok(ToolOutput::text("Hello, stranger!")),
//!     }
//! });
//! # let _ = tool;
//! ```
//!
//! A question whose capability the client did not declare is
//! [`InputError::Unsupported`]: with `?` the call fails and the client is told
//! which capability is missing (-32021); a tool may instead match it and carry on.
//! Outside WebAssembly (native unit tests) every question is unsupported.

use std::fmt;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

#[cfg(target_arch = "wasm32")]
use crate::bindings::wharf::plugin::host as wit;

/// Why a question has no answer (yet).
#[derive(Debug, Clone, PartialEq)]
pub enum InputError {
    /// The answer comes in the client's next round; return now (`?` does).
    Pending,
    /// The client did not declare this capability (`elicitation`, `sampling`, `roots`).
    Unsupported(&'static str),
    /// The question was malformed, the client failed, or the answer did not fit.
    Failed(String),
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Pending => f.write_str("waiting for the client's answer"),
            Self::Unsupported(capability) => {
                write!(f, "the client does not support {capability}")
            }
            Self::Failed(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for InputError {}

/// The user's answer to an elicitation.
#[derive(Debug, Clone, PartialEq)]
pub enum Elicited<T> {
    /// The user submitted the form (or completed the URL flow).
    Accepted(T),
    /// The user said no.
    Declined,
    /// The user dismissed the question without choosing.
    Cancelled,
}

/// One of the client's roots (`roots/list`).
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    /// A human-readable name, if the client gave one.
    pub name: Option<String>,
}

/// A completion from the client's model (`sampling/createMessage`).
#[derive(Debug, Clone, PartialEq)]
pub struct Sampled {
    /// The text of the message, if it is text.
    pub text: Option<String>,
    /// The model that produced it.
    pub model: String,
    /// The whole `CreateMessageResult`.
    pub result: Value,
}

/// The WIT question, before it crosses the boundary (natively only its
/// capability is read).
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
enum Question {
    Form { message: String, schema: Value },
    Url { message: String, url: String },
    Sampling(Value),
    Roots,
}

impl Question {
    fn capability(&self) -> &'static str {
        match self {
            Question::Form { .. } | Question::Url { .. } => "elicitation",
            Question::Sampling(_) => "sampling",
            Question::Roots => "roots",
        }
    }
}

/// Asks the host; the answer's JSON.
fn ask(key: &str, question: Question) -> Result<Value, InputError> {
    let capability = question.capability();
    #[cfg(target_arch = "wasm32")]
    {
        let request = match question {
            Question::Form { message, schema } => wit::InputRequest::ElicitForm(wit::ElicitForm {
                message,
                requested_schema: schema.to_string(),
            }),
            Question::Url { message, url } => {
                wit::InputRequest::ElicitUrl(wit::ElicitUrl { message, url })
            }
            Question::Sampling(params) => wit::InputRequest::Sampling(params.to_string()),
            Question::Roots => wit::InputRequest::ListRoots,
        };
        match wit::ask(key, &request) {
            wit::InputOutcome::Answered(json) => serde_json::from_str(&json)
                .map_err(|e| InputError::Failed(format!("the answer is not JSON: {e}"))),
            wit::InputOutcome::Pending => Err(InputError::Pending),
            wit::InputOutcome::Unsupported => Err(InputError::Unsupported(capability)),
            wit::InputOutcome::Failed(why) => Err(InputError::Failed(why)),
        }
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        let _ = (key, question);
        Err(InputError::Unsupported(capability))
    }
}

/// Reads an `ElicitResult`, deserialising accepted content into `T`.
fn elicited<T: DeserializeOwned>(answer: Value) -> Result<Elicited<T>, InputError> {
    match answer.get("action").and_then(Value::as_str) {
        Some("accept") => {
            let content = answer.get("content").cloned().unwrap_or(json!({}));
            serde_json::from_value(content)
                .map(Elicited::Accepted)
                .map_err(|e| InputError::Failed(format!("the user's answer does not fit: {e}")))
        }
        Some("decline") => Ok(Elicited::Declined),
        Some("cancel") => Ok(Elicited::Cancelled),
        _ => Err(InputError::Failed(format!(
            "the client's answer is not an ElicitResult: {answer}"
        ))),
    }
}

/// Asks the user to fill in a form for `T`: its JSON Schema (from `JsonSchema`,
/// doc comments as descriptions) is the requested schema. MCP allows flat objects
/// of strings, numbers, integers, booleans and string enums.
pub fn elicit<T: DeserializeOwned + JsonSchema + 'static>(
    key: &str,
    message: &str,
) -> Result<Elicited<T>, InputError> {
    elicit_with_schema(key, message, crate::schema::input_schema::<T>()).and_then(|answer| {
        match answer {
            Elicited::Accepted(value) => serde_json::from_value(value)
                .map(Elicited::Accepted)
                .map_err(|e| InputError::Failed(format!("the user's answer does not fit: {e}"))),
            Elicited::Declined => Ok(Elicited::Declined),
            Elicited::Cancelled => Ok(Elicited::Cancelled),
        }
    })
}

/// Asks the user to fill in a form with a hand-written `requested_schema`
/// (defaults, titled enums, ...); accepted content comes back as JSON.
pub fn elicit_with_schema(
    key: &str,
    message: &str,
    requested_schema: Value,
) -> Result<Elicited<Value>, InputError> {
    let question = Question::Form {
        message: message.to_string(),
        schema: requested_schema,
    };
    elicited(ask(key, question)?)
}

/// Sends the user to `url` (sign-in, payment: anything that must not pass
/// through the client); `Accepted(())` once they say they are done.
pub fn elicit_url(key: &str, message: &str, url: &str) -> Result<Elicited<()>, InputError> {
    let question = Question::Url {
        message: message.to_string(),
        url: url.to_string(),
    };
    match elicited::<Value>(ask(key, question)?)? {
        Elicited::Accepted(_) => Ok(Elicited::Accepted(())),
        Elicited::Declined => Ok(Elicited::Declined),
        Elicited::Cancelled => Ok(Elicited::Cancelled),
    }
}

/// Asks the client's model; `params` are `sampling/createMessage` params
/// (`messages`, `maxTokens`, optionally `systemPrompt`, `temperature`, ...).
pub fn sample(key: &str, params: Value) -> Result<Sampled, InputError> {
    let result = ask(key, Question::Sampling(params))?;
    let model = result
        .get("model")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            InputError::Failed(format!(
                "the client's answer is not a CreateMessageResult: {result}"
            ))
        })?
        .to_string();
    let text = result
        .pointer("/content/text")
        .and_then(Value::as_str)
        .map(String::from);
    Ok(Sampled {
        text,
        model,
        result,
    })
}

/// [`sample`] with one user message and a token limit.
pub fn sample_text(key: &str, prompt: &str, max_tokens: u32) -> Result<Sampled, InputError> {
    sample(
        key,
        json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
            "maxTokens": max_tokens,
        }),
    )
}

/// The client's roots (`roots/list`).
pub fn list_roots(key: &str) -> Result<Vec<Root>, InputError> {
    let result = ask(key, Question::Roots)?;
    let roots = result.get("roots").cloned().unwrap_or(Value::Null);
    serde_json::from_value(roots).map_err(|e| {
        InputError::Failed(format!("the client's answer is not a ListRootsResult: {e}"))
    })
}

/// The state this call kept with [`set_state`] in an earlier round, if any.
pub fn state() -> Option<String> {
    #[cfg(target_arch = "wasm32")]
    return wit::request_state();
    #[cfg(not(target_arch = "wasm32"))]
    None
}

/// Keeps `state` (at most 16 KiB) for the call's next round; Wharf signs it, so
/// [`state`] returns exactly this. A state different from the one the round
/// started with makes the client call again even when no question is pending.
pub fn set_state(state: &str) {
    #[cfg(target_arch = "wasm32")]
    wit::set_request_state(state);
    #[cfg(not(target_arch = "wasm32"))]
    let _ = state;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, serde::Deserialize, JsonSchema)]
    struct Login {
        name: String,
    }

    #[test]
    fn natively_every_question_is_unsupported() {
        assert_eq!(
            elicit::<Login>("k", "Who?"),
            Err(InputError::Unsupported("elicitation"))
        );
        assert_eq!(
            sample_text("k", "Hi", 10),
            Err(InputError::Unsupported("sampling"))
        );
        assert_eq!(list_roots("k"), Err(InputError::Unsupported("roots")));
        assert_eq!(state(), None);
    }

    #[test]
    fn elicit_results_are_read() {
        let accepted = json!({"action": "accept", "content": {"name": "Ada"}});
        assert_eq!(
            elicited::<Login>(accepted),
            Ok(Elicited::Accepted(Login { name: "Ada".into() }))
        );
        assert_eq!(
            elicited::<Login>(json!({"action": "decline"})),
            Ok(Elicited::Declined)
        );
        assert_eq!(
            elicited::<Login>(json!({"action": "cancel"})),
            Ok(Elicited::Cancelled)
        );
        assert_eq!(
            elicited::<Login>(json!({"action": "accept", "content": {"nom": "x"}})),
            Err(InputError::Failed(
                "the user's answer does not fit: missing field `name`".into()
            ))
        );
        assert_eq!(
            elicited::<Login>(json!({"role": "assistant"})),
            Err(InputError::Failed(
                r#"the client's answer is not an ElicitResult: {"role":"assistant"}"#.into()
            ))
        );
    }

    #[test]
    fn errors_say_what_is_missing() {
        assert_eq!(
            InputError::Unsupported("sampling").to_string(),
            "the client does not support sampling"
        );
    }
}
