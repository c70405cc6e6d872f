//! Resources as a plugin describes and reads them, in host terms.

use std::time::Duration;

use wharf_uri_template::UriTemplate;

use super::bindings::exports::wharf::plugin::resources as wit;
use super::types::ResourceBody;

/// Shortest re-read interval a plugin may ask for: polling is work done for
/// subscribers, and a plugin asking for 1 ms would keep a core busy.
pub const MIN_POLL: Duration = Duration::from_millis(100);

/// A resource a plugin lists, with the URI in the plugin's own form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceSpec {
    pub uri: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: Option<String>,
    pub size: Option<u64>,
    /// How often to re-read it for subscribers; `None` for a resource that only
    /// changes with the plugin.
    pub poll: Option<Duration>,
}

/// A family of resources described by a URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateSpec {
    pub template: UriTemplate,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: Option<String>,
}

/// One piece of what a read returned.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceContent {
    /// In the plugin's own form.
    pub uri: String,
    pub mime_type: Option<String>,
    pub body: ResourceBody,
}

impl ResourceContent {
    /// What it weighs, for the output limit.
    pub fn size_bytes(&self) -> usize {
        self.uri.len()
            + self.mime_type.as_ref().map_or(0, String::len)
            + match &self.body {
                ResourceBody::Text(text) => text.len(),
                ResourceBody::Blob(data) => data.len(),
            }
    }
}

/// Why a listed resource or template was left out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResourceSpecError {
    #[error("`{0}` is not an absolute URI (it needs a scheme, such as `notes://`)")]
    NotAbsolute(String),
    #[error("the URI template `{template}` is invalid: {reason}")]
    BadTemplate { template: String, reason: String },
    #[error("its name is empty")]
    EmptyName,
}

impl ResourceSpec {
    pub(super) fn from_wit(resource: wit::Resource) -> Result<Self, ResourceSpecError> {
        check_absolute(&resource.uri)?;
        if resource.name.is_empty() {
            return Err(ResourceSpecError::EmptyName);
        }
        Ok(Self {
            uri: resource.uri,
            name: resource.name,
            title: resource.title,
            description: resource.description,
            mime_type: resource.mime_type,
            size: resource.size,
            poll: resource
                .poll_ms
                .map(|ms| Duration::from_millis(ms.into()).max(MIN_POLL)),
        })
    }
}

impl TemplateSpec {
    pub(super) fn from_wit(template: wit::ResourceTemplate) -> Result<Self, ResourceSpecError> {
        check_absolute(&template.uri_template)?;
        if template.name.is_empty() {
            return Err(ResourceSpecError::EmptyName);
        }
        let parsed = UriTemplate::parse(&template.uri_template).map_err(|error| {
            ResourceSpecError::BadTemplate {
                template: template.uri_template.clone(),
                reason: error.to_string(),
            }
        })?;
        Ok(Self {
            template: parsed,
            name: template.name,
            title: template.title,
            description: template.description,
            mime_type: template.mime_type,
        })
    }
}

impl From<wit::ResourceContents> for ResourceContent {
    fn from(contents: wit::ResourceContents) -> Self {
        Self {
            uri: contents.uri,
            mime_type: contents.mime_type,
            body: match contents.body {
                wit::ResourceBody::Text(text) => ResourceBody::Text(text),
                wit::ResourceBody::Blob(data) => ResourceBody::Blob(data),
            },
        }
    }
}

/// The URI's scheme, if it starts with one (RFC 3986: a letter, then letters,
/// digits, `+`, `-` or `.`, then `:`).
pub fn scheme(uri: &str) -> Option<&str> {
    let (scheme, _) = uri.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic() && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)))
        .then_some(scheme)
}

fn check_absolute(uri: &str) -> Result<(), ResourceSpecError> {
    match scheme(uri) {
        Some(_) => Ok(()),
        None => Err(ResourceSpecError::NotAbsolute(uri.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resource(uri: &str, poll_ms: Option<u32>) -> wit::Resource {
        wit::Resource {
            uri: uri.into(),
            name: "n".into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
            poll_ms,
        }
    }

    #[test]
    fn schemes_follow_rfc_3986() {
        assert_eq!(scheme("notes://today"), Some("notes"));
        assert_eq!(scheme("a+b.c-d:x"), Some("a+b.c-d"));
        assert_eq!(scheme("2fa://x"), None);
        assert_eq!(scheme("no scheme"), None);
        assert_eq!(scheme("/path:x"), None);
    }

    #[test]
    fn relative_uris_and_bad_templates_are_refused() {
        assert_eq!(
            ResourceSpec::from_wit(resource("today.txt", None)).unwrap_err(),
            ResourceSpecError::NotAbsolute("today.txt".into())
        );
        let error = TemplateSpec::from_wit(wit::ResourceTemplate {
            uri_template: "notes://{day".into(),
            name: "day".into(),
            title: None,
            description: None,
            mime_type: None,
        })
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "the URI template `notes://{day` is invalid: `{` is never closed (at byte 8)"
        );
    }

    #[test]
    fn polling_has_a_floor() {
        let spec = ResourceSpec::from_wit(resource("x://y", Some(1))).unwrap();
        assert_eq!(spec.poll, Some(MIN_POLL));
        let spec = ResourceSpec::from_wit(resource("x://y", Some(5000))).unwrap();
        assert_eq!(spec.poll, Some(Duration::from_secs(5)));
    }
}
