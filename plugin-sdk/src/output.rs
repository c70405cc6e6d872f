//! What a tool returns: content items, structured content and the is-error flag.

use serde::Serialize;
use serde_json::Value;

use crate::bindings::wharf::plugin::types as wit;
use crate::error::ToolError;

pub use wit::{BinaryContent, Content, EmbeddedResource, ResourceBody, ResourceLink};

/// The result of a successful tool call, as MCP's `CallToolResult`.
///
/// Build one with a constructor ([`text`](Self::text), [`structured`](Self::structured),
/// [`error`](Self::error), ...) and add more items with [`with`](Self::with).
///
/// ```
/// use wharf_sdk::{ResourceLink, ToolOutput};
///
/// let output = ToolOutput::text("Here is the chart:")
///     .with(ToolOutput::image_content(vec![0x89, b'P', b'N', b'G'], "image/png"))
///     .with(ResourceLink::new("file:///data/chart.csv", "chart.csv"));
/// assert_eq!(output.content().len(), 3);
/// assert!(!output.is_error());
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolOutput {
    content: Vec<Content>,
    structured: Option<Value>,
    is_error: bool,
}

impl ToolOutput {
    /// An output with no content at all.
    pub fn new() -> Self {
        Self::default()
    }

    /// One text item (plain text or Markdown).
    pub fn text(text: impl Into<String>) -> Self {
        Self::new().with(Content::Text(text.into()))
    }

    /// One image item: the raw bytes (Wharf base64-encodes them) and a MIME type such
    /// as `image/png`.
    pub fn image(data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Self {
        Self::new().with(Self::image_content(data, mime_type))
    }

    /// One audio item: the raw bytes and a MIME type such as `audio/wav`.
    pub fn audio(data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Self {
        Self::new().with(Self::audio_content(data, mime_type))
    }

    /// One resource-link item. [`ResourceLink::new`] makes one from a URI and a name.
    pub fn resource_link(link: ResourceLink) -> Self {
        Self::new().with(link)
    }

    /// Structured content: `value` as JSON, plus the same JSON as a text item for
    /// clients that do not read structured content.
    ///
    /// MCP wants structured content to be a JSON object, so `value` must serialize to
    /// one (a struct or a map); anything else, or a failure to serialize, is a
    /// [`ToolError::Failed`].
    pub fn structured<T: Serialize + ?Sized>(value: &T) -> Result<Self, ToolError> {
        let value = serde_json::to_value(value).map_err(|error| {
            ToolError::failed(format!("cannot serialize the structured result: {error}"))
        })?;
        if !value.is_object() {
            return Err(ToolError::failed(format!(
                "structured content must be a JSON object, not `{value}`"
            )));
        }
        Ok(Self::text(value.to_string()).with_structured(value))
    }

    /// A result that tells the model the tool ran but failed in a way it may correct
    /// (a bad value, a failed lookup): one text item and the is-error flag.
    pub fn error(message: impl Into<String>) -> Self {
        Self::text(message).as_error()
    }

    /// An image [`Content`] item, to add to an output with [`with`](Self::with).
    pub fn image_content(data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Content {
        Content::Image(BinaryContent {
            data: data.into(),
            mime_type: mime_type.into(),
        })
    }

    /// An audio [`Content`] item, to add to an output with [`with`](Self::with).
    pub fn audio_content(data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Content {
        Content::Audio(BinaryContent {
            data: data.into(),
            mime_type: mime_type.into(),
        })
    }

    /// A text resource embedded in the result (for example a document or JSON),
    /// to add with [`with`](Self::with).
    pub fn embedded_text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Content {
        Content::EmbeddedResource(EmbeddedResource {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            body: ResourceBody::Text(text.into()),
        })
    }

    /// A binary resource embedded in the result (Wharf base64-encodes the bytes),
    /// to add with [`with`](Self::with).
    pub fn embedded_blob(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        data: impl Into<Vec<u8>>,
    ) -> Content {
        Content::EmbeddedResource(EmbeddedResource {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            body: ResourceBody::Blob(data.into()),
        })
    }

    /// Adds one content item after those already there.
    pub fn with(mut self, content: impl Into<Content>) -> Self {
        self.content.push(content.into());
        self
    }

    /// Sets the structured content to `value` as it is, without adding a text item.
    /// Prefer [`structured`](Self::structured), which checks the value and renders it.
    pub fn with_structured(mut self, value: Value) -> Self {
        self.structured = Some(value);
        self
    }

    /// Sets the is-error flag: the tool ran but failed, and the model should see why.
    pub fn as_error(mut self) -> Self {
        self.is_error = true;
        self
    }

    /// The content items, in order.
    pub fn content(&self) -> &[Content] {
        &self.content
    }

    /// The structured content, if any.
    pub fn structured_content(&self) -> Option<&Value> {
        self.structured.as_ref()
    }

    /// Whether the is-error flag is set.
    pub fn is_error(&self) -> bool {
        self.is_error
    }

    /// The text items joined by newlines: handy in tests and messages.
    pub fn text_summary(&self) -> String {
        let texts: Vec<&str> = self
            .content
            .iter()
            .filter_map(|item| match item {
                Content::Text(text) => Some(text.as_str()),
                _ => None,
            })
            .collect();
        texts.join("\n")
    }

    /// The WIT `call-result` that carries this output to Wharf.
    pub(crate) fn into_call_result(self) -> wit::CallResult {
        wit::CallResult {
            content: self.content,
            structured_content: self.structured.map(|value| value.to_string()),
            is_error: self.is_error,
        }
    }
}

impl From<String> for Content {
    fn from(text: String) -> Self {
        Content::Text(text)
    }
}

impl From<&str> for Content {
    fn from(text: &str) -> Self {
        Content::Text(text.to_owned())
    }
}

impl From<ResourceLink> for Content {
    fn from(link: ResourceLink) -> Self {
        Content::ResourceLink(link)
    }
}

impl ResourceLink {
    /// A link to `uri` called `name`, with no other details; set the public fields
    /// (`title`, `description`, `mime_type`, `size`) for more.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[derive(Serialize)]
    struct Sum {
        result: f64,
    }

    #[test]
    fn text_is_one_item() {
        let output = ToolOutput::text("hi");
        assert_eq!(output.content(), &[Content::Text("hi".into())]);
        assert_eq!(output.structured_content(), None);
        assert!(!output.is_error());
        assert_eq!(
            output.into_call_result(),
            wit::CallResult {
                content: vec![Content::Text("hi".into())],
                structured_content: None,
                is_error: false,
            }
        );
    }

    #[test]
    fn structured_carries_json_and_a_text_rendering() {
        let output = ToolOutput::structured(&Sum { result: 3.5 }).unwrap();
        assert_eq!(output.structured_content(), Some(&json!({"result": 3.5})));
        assert_eq!(output.text_summary(), r#"{"result":3.5}"#);
        let result = output.into_call_result();
        assert_eq!(
            result.structured_content.as_deref(),
            Some(r#"{"result":3.5}"#)
        );
        assert!(!result.is_error);
    }

    #[test]
    fn structured_must_be_an_object() {
        assert_eq!(
            ToolOutput::structured(&42),
            Err(ToolError::failed(
                "structured content must be a JSON object, not `42`"
            ))
        );
    }

    #[test]
    fn error_sets_the_flag() {
        let result = ToolOutput::error("b must not be zero").into_call_result();
        assert!(result.is_error);
        assert_eq!(
            result.content,
            vec![Content::Text("b must not be zero".into())]
        );
    }

    #[test]
    fn binary_and_links() {
        let output = ToolOutput::image(vec![1, 2], "image/png")
            .with(ToolOutput::audio_content([3u8], "audio/wav"))
            .with(ResourceLink {
                size: Some(10),
                ..ResourceLink::new("file:///a.txt", "a.txt")
            });
        assert_eq!(
            output.content(),
            &[
                Content::Image(BinaryContent {
                    data: vec![1, 2],
                    mime_type: "image/png".into()
                }),
                Content::Audio(BinaryContent {
                    data: vec![3],
                    mime_type: "audio/wav".into()
                }),
                Content::ResourceLink(ResourceLink {
                    uri: "file:///a.txt".into(),
                    name: "a.txt".into(),
                    title: None,
                    description: None,
                    mime_type: None,
                    size: Some(10),
                }),
            ]
        );
        assert_eq!(
            ToolOutput::audio(vec![9], "audio/ogg").content(),
            &[Content::Audio(BinaryContent {
                data: vec![9],
                mime_type: "audio/ogg".into()
            })]
        );
    }
}
