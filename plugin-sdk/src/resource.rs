//! Resources: data a client reads by URI, at a fixed URI or described by a
//! URI template.

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use wharf_uri_template::UriTemplate;

use crate::bindings::exports::wharf::plugin::resources as wit;
use crate::output::ResourceBody;

type Text = Cow<'static, str>;
type Read = Box<dyn Fn() -> Result<ResourceOutput, ResourceError>>;
type ReadMatch = Box<dyn Fn(&TemplateVariables) -> Result<ResourceOutput, ResourceError>>;
type Complete = Box<dyn Fn(&str, &str, &TemplateVariables) -> Vec<String>>;

/// A resource at one URI, read by a closure.
///
/// ```
/// use std::time::Duration;
/// use wharf_sdk::{Resource, ResourceOutput};
///
/// let motd = Resource::new("motd://today", "motd", || {
///     Ok(ResourceOutput::text("Ship it."))
/// })
/// .mime_type("text/plain")
/// .description("The message of the day.")
/// .poll_every(Duration::from_secs(60));
/// let read = motd.read().unwrap();
/// assert_eq!(read.contents()[0].uri, None); // the resource's own URI
/// ```
pub struct Resource {
    uri: Text,
    name: Text,
    title: Option<Text>,
    description: Option<Text>,
    mime_type: Option<Text>,
    size: Option<u64>,
    poll: Option<Duration>,
    read: Read,
}

impl fmt::Debug for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resource")
            .field("uri", &self.uri)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Resource {
    /// A resource at `uri` (absolute, with a scheme: `notes://today`) called
    /// `name`, whose contents `read` returns.
    pub fn new<F>(uri: impl Into<Text>, name: impl Into<Text>, read: F) -> Self
    where
        F: Fn() -> Result<ResourceOutput, ResourceError> + 'static,
    {
        Self {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
            poll: None,
            read: Box::new(read),
        }
    }

    /// Sets the human-readable title.
    pub fn title(mut self, title: impl Into<Text>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets what the resource is.
    pub fn description(mut self, description: impl Into<Text>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets its MIME type, also the default of what [`read`](Self::read) returns.
    pub fn mime_type(mut self, mime_type: impl Into<Text>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Sets its size in bytes, if known without reading it.
    pub fn size(mut self, size: u64) -> Self {
        self.size = Some(size);
        self
    }

    /// Says the contents can change while the plugin stays the same (it reads a
    /// granted directory or a web API): Wharf re-reads it this often while a
    /// client subscribes to it, and tells the client when it changed.
    pub fn poll_every(mut self, interval: Duration) -> Self {
        self.poll = Some(interval);
        self
    }

    /// Its URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Reads it.
    pub fn read(&self) -> Result<ResourceOutput, ResourceError> {
        (self.read)()
    }

    pub(crate) fn to_wit(&self) -> wit::Resource {
        wit::Resource {
            uri: self.uri.to_string(),
            name: self.name.to_string(),
            title: self.title.as_deref().map(str::to_owned),
            description: self.description.as_deref().map(str::to_owned),
            mime_type: self.mime_type.as_deref().map(str::to_owned),
            size: self.size,
            poll_ms: self
                .poll
                .map(|poll| poll.as_millis().min(u32::MAX.into()) as u32),
        }
    }

    pub(crate) fn default_mime_type(&self) -> Option<&str> {
        self.mime_type.as_deref()
    }
}

/// A family of resources described by an RFC 6570 URI template, such as
/// `notes://{day}`: a read of a matching URI gets its variables.
///
/// ```
/// use wharf_sdk::{ResourceError, ResourceOutput, ResourceTemplate};
///
/// let notes = ResourceTemplate::new("notes://{day}", "note", |vars| {
///     let day = vars.require("day")?;
///     if day == "never" {
///         return Err(ResourceError::not_found(format!("no note for {day}")));
///     }
///     Ok(ResourceOutput::text(format!("Notes of {day}")))
/// })
/// .mime_type("text/markdown")
/// .complete(|variable, value, _| match variable {
///     "day" => ["today", "tomorrow"].iter().filter(|d| d.starts_with(value)).map(|d| d.to_string()).collect(),
///     _ => vec![],
/// });
/// assert!(notes.matches("notes://today").is_some());
/// assert_eq!(notes.suggestions("day", "tom", &[]), ["tomorrow"]);
/// ```
pub struct ResourceTemplate {
    template: UriTemplate,
    name: Text,
    title: Option<Text>,
    description: Option<Text>,
    mime_type: Option<Text>,
    read: ReadMatch,
    complete: Option<Complete>,
}

impl fmt::Debug for ResourceTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceTemplate")
            .field("template", &self.template.as_str())
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl ResourceTemplate {
    /// Resources matching `template`, called `name`, read by `read` from the
    /// template's variables.
    ///
    /// # Panics
    ///
    /// If `template` is not a valid URI template: a typo in a constant, found
    /// by the plugin's first test.
    pub fn new<F>(template: &str, name: impl Into<Text>, read: F) -> Self
    where
        F: Fn(&TemplateVariables) -> Result<ResourceOutput, ResourceError> + 'static,
    {
        let parsed = UriTemplate::parse(template)
            .unwrap_or_else(|error| panic!("invalid URI template `{template}`: {error}"));
        Self {
            template: parsed,
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            read: Box::new(read),
            complete: None,
        }
    }

    /// Sets the human-readable title.
    pub fn title(mut self, title: impl Into<Text>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets what the resources are.
    pub fn description(mut self, description: impl Into<Text>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the MIME type they share, also the default of what a read returns.
    pub fn mime_type(mut self, mime_type: impl Into<Text>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Sets how variables are completed: `complete(variable, value so far,
    /// variables already chosen)` returns suggestions, best first.
    pub fn complete<F>(mut self, complete: F) -> Self
    where
        F: Fn(&str, &str, &TemplateVariables) -> Vec<String> + 'static,
    {
        self.complete = Some(Box::new(complete));
        self
    }

    /// The template as written.
    pub fn template(&self) -> &str {
        self.template.as_str()
    }

    /// The variables of `uri`, if it matches this template.
    pub fn matches(&self, uri: &str) -> Option<TemplateVariables> {
        self.template.matches(uri).map(TemplateVariables)
    }

    /// Reads the resource whose URI gave `variables`.
    pub fn read(&self, variables: &TemplateVariables) -> Result<ResourceOutput, ResourceError> {
        (self.read)(variables)
    }

    /// Suggestions for `variable` whose value so far is `value`.
    pub fn suggestions(
        &self,
        variable: &str,
        value: &str,
        context: &[(String, String)],
    ) -> Vec<String> {
        match &self.complete {
            Some(complete) => complete(variable, value, &TemplateVariables(context.to_vec())),
            None => Vec::new(),
        }
    }

    pub(crate) fn to_wit(&self) -> wit::ResourceTemplate {
        wit::ResourceTemplate {
            uri_template: self.template.as_str().to_owned(),
            name: self.name.to_string(),
            title: self.title.as_deref().map(str::to_owned),
            description: self.description.as_deref().map(str::to_owned),
            mime_type: self.mime_type.as_deref().map(str::to_owned),
        }
    }

    pub(crate) fn default_mime_type(&self) -> Option<&str> {
        self.mime_type.as_deref()
    }
}

/// The variables a URI gave its template, percent-decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateVariables(Vec<(String, String)>);

impl TemplateVariables {
    /// The value of `name`, if the URI had one.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, value)| value.as_str())
    }

    /// The value of `name`, or a [`ResourceError::NotFound`] naming it.
    pub fn require(&self, name: &str) -> Result<&str, ResourceError> {
        self.get(name)
            .ok_or_else(|| ResourceError::NotFound(format!("the URI gives no `{name}`")))
    }

    /// Every variable, in template order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }
}

/// One piece of what a read returns.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourcePiece {
    /// Its URI; `None` for the URI that was read.
    pub uri: Option<String>,
    /// Its MIME type; `None` for the resource's or template's own.
    pub mime_type: Option<String>,
    /// The contents.
    pub body: ResourceBody,
}

/// What reading a resource returns: usually one piece, the resource itself;
/// a folder-like resource may return several, each with its own URI.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ResourceOutput {
    contents: Vec<ResourcePiece>,
}

impl ResourceOutput {
    /// Text (UTF-8) at the URI that was read.
    pub fn text(text: impl Into<String>) -> Self {
        Self::body(ResourceBody::Text(text.into()))
    }

    /// Bytes at the URI that was read (Wharf base64-encodes them).
    pub fn blob(data: impl Into<Vec<u8>>) -> Self {
        Self::body(ResourceBody::Blob(data.into()))
    }

    /// Structured data as JSON text, with the MIME type `application/json`.
    pub fn json(value: &impl serde::Serialize) -> Result<Self, ResourceError> {
        let text = serde_json::to_string(value)
            .map_err(|e| ResourceError::failed(format!("serialising the resource: {e}")))?;
        Ok(Self::text(text).with_mime_type("application/json"))
    }

    fn body(body: ResourceBody) -> Self {
        Self {
            contents: vec![ResourcePiece {
                uri: None,
                mime_type: None,
                body,
            }],
        }
    }

    /// Sets the MIME type of the last piece.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        if let Some(last) = self.contents.last_mut() {
            last.mime_type = Some(mime_type.into());
        }
        self
    }

    /// Adds a piece at another URI.
    pub fn and(mut self, uri: impl Into<String>, body: ResourceBody) -> Self {
        self.contents.push(ResourcePiece {
            uri: Some(uri.into()),
            mime_type: None,
            body,
        });
        self
    }

    /// The pieces, in order.
    pub fn contents(&self) -> &[ResourcePiece] {
        &self.contents
    }

    pub(crate) fn into_wit(self, uri: &str, mime_type: Option<&str>) -> Vec<wit::ResourceContents> {
        self.contents
            .into_iter()
            .map(|piece| wit::ResourceContents {
                mime_type: piece.mime_type.or_else(|| {
                    piece
                        .uri
                        .is_none()
                        .then(|| mime_type.map(str::to_owned))
                        .flatten()
                }),
                uri: piece.uri.unwrap_or_else(|| uri.to_owned()),
                body: piece.body,
            })
            .collect()
    }
}

/// Why a resource could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceError {
    /// Nothing is at this URI (the client gets "resource not found").
    NotFound(String),
    /// The read failed; the text says why.
    Failed(String),
    /// A question to the client is still unanswered; Wharf reads the resource
    /// again once the client has answered (see [`crate::input`]).
    Pending,
}

/// Lets a resource write `input::elicit(...)?`, as a tool does.
impl From<crate::input::InputError> for ResourceError {
    fn from(error: crate::input::InputError) -> Self {
        match error {
            crate::input::InputError::Pending => Self::Pending,
            other => Self::Failed(other.to_string()),
        }
    }
}

impl ResourceError {
    /// A [`ResourceError::NotFound`] with this message.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::NotFound(message.into())
    }

    /// A [`ResourceError::Failed`] with this message.
    pub fn failed(message: impl Into<String>) -> Self {
        Self::Failed(message.into())
    }

    pub(crate) fn into_wit(self) -> wit::ResourceError {
        match self {
            Self::NotFound(why) => wit::ResourceError::NotFound(why),
            Self::Failed(why) => wit::ResourceError::Failed(why),
            // Wharf answers with the pending questions, whatever comes back.
            Self::Pending => wit::ResourceError::Failed("waiting for the client's answer".into()),
        }
    }
}

impl fmt::Display for ResourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotFound(why) => write!(f, "not found: {why}"),
            Self::Failed(why) => write!(f, "failed: {why}"),
            Self::Pending => f.write_str("waiting for the client's answer"),
        }
    }
}

impl std::error::Error for ResourceError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_default_to_the_read_uri_and_mime_type() {
        let output = ResourceOutput::text("a").and("x://other", ResourceBody::Blob(vec![1]));
        let wit = output.into_wit("x://read", Some("text/plain"));
        assert_eq!(
            wit,
            [
                wit::ResourceContents {
                    uri: "x://read".into(),
                    mime_type: Some("text/plain".into()),
                    body: ResourceBody::Text("a".into()),
                },
                wit::ResourceContents {
                    uri: "x://other".into(),
                    mime_type: None,
                    body: ResourceBody::Blob(vec![1]),
                },
            ]
        );
    }

    #[test]
    fn json_output_names_its_type() {
        let output = ResourceOutput::json(&serde_json::json!({"a": 1})).unwrap();
        let wit = output.into_wit("x://y", Some("text/plain"));
        assert_eq!(wit[0].mime_type.as_deref(), Some("application/json"));
        assert_eq!(wit[0].body, ResourceBody::Text(r#"{"a":1}"#.into()));
    }

    #[test]
    fn missing_variables_are_named() {
        let vars = TemplateVariables(vec![("a".into(), "1".into())]);
        assert_eq!(vars.require("a"), Ok("1"));
        assert_eq!(
            vars.require("b"),
            Err(ResourceError::NotFound("the URI gives no `b`".into()))
        );
    }
}
