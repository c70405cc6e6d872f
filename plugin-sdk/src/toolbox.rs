//! The tools, prompts and resources a plugin offers, and dispatch to one of them.

use crate::error::ToolError;
use crate::output::ToolOutput;
use crate::prompt::{Prompt, PromptError, PromptOutput};
use crate::resource::{Resource, ResourceError, ResourceOutput, ResourceTemplate};
use crate::tool::Tool;

/// The tools, prompts and resources of a plugin.
///
/// A plugin builds its toolbox in a plain function handed to
/// [`export_plugin!`](crate::export_plugin). Wharf runs every call in a fresh
/// instance, so that function runs once per call: keep it to building [`Tool`]s
/// (which is cheap) and do real work inside the tools.
#[derive(Debug, Default)]
pub struct Toolbox {
    tools: Vec<Tool>,
    prompts: Vec<Prompt>,
    resources: Vec<Resource>,
    templates: Vec<ResourceTemplate>,
}

impl Toolbox {
    /// An empty toolbox.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `tool` after those already there.
    ///
    /// # Panics
    ///
    /// If the toolbox already has a tool of the same name.
    pub fn with(mut self, tool: Tool) -> Self {
        assert!(
            self.get(tool.name()).is_none(),
            "two tools are called `{}`",
            tool.name()
        );
        self.tools.push(tool);
        self
    }

    /// The tools, in order.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The tool called `name`, if any.
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|tool| tool.name() == name)
    }

    /// Runs the tool `name` on `arguments` (a JSON object as text), as Wharf does.
    /// Handy for testing a plugin natively.
    pub fn call(&self, name: &str, arguments: &str) -> Result<ToolOutput, ToolError> {
        self.get(name)
            .ok_or_else(|| ToolError::UnknownTool(name.to_owned()))?
            .call(arguments)
    }

    /// Adds `prompt` after those already there.
    ///
    /// # Panics
    ///
    /// If the toolbox already has a prompt of the same name.
    pub fn prompt(mut self, prompt: Prompt) -> Self {
        assert!(
            self.get_prompt(prompt.name()).is_none(),
            "two prompts are called `{}`",
            prompt.name()
        );
        self.prompts.push(prompt);
        self
    }

    /// The prompts, in order.
    pub fn prompts(&self) -> &[Prompt] {
        &self.prompts
    }

    /// The prompt called `name`, if any.
    pub fn get_prompt(&self, name: &str) -> Option<&Prompt> {
        self.prompts.iter().find(|prompt| prompt.name() == name)
    }

    /// Renders the prompt `name` with `arguments`, as Wharf does.
    pub fn render(
        &self,
        name: &str,
        arguments: &[(String, String)],
    ) -> Result<PromptOutput, PromptError> {
        self.get_prompt(name)
            .ok_or_else(|| PromptError::UnknownPrompt(name.to_owned()))?
            .render(arguments)
    }
}

impl Toolbox {
    /// Adds `resource` after those already there.
    ///
    /// # Panics
    ///
    /// If the toolbox already has a resource at the same URI.
    pub fn resource(mut self, resource: Resource) -> Self {
        assert!(
            !self.resources.iter().any(|r| r.uri() == resource.uri()),
            "two resources are at `{}`",
            resource.uri()
        );
        self.resources.push(resource);
        self
    }

    /// Adds `template` after those already there. A URI that no listed
    /// resource has goes to the first template that matches it.
    ///
    /// # Panics
    ///
    /// If the toolbox already has the same template.
    pub fn template(mut self, template: ResourceTemplate) -> Self {
        assert!(
            !self
                .templates
                .iter()
                .any(|t| t.template() == template.template()),
            "the template `{}` is there twice",
            template.template()
        );
        self.templates.push(template);
        self
    }

    /// The resources, in order.
    pub fn resources(&self) -> &[Resource] {
        &self.resources
    }

    /// The resource templates, in order.
    pub fn templates(&self) -> &[ResourceTemplate] {
        &self.templates
    }

    /// Reads the resource at `uri`, as Wharf does: a listed resource, else the
    /// first template that matches. Also returns the MIME type the resource
    /// or template declares.
    pub fn read(&self, uri: &str) -> Result<(ResourceOutput, Option<&str>), ResourceError> {
        if let Some(resource) = self.resources.iter().find(|r| r.uri() == uri) {
            return Ok((resource.read()?, resource.default_mime_type()));
        }
        for template in &self.templates {
            if let Some(variables) = template.matches(uri) {
                return Ok((template.read(&variables)?, template.default_mime_type()));
            }
        }
        Err(ResourceError::NotFound(format!("no resource at `{uri}`")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toolbox() -> Toolbox {
        Toolbox::new()
            .with(Tool::new("ping", |()| Ok(ToolOutput::text("pong"))))
            .with(Tool::new("fail", |()| Err(ToolError::failed("no"))))
    }

    #[test]
    fn dispatches_by_name() {
        let toolbox = toolbox();
        let names: Vec<&str> = toolbox.tools().iter().map(Tool::name).collect();
        assert_eq!(names, ["ping", "fail"]);
        assert_eq!(toolbox.call("ping", "{}").unwrap().text_summary(), "pong");
        assert_eq!(toolbox.call("fail", "{}"), Err(ToolError::failed("no")));
        assert_eq!(
            toolbox.call("pong", "{}"),
            Err(ToolError::UnknownTool("pong".into()))
        );
    }

    #[test]
    #[should_panic(expected = "two tools are called `ping`")]
    fn rejects_duplicate_names() {
        let _ = toolbox().with(Tool::new("ping", |()| Ok(ToolOutput::new())));
    }
}
