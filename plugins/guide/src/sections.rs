//! Splitting a Markdown document into its `##` sections.

/// One `##` section: its title, a slug for URIs, and its text (heading included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section<'a> {
    pub title: &'a str,
    pub slug: String,
    pub body: &'a str,
}

/// The `##` sections of `markdown`, in order. Headings inside fenced code
/// blocks are text, not headings.
pub fn sections(markdown: &str) -> Vec<Section<'_>> {
    let mut starts: Vec<(usize, &str)> = Vec::new();
    let mut in_fence = false;
    let mut offset = 0;
    for line in markdown.split_inclusive('\n') {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        } else if !in_fence && let Some(title) = line.strip_prefix("## ") {
            starts.push((offset, title.trim()));
        }
        offset += line.len();
    }
    let mut sections = Vec::with_capacity(starts.len());
    for (index, &(start, title)) in starts.iter().enumerate() {
        let end = starts
            .get(index + 1)
            .map_or(markdown.len(), |&(next, _)| next);
        sections.push(Section {
            title,
            slug: slug(title),
            body: markdown[start..end].trim_end(),
        });
    }
    sections
}

/// `Quick start` → `quick-start`: lowercase letters and digits, runs of
/// anything else as one `-`.
pub fn slug(title: &str) -> String {
    let mut slug = String::new();
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    slug.trim_end_matches('-').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_at_level_two_headings_outside_code() {
        let doc =
            "# T\nintro\n## Quick start\nrun\n```\n## not a heading\n```\n## What's new?\nx\n";
        let found = sections(doc);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].title, "Quick start");
        assert_eq!(found[0].slug, "quick-start");
        assert_eq!(
            found[0].body,
            "## Quick start\nrun\n```\n## not a heading\n```"
        );
        assert_eq!(found[1].slug, "what-s-new");
        assert_eq!(found[1].body, "## What's new?\nx");
    }
}
