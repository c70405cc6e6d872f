//! What a plugin offers and what a call returns, in host terms.
//!
//! These mirror the WIT types but hold parsed JSON, so the layers above never see
//! the component-model bindings.

use serde_json::{Map, Value};

use super::bindings::wharf::plugin::types as wit;

/// A tool as a plugin describes it, with its schemas parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// The name inside the plugin (not the name clients see).
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    /// JSON Schema of the arguments; its root is an object schema.
    pub input_schema: Map<String, Value>,
    /// JSON Schema of the structured output, if any.
    pub output_schema: Option<Map<String, Value>>,
    pub hints: Option<ToolHints>,
    /// The plugin's own word on tasks (`"x-wharf-task"` in its input schema,
    /// taken out of the schema clients see): `Some(false)` makes every call a
    /// task for clients that declare the extension, `Some(true)` also refuses
    /// clients that do not.
    pub task_hint: Option<bool>,
}

/// The input-schema key that carries a tool's task hint (`"optional"` or
/// `"required"`); the SDK's `Tool::task` writes it.
pub const TASK_HINT_KEY: &str = "x-wharf-task";

/// Behaviour hints a plugin gives for a tool (MCP tool annotations).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolHints {
    pub title: Option<String>,
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    pub open_world: Option<bool>,
}

/// One item of a tool's output.
#[derive(Debug, Clone, PartialEq)]
pub enum ContentItem {
    Text(String),
    Image {
        data: Vec<u8>,
        mime_type: String,
    },
    Audio {
        data: Vec<u8>,
        mime_type: String,
    },
    ResourceLink {
        uri: String,
        name: String,
        title: Option<String>,
        description: Option<String>,
        mime_type: Option<String>,
        size: Option<u64>,
    },
    EmbeddedResource {
        uri: String,
        mime_type: Option<String>,
        body: ResourceBody,
    },
}

impl ContentItem {
    /// What the item weighs, for the output limit: text, binary data before
    /// base64, and the fields of links and embedded resources.
    pub fn size_bytes(&self) -> usize {
        let opt = |s: &Option<String>| s.as_ref().map_or(0, String::len);
        match self {
            ContentItem::Text(text) => text.len(),
            ContentItem::Image { data, mime_type } | ContentItem::Audio { data, mime_type } => {
                data.len() + mime_type.len()
            }
            ContentItem::ResourceLink {
                uri,
                name,
                title,
                description,
                mime_type,
                ..
            } => uri.len() + name.len() + opt(title) + opt(description) + opt(mime_type),
            ContentItem::EmbeddedResource {
                uri,
                mime_type,
                body,
            } => {
                uri.len()
                    + opt(mime_type)
                    + match body {
                        ResourceBody::Text(text) => text.len(),
                        ResourceBody::Blob(data) => data.len(),
                    }
            }
        }
    }
}

/// The contents of an embedded resource.
#[derive(Debug, Clone, PartialEq)]
pub enum ResourceBody {
    Text(String),
    Blob(Vec<u8>),
}

/// What a completed call produced.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutput {
    pub content: Vec<ContentItem>,
    /// Structured output, parsed from the plugin's JSON text.
    pub structured: Option<Value>,
    /// The tool ran but reports a failure the model should see.
    pub is_error: bool,
}

impl CallOutput {
    /// What the result weighs, for the output limit: the bytes of every content
    /// item (text, binary data before base64, a link's fields) plus the structured
    /// content as JSON text.
    pub fn size_bytes(&self) -> usize {
        let content: usize = self.content.iter().map(ContentItem::size_bytes).sum();
        let structured = self
            .structured
            .as_ref()
            .map_or(0, |value| value.to_string().len());
        content + structured
    }

    /// A failed call described by one line of text.
    pub fn error(message: impl Into<String>) -> Self {
        Self {
            content: vec![ContentItem::Text(message.into())],
            structured: None,
            is_error: true,
        }
    }
}

/// Why a tool description from a plugin was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    #[error("its input schema is not valid JSON: {0}")]
    InputSchemaJson(String),
    #[error("its input schema must be a JSON object with \"type\": \"object\"")]
    InputSchemaNotObject,
    #[error("its task hint (`x-wharf-task`) must be \"optional\" or \"required\", not {0}")]
    TaskHint(String),
    #[error("its output schema is not valid JSON: {0}")]
    OutputSchemaJson(String),
    #[error("its output schema must be a JSON object")]
    OutputSchemaNotObject,
}

impl ToolSpec {
    /// Parses a plugin's tool description; the schemas must be JSON objects and the
    /// input schema's root type must be `object`, as MCP requires.
    pub(crate) fn from_wit(tool: wit::Tool) -> Result<Self, SpecError> {
        let input: Value = serde_json::from_str(&tool.input_schema)
            .map_err(|e| SpecError::InputSchemaJson(e.to_string()))?;
        let mut input_schema = match input {
            Value::Object(map) if map.get("type") == Some(&Value::String("object".into())) => map,
            _ => return Err(SpecError::InputSchemaNotObject),
        };
        let task_hint = match input_schema.remove(TASK_HINT_KEY) {
            None => None,
            Some(Value::String(hint)) if hint == "optional" => Some(false),
            Some(Value::String(hint)) if hint == "required" => Some(true),
            Some(other) => return Err(SpecError::TaskHint(other.to_string())),
        };
        let output_schema = match tool.output_schema {
            None => None,
            Some(text) => match serde_json::from_str(&text) {
                Ok(Value::Object(map)) => Some(map),
                Ok(_) => return Err(SpecError::OutputSchemaNotObject),
                Err(e) => return Err(SpecError::OutputSchemaJson(e.to_string())),
            },
        };
        Ok(Self {
            name: tool.name,
            title: tool.title,
            description: tool.description,
            input_schema,
            output_schema,
            hints: tool.annotations.map(|a| ToolHints {
                title: a.title,
                read_only: a.read_only_hint,
                destructive: a.destructive_hint,
                idempotent: a.idempotent_hint,
                open_world: a.open_world_hint,
            }),
            task_hint,
        })
    }
}

impl CallOutput {
    /// Converts a plugin's result; structured content that is not valid JSON turns
    /// the call into an error rather than passing garbage to the client.
    pub(crate) fn from_wit(result: wit::CallResult) -> Self {
        let structured = match result.structured_content {
            None => None,
            Some(text) => match serde_json::from_str(&text) {
                Ok(value) => Some(value),
                Err(e) => {
                    return Self::error(format!(
                        "the plugin returned structured content that is not valid JSON: {e}"
                    ));
                }
            },
        };
        Self {
            content: result.content.into_iter().map(ContentItem::from).collect(),
            structured,
            is_error: result.is_error,
        }
    }
}

impl From<wit::Content> for ContentItem {
    fn from(content: wit::Content) -> Self {
        match content {
            wit::Content::Text(text) => Self::Text(text),
            wit::Content::Image(b) => Self::Image {
                data: b.data,
                mime_type: b.mime_type,
            },
            wit::Content::Audio(b) => Self::Audio {
                data: b.data,
                mime_type: b.mime_type,
            },
            wit::Content::ResourceLink(link) => Self::ResourceLink {
                uri: link.uri,
                name: link.name,
                title: link.title,
                description: link.description,
                mime_type: link.mime_type,
                size: link.size,
            },
            wit::Content::EmbeddedResource(resource) => Self::EmbeddedResource {
                uri: resource.uri,
                mime_type: resource.mime_type,
                body: match resource.body {
                    wit::ResourceBody::Text(text) => ResourceBody::Text(text),
                    wit::ResourceBody::Blob(data) => ResourceBody::Blob(data),
                },
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wit_tool(input: &str, output: Option<&str>) -> wit::Tool {
        wit::Tool {
            name: "t".into(),
            title: None,
            description: None,
            input_schema: input.into(),
            output_schema: output.map(Into::into),
            annotations: None,
        }
    }

    #[test]
    fn accepts_object_schemas() {
        let spec = ToolSpec::from_wit(wit_tool(
            r#"{"type":"object","properties":{"a":{"type":"string"}}}"#,
            Some(r#"{"type":"object"}"#),
        ))
        .unwrap();
        assert_eq!(spec.input_schema["properties"]["a"]["type"], "string");
        assert!(spec.output_schema.is_some());
    }

    #[test]
    fn refuses_bad_schemas() {
        assert_eq!(
            ToolSpec::from_wit(wit_tool(r#"{"type":"array"}"#, None)),
            Err(SpecError::InputSchemaNotObject)
        );
        assert!(matches!(
            ToolSpec::from_wit(wit_tool("{", None)),
            Err(SpecError::InputSchemaJson(_))
        ));
        assert_eq!(
            ToolSpec::from_wit(wit_tool(r#"{"type":"object"}"#, Some("[1]"))),
            Err(SpecError::OutputSchemaNotObject)
        );
    }

    #[test]
    fn the_task_hint_is_read_and_taken_out_of_the_schema() {
        for (hint, expected) in [("optional", Some(false)), ("required", Some(true))] {
            let schema = format!(r#"{{"type":"object","x-wharf-task":"{hint}"}}"#);
            let spec = ToolSpec::from_wit(wit_tool(&schema, None)).unwrap();
            assert_eq!(spec.task_hint, expected);
            assert!(!spec.input_schema.contains_key(TASK_HINT_KEY));
        }
        let plain = ToolSpec::from_wit(wit_tool(r#"{"type":"object"}"#, None)).unwrap();
        assert_eq!(plain.task_hint, None);
        let bad = ToolSpec::from_wit(wit_tool(r#"{"type":"object","x-wharf-task":1}"#, None));
        assert_eq!(bad, Err(SpecError::TaskHint("1".into())));
        assert_eq!(
            SpecError::TaskHint("1".into()).to_string(),
            "its task hint (`x-wharf-task`) must be \"optional\" or \"required\", not 1"
        );
    }

    #[test]
    fn size_counts_content_and_structured_output() {
        let out = CallOutput {
            content: vec![
                ContentItem::Text("hello".into()),
                ContentItem::Image {
                    data: vec![0; 10],
                    mime_type: "image/png".into(),
                },
            ],
            structured: Some(serde_json::json!({"a": 1})),
            is_error: false,
        };
        assert_eq!(out.size_bytes(), 5 + 10 + 9 + 7);
    }

    #[test]
    fn bad_structured_json_becomes_an_error() {
        let out = CallOutput::from_wit(wit::CallResult {
            content: vec![],
            structured_content: Some("{nope".into()),
            is_error: false,
        });
        assert!(out.is_error);
    }
}
