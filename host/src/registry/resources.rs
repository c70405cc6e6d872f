//! Resources and resource templates as clients see them.
//!
//! Two plugins may both offer `notes://today`, so each URI is exposed under its
//! plugin: `<plugin>+notes://today`, the plugin's name joined to the scheme (a
//! valid scheme still, since plugin names are `A-Z a-z 0-9 -`). A plugin whose
//! manifest sets `[names] prefix = false` keeps its own URIs, and one that
//! clashes with a URI already exposed is left out with a log line.

use std::sync::Arc;

use wharf_uri_template::UriTemplate;

use super::{Claims, Named, Naming};
use crate::runtime::{Plugin, ResourceSpec, TemplateSpec, scheme};

/// A resource as clients see it.
pub struct ExposedResource {
    uri: String,
    plugin: Arc<Plugin>,
    naming: Naming,
    spec: usize,
}

impl ExposedResource {
    /// The URI clients read it by.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The plugin that provides it.
    pub fn plugin(&self) -> &Arc<Plugin> {
        &self.plugin
    }

    /// The plugin's own description of it.
    pub fn spec(&self) -> &ResourceSpec {
        &self.plugin.resources()[self.spec]
    }

    /// How its plugin's URIs are exposed.
    pub fn naming(&self) -> Naming {
        self.naming
    }
}

/// A resource template as clients see it.
pub struct ExposedTemplate {
    template: UriTemplate,
    plugin: Arc<Plugin>,
    naming: Naming,
    spec: usize,
}

impl ExposedTemplate {
    /// The template as clients see it.
    pub fn template(&self) -> &UriTemplate {
        &self.template
    }

    /// The plugin that provides it.
    pub fn plugin(&self) -> &Arc<Plugin> {
        &self.plugin
    }

    /// The plugin's own description of it.
    pub fn spec(&self) -> &TemplateSpec {
        &self.plugin.templates()[self.spec]
    }

    /// How its plugin's URIs are exposed.
    pub fn naming(&self) -> Naming {
        self.naming
    }
}

impl Named for ExposedResource {
    fn exposed_name(&self) -> &str {
        &self.uri
    }
}

impl Named for ExposedTemplate {
    fn exposed_name(&self) -> &str {
        self.template.as_str()
    }
}

/// Why a plugin's URIs cannot be exposed with its prefix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "a URI scheme must start with a letter, so `{0}+` cannot prefix its URIs; \
     rename the file or set `[names] prefix = false` in its manifest"
)]
pub struct SchemePrefixError(String);

impl Naming {
    /// The URI (or template) clients see for `uri` of `plugin`.
    pub fn expose_uri(self, plugin: &str, uri: &str) -> Result<String, SchemePrefixError> {
        match self {
            Naming::AsDeclared => Ok(uri.to_owned()),
            Naming::Prefixed => {
                let prefixed = format!("{plugin}+{uri}");
                match scheme(&prefixed) {
                    Some(_) => Ok(prefixed),
                    None => Err(SchemePrefixError(plugin.to_owned())),
                }
            }
        }
    }

    /// The plugin's own form of `exposed`, one of its URIs as clients see it.
    pub fn plugin_uri<'a>(self, plugin: &str, exposed: &'a str) -> Option<&'a str> {
        match self {
            Naming::AsDeclared => Some(exposed),
            Naming::Prefixed => exposed.strip_prefix(plugin)?.strip_prefix('+'),
        }
    }
}

/// Collects the resources and templates of each plugin in turn, giving out
/// exposed URIs first come, first served.
#[derive(Default)]
pub(super) struct ResourceCollector {
    pub resources: Vec<ExposedResource>,
    pub templates: Vec<ExposedTemplate>,
    uris: Claims,
    template_claims: Claims,
}

impl ResourceCollector {
    pub fn add(&mut self, plugin: &Arc<Plugin>, naming: Naming) {
        if plugin.resources().is_empty() && plugin.templates().is_empty() {
            return;
        }
        for (index, spec) in plugin.resources().iter().enumerate() {
            let Some(uri) = self.claim(plugin, naming, "resource", &spec.uri, true) else {
                continue;
            };
            self.resources.push(ExposedResource {
                uri,
                plugin: plugin.clone(),
                naming,
                spec: index,
            });
        }
        for (index, spec) in plugin.templates().iter().enumerate() {
            let Some(exposed) = self.claim(
                plugin,
                naming,
                "resource template",
                spec.template.as_str(),
                false,
            ) else {
                continue;
            };
            // Prefixing keeps a valid template: the prefix is plain literal text.
            let template = UriTemplate::parse(&exposed).expect("a prefixed valid template");
            self.templates.push(ExposedTemplate {
                template,
                plugin: plugin.clone(),
                naming,
                spec: index,
            });
        }
    }

    fn claim(
        &mut self,
        plugin: &Plugin,
        naming: Naming,
        kind: &str,
        uri: &str,
        resource: bool,
    ) -> Option<String> {
        let exposed = match naming.expose_uri(plugin.name(), uri) {
            Ok(exposed) => exposed,
            Err(error) => {
                tracing::warn!(plugin = plugin.name(), "{kind} `{uri}` left out: {error}");
                return None;
            }
        };
        let claims = if resource {
            &mut self.uris
        } else {
            &mut self.template_claims
        };
        claims.take(plugin, kind, exposed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixed_uris_join_the_plugin_to_the_scheme() {
        let naming = Naming::Prefixed;
        assert_eq!(
            naming.expose_uri("notes", "notes://today").unwrap(),
            "notes+notes://today"
        );
        assert_eq!(
            naming.plugin_uri("notes", "notes+notes://today"),
            Some("notes://today")
        );
        assert_eq!(naming.plugin_uri("notes", "note+notes://today"), None);
        assert_eq!(naming.plugin_uri("notes", "notesx+notes://today"), None);
        assert_eq!(
            naming.expose_uri("2fa", "x://y").unwrap_err().to_string(),
            "a URI scheme must start with a letter, so `2fa+` cannot prefix its URIs; \
             rename the file or set `[names] prefix = false` in its manifest"
        );
    }

    #[test]
    fn declared_uris_are_kept() {
        let naming = Naming::AsDeclared;
        assert_eq!(naming.expose_uri("2fa", "x://y").unwrap(), "x://y");
        assert_eq!(naming.plugin_uri("2fa", "x://y"), Some("x://y"));
    }
}
