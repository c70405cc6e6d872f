//! Wharf's own guide (its README), served with all three MCP primitives:
//! every section is a resource, a tool searches them and links to the sections
//! it found, and a prompt asks the model to explain one, with the section
//! embedded. The guide is compiled in, so the plugin needs no grants.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use wharf_sdk::{
    Prompt, PromptArgument, PromptError, PromptOutput, Resource, ResourceError, ResourceLink,
    ResourceOutput, ResourceTemplate, Role, Tool, ToolOutput, Toolbox,
};

mod sections;

use sections::{Section, sections};

/// The README this plugin serves.
const GUIDE: &str = include_str!("../../../README.md");

/// The whole guide.
const GUIDE_URI: &str = "guide://readme";

/// One section of it.
const SECTION_TEMPLATE: &str = "guide://readme/{section}";

fn section_uri(section: &Section<'_>) -> String {
    format!("{GUIDE_URI}/{}", section.slug)
}

/// The sections whose slug starts with `prefix`, for completion.
fn slugs_starting(prefix: &str) -> Vec<String> {
    sections(GUIDE)
        .iter()
        .filter(|s| s.slug.starts_with(prefix))
        .map(|s| s.slug.clone())
        .collect()
}

/// Arguments of `search`.
#[derive(Deserialize, JsonSchema)]
struct SearchArgs {
    /// Words to look for (all of them, in any case).
    query: String,
    /// How many sections to return at most.
    #[serde(default = "default_limit")]
    #[schemars(range(min = 1, max = 20))]
    limit: usize,
}

fn default_limit() -> usize {
    5
}

/// A section that matched.
#[derive(Serialize, JsonSchema)]
struct Hit {
    /// The section's title.
    title: String,
    /// The URI to read it by.
    uri: String,
    /// How many times the words occur in it.
    score: usize,
    /// The first line that holds a word.
    excerpt: String,
}

/// What `search` found.
#[derive(Serialize, JsonSchema)]
struct Hits {
    /// Best first.
    hits: Vec<Hit>,
}

fn search(args: SearchArgs) -> Result<ToolOutput, wharf_sdk::ToolError> {
    let words: Vec<String> = args
        .query
        .split_whitespace()
        .map(str::to_lowercase)
        .collect();
    if words.is_empty() {
        return Err(ToolOutput::error("the query has no words").into());
    }
    if !(1..=20).contains(&args.limit) {
        return Err(ToolOutput::error(format!(
            "`limit` must be between 1 and 20, not {}",
            args.limit
        ))
        .into());
    }
    let mut hits: Vec<(Hit, &Section<'_>)> = Vec::new();
    let all = sections(GUIDE);
    for section in &all {
        let lower = section.body.to_lowercase();
        if !words.iter().all(|w| lower.contains(w.as_str())) {
            continue;
        }
        let score = words
            .iter()
            .map(|w| lower.matches(w.as_str()).count())
            .sum();
        let excerpt = section
            .body
            .lines()
            .find(|line| {
                let line = line.to_lowercase();
                words.iter().any(|w| line.contains(w.as_str()))
            })
            .unwrap_or_default()
            .trim()
            .to_string();
        hits.push((
            Hit {
                title: section.title.to_string(),
                uri: section_uri(section),
                score,
                excerpt,
            },
            section,
        ));
    }
    hits.sort_by(|a, b| b.0.score.cmp(&a.0.score).then(a.0.title.cmp(&b.0.title)));
    hits.truncate(args.limit);
    let summary = if hits.is_empty() {
        format!("No section mentions all of: {}", words.join(", "))
    } else {
        format!("{} section(s) found; read them by URI.", hits.len())
    };
    let mut output = ToolOutput::text(summary);
    for (hit, section) in &hits {
        let mut link = ResourceLink::new(&hit.uri, &section.slug);
        link.title = Some(hit.title.clone());
        link.mime_type = Some("text/markdown".into());
        link.size = Some(section.body.len() as u64);
        output = output.with(link);
    }
    let hits = Hits {
        hits: hits.into_iter().map(|(hit, _)| hit).collect(),
    };
    let structured = serde_json::to_value(&hits)
        .map_err(|e| wharf_sdk::ToolError::failed(format!("serialising the hits: {e}")))?;
    Ok(output.with_structured(structured))
}

fn read_section(slug: &str) -> Result<ResourceOutput, ResourceError> {
    sections(GUIDE)
        .into_iter()
        .find(|s| s.slug == slug)
        .map(|s| ResourceOutput::text(s.body))
        .ok_or_else(|| ResourceError::not_found(format!("the guide has no section `{slug}`")))
}

fn toolbox() -> Toolbox {
    Toolbox::new()
        .with(
            Tool::new("search", search)
                .title("Search the Wharf guide")
                .description(
                    "Finds the sections of Wharf's guide (its README) that mention every \
                     word of the query, best first, with a link to read each one.",
                )
                .with_output_schema::<Hits>()
                .read_only(),
        )
        .resource(
            Resource::new(GUIDE_URI, "readme", || Ok(ResourceOutput::text(GUIDE)))
                .title("The Wharf guide")
                .description("Wharf's README: running it, clients, plugins, security.")
                .mime_type("text/markdown")
                .size(GUIDE.len() as u64),
        )
        .template(
            ResourceTemplate::new(SECTION_TEMPLATE, "section", |vars| {
                read_section(vars.require("section")?)
            })
            .title("A section of the Wharf guide")
            .description("One `##` section of the README, by its slug (`quick-start`, ...).")
            .mime_type("text/markdown")
            .complete(|variable, value, _| match variable {
                "section" => slugs_starting(value),
                _ => Vec::new(),
            }),
        )
        .prompt(
            Prompt::new("explain", |args| {
                let slug = args.require("section")?;
                let section = sections(GUIDE)
                    .into_iter()
                    .find(|s| s.slug == slug)
                    .ok_or_else(|| {
                        PromptError::InvalidArguments(format!("the guide has no section `{slug}`"))
                    })?;
                let reader = args.get("reader").unwrap_or("a developer new to Wharf");
                Ok(PromptOutput::new()
                    .description(format!("Explain \"{}\" to {reader}", section.title))
                    .message(
                        Role::User,
                        ToolOutput::embedded_text(
                            section_uri(&section),
                            "text/markdown",
                            section.body,
                        ),
                    )
                    .user(format!(
                        "Explain the section of the Wharf guide above to {reader}: what it is \
                         for, and the one thing they must not miss. Quote commands exactly."
                    )))
            })
            .title("Explain a part of the guide")
            .description("Asks the model to explain one section of Wharf's guide.")
            .argument(
                PromptArgument::required("section")
                    .description("The section's slug, such as `quick-start`."),
            )
            .argument(
                PromptArgument::optional("reader")
                    .description("Who the explanation is for (default: a developer new to Wharf)."),
            )
            .complete(|argument, value, _| match argument {
                "section" => slugs_starting(value),
                _ => Vec::new(),
            }),
        )
}

wharf_sdk::export_plugin!(toolbox);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_links_to_readable_sections() {
        let output = toolbox()
            .call("search", r#"{"query": "hot reload", "limit": 2}"#)
            .unwrap();
        let hits = output.structured_content().unwrap()["hits"]
            .as_array()
            .unwrap();
        assert!(!hits.is_empty() && hits.len() <= 2);
        let toolbox = toolbox();
        for hit in hits {
            let uri = hit["uri"].as_str().unwrap();
            let (read, mime) = toolbox.read(uri).unwrap();
            assert_eq!(mime, Some("text/markdown"));
            assert!(!read.contents().is_empty());
        }
    }

    #[test]
    fn unknown_sections_are_not_found() {
        assert_eq!(
            toolbox().read("guide://readme/nope").unwrap_err(),
            ResourceError::not_found("the guide has no section `nope`")
        );
        assert!(toolbox().read("guide://other").is_err());
    }

    #[test]
    fn the_prompt_embeds_the_section() {
        let output = toolbox()
            .render("explain", &[("section".into(), "quick-start".into())])
            .unwrap();
        assert_eq!(output.messages().len(), 2);
        assert!(
            toolbox()
                .render("explain", &[("section".into(), "nope".into())])
                .is_err()
        );
    }
}
