//! Text statistics: a Wharf example plugin with several optional parameters.
//!
//! It shows arguments with defaults and bounds (`#[serde(default)]` and
//! `#[schemars(range(..))]` appear in the input schema as `default`, `minimum` and
//! `maximum`), a check the schema states but serde does not enforce, a nested
//! structured result, and a prompt (`summarize`) whose arguments clients can
//! complete.

mod stats;

use schemars::JsonSchema;
use serde::Deserialize;
use wharf_sdk::{
    Prompt, PromptArgument, PromptArguments, PromptError, PromptOutput, Tool, ToolError, Toolbox,
};

use crate::stats::{Options, TextStats};

/// The most `top_n` may ask for.
const MAX_TOP_N: u32 = 50;

/// Arguments of `analyze`.
#[derive(Deserialize, JsonSchema)]
struct AnalyzeArgs {
    /// The text to analyse.
    text: String,
    /// How many of the most frequent words to list (0 to 50).
    #[serde(default = "default_top_n")]
    #[schemars(range(max = 50))]
    top_n: u32,
    /// Whether `The` and `the` count as different words.
    #[serde(default)]
    case_sensitive: bool,
    /// Words shorter than this many characters are left out of `unique_words` and
    /// `top_words`.
    #[serde(default = "default_min_word_length")]
    #[schemars(range(min = 1))]
    min_word_length: u32,
}

fn default_top_n() -> u32 {
    5
}

fn default_min_word_length() -> u32 {
    1
}

fn analyze(args: AnalyzeArgs) -> Result<TextStats, ToolError> {
    if args.top_n > MAX_TOP_N {
        return Err(ToolError::invalid_arguments(format!(
            "`top_n` must be at most {MAX_TOP_N}, not {}",
            args.top_n
        )));
    }
    if args.min_word_length == 0 {
        return Err(ToolError::invalid_arguments(
            "`min_word_length` must be at least 1",
        ));
    }
    let options = Options {
        top_n: args.top_n as usize,
        case_sensitive: args.case_sensitive,
        min_word_length: args.min_word_length as usize,
    };
    Ok(stats::analyze(&args.text, options))
}

/// The lengths `summarize` accepts, each with what it asks for.
const LENGTHS: [(&str, &str); 3] = [
    ("short", "in one sentence"),
    ("medium", "in one paragraph of three to five sentences"),
    ("long", "in several paragraphs, keeping every main point"),
];

/// The audiences `summarize` suggests (any other is accepted too).
const AUDIENCES: [&str; 4] = ["children", "executives", "experts", "general readers"];

fn summarize(args: &PromptArguments) -> Result<PromptOutput, PromptError> {
    let text = args.require("text")?;
    let length = args.get("length").unwrap_or("medium");
    let Some((_, how)) = LENGTHS.iter().find(|(name, _)| *name == length) else {
        return Err(PromptError::InvalidArguments(format!(
            "`length` must be short, medium or long, not `{length}`"
        )));
    };
    let audience = args.get("audience").unwrap_or("general readers");
    let words = text.split_whitespace().count();
    Ok(PromptOutput::new()
        .description(format!("Summarize {words} words {how}, for {audience}"))
        .user(format!(
            "Summarize the following text {how}, for {audience}. Keep its facts; add none.\n\n{text}"
        )))
}

/// Suggestions for the `length` and `audience` arguments of `summarize`.
fn complete_summarize(argument: &str, value: &str, _: &PromptArguments) -> Vec<String> {
    let value = value.to_lowercase();
    let names: Vec<&str> = match argument {
        "length" => LENGTHS.iter().map(|(name, _)| *name).collect(),
        "audience" => AUDIENCES.to_vec(),
        _ => Vec::new(),
    };
    names
        .into_iter()
        .filter(|name| name.starts_with(&value))
        .map(String::from)
        .collect()
}

fn toolbox() -> Toolbox {
    Toolbox::new()
        .with(
            Tool::structured("analyze", analyze)
                .title("Analyze text")
                .description(
                    "Counts the characters, words, lines and sentences of a text, lists its \
                     most frequent words and estimates its reading time (200 words per minute).",
                )
                .read_only()
                .idempotent()
                .open_world(false),
        )
        .prompt(
            Prompt::new("summarize", summarize)
                .title("Summarize text")
                .description("Asks the model to summarize a text at a chosen length.")
                .argument(PromptArgument::required("text").description("The text to summarize."))
                .argument(
                    PromptArgument::optional("length")
                        .description("short, medium (the default) or long."),
                )
                .argument(
                    PromptArgument::optional("audience")
                        .description("Who the summary is for (default: general readers)."),
                )
                .complete(complete_summarize),
        )
}

wharf_sdk::export_plugin!(toolbox);

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn summarize_renders_and_completes() {
        let output = toolbox()
            .render(
                "summarize",
                &[
                    ("text".into(), "One two three.".into()),
                    ("length".into(), "short".into()),
                ],
            )
            .unwrap();
        assert_eq!(output.messages().len(), 1);
        assert_eq!(
            toolbox().render(
                "summarize",
                &[
                    ("text".into(), "x".into()),
                    ("length".into(), "huge".into())
                ]
            ),
            Err(PromptError::InvalidArguments(
                "`length` must be short, medium or long, not `huge`".into()
            ))
        );
        let prompt = toolbox();
        let prompt = prompt.get_prompt("summarize").unwrap();
        assert_eq!(prompt.suggestions("length", "S", &[]), ["short"]);
        assert_eq!(
            prompt.suggestions("audience", "e", &[]),
            ["executives", "experts"]
        );
        assert!(prompt.suggestions("text", "", &[]).is_empty());
    }

    #[test]
    fn analyzes_with_defaults() {
        let output = toolbox()
            .call("analyze", r#"{"text": "Hello, hello world."}"#)
            .unwrap();
        assert_eq!(
            output.structured_content(),
            Some(&json!({
                "characters": 19,
                "words": 3,
                "lines": 1,
                "sentences": 1,
                "unique_words": 2,
                "average_word_length": 5.0,
                "top_words": [{"word": "hello", "count": 2}, {"word": "world", "count": 1}],
                "reading_time_seconds": 0.9,
            }))
        );
    }

    #[test]
    fn checks_bounds() {
        assert_eq!(
            toolbox().call("analyze", r#"{"text": "x", "top_n": 51}"#),
            Err(ToolError::invalid_arguments(
                "`top_n` must be at most 50, not 51"
            ))
        );
        assert_eq!(
            toolbox().call("analyze", r#"{"text": "x", "min_word_length": 0}"#),
            Err(ToolError::invalid_arguments(
                "`min_word_length` must be at least 1"
            ))
        );
        assert_eq!(
            toolbox().call("analyze", r#"{"text": "x", "top_n": -1}"#),
            Err(ToolError::invalid_arguments(
                "`top_n`: invalid value: integer `-1`, expected u32 at line 1 column 25"
            ))
        );
    }

    #[test]
    fn schema_shows_defaults_and_bounds() {
        let tool = toolbox();
        let tool = tool.get("analyze").unwrap();
        let input = tool.input_schema();
        assert_eq!(input["required"], json!(["text"]));
        assert_eq!(input["properties"]["top_n"]["default"], 5);
        assert_eq!(input["properties"]["top_n"]["maximum"], 50);
        assert_eq!(input["properties"]["case_sensitive"]["default"], false);
        assert_eq!(input["properties"]["min_word_length"]["minimum"], 1);
        let output = tool.output_schema().unwrap();
        assert_eq!(output["type"], "object");
        assert_eq!(
            output["$defs"]["WordCount"]["required"],
            json!(["word", "count"])
        );
    }
}
