//! Counting words, lines and sentences: the plugin's logic, free of the SDK.

use std::collections::HashMap;

use schemars::JsonSchema;
use serde::Serialize;

/// Words per minute assumed for the reading time.
pub const WORDS_PER_MINUTE: f64 = 200.0;

/// What to count and how.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// How many of the most frequent words to list.
    pub top_n: usize,
    /// Whether `The` and `the` are different words.
    pub case_sensitive: bool,
    /// Words shorter than this (in characters) are left out of `unique_words` and
    /// `top_words`.
    pub min_word_length: usize,
}

/// Statistics about a text.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TextStats {
    /// Characters (Unicode scalar values), spaces included.
    pub characters: usize,
    /// Words: runs of letters and digits, with inner apostrophes and hyphens
    /// (`don't`, `well-known`).
    pub words: usize,
    /// Lines; a final line break does not start another line.
    pub lines: usize,
    /// Sentences: runs of text that contain a word and end with `.`, `!`, `?` or the
    /// end of the text.
    pub sentences: usize,
    /// Distinct words at least `min_word_length` long (compared as the
    /// `case_sensitive` argument says).
    pub unique_words: usize,
    /// Mean length of all words in characters, rounded to 2 decimals (0 without words).
    pub average_word_length: f64,
    /// The most frequent words at least `min_word_length` long, most frequent first;
    /// ties in alphabetical order.
    pub top_words: Vec<WordCount>,
    /// Time to read the text at 200 words per minute, rounded to 0.1 s.
    pub reading_time_seconds: f64,
}

/// How often a word occurs.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct WordCount {
    /// The word (lowercase unless the analysis was case-sensitive).
    pub word: String,
    /// How many times it occurs.
    pub count: usize,
}

/// The words of `text`, in order.
pub fn words(text: &str) -> Vec<&str> {
    let joiner = |c: char| matches!(c, '\'' | '’' | '-');
    text.split(|c: char| !c.is_alphanumeric() && !joiner(c))
        .map(|token| token.trim_matches(joiner))
        .filter(|word| !word.is_empty())
        .collect()
}

/// The number of sentences in `text`.
pub fn sentences(text: &str) -> usize {
    let mut count = 0;
    let mut open = false;
    for c in text.chars() {
        if c.is_alphanumeric() {
            open = true;
        } else if matches!(c, '.' | '!' | '?') && open {
            count += 1;
            open = false;
        }
    }
    count + usize::from(open)
}

/// Analyses `text`.
pub fn analyze(text: &str, options: Options) -> TextStats {
    let words = words(text);
    let letters: usize = words.iter().map(|word| word.chars().count()).sum();
    let mut counts: HashMap<String, usize> = HashMap::new();
    for word in &words {
        if word.chars().count() >= options.min_word_length {
            let key = if options.case_sensitive {
                (*word).to_owned()
            } else {
                word.to_lowercase()
            };
            *counts.entry(key).or_default() += 1;
        }
    }
    let unique_words = counts.len();
    let mut top_words: Vec<WordCount> = counts
        .into_iter()
        .map(|(word, count)| WordCount { word, count })
        .collect();
    top_words.sort_by(|x, y| y.count.cmp(&x.count).then_with(|| x.word.cmp(&y.word)));
    top_words.truncate(options.top_n);
    let average = if words.is_empty() {
        0.0
    } else {
        letters as f64 / words.len() as f64
    };
    TextStats {
        characters: text.chars().count(),
        words: words.len(),
        lines: text.lines().count(),
        sentences: sentences(text),
        unique_words,
        average_word_length: round(average, 100.0),
        top_words,
        reading_time_seconds: round(words.len() as f64 * 60.0 / WORDS_PER_MINUTE, 10.0),
    }
}

/// `value` rounded to the nearest `1 / scale`.
fn round(value: f64, scale: f64) -> f64 {
    (value * scale).round() / scale
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEFAULT: Options = Options {
        top_n: 5,
        case_sensitive: false,
        min_word_length: 1,
    };

    fn counts(pairs: &[(&str, usize)]) -> Vec<WordCount> {
        pairs
            .iter()
            .map(|&(word, count)| WordCount {
                word: word.into(),
                count,
            })
            .collect()
    }

    #[test]
    fn splits_words() {
        assert_eq!(
            words("Don't stop -- it's well-known, 'quoted' 42times!"),
            ["Don't", "stop", "it's", "well-known", "quoted", "42times"]
        );
        assert_eq!(words("  \n"), Vec::<&str>::new());
        assert_eq!(words("naïve café"), ["naïve", "café"]);
    }

    #[test]
    fn counts_sentences() {
        assert_eq!(sentences(""), 0);
        assert_eq!(sentences("Hello world"), 1);
        assert_eq!(sentences("Hi. Really?! Yes..."), 3);
        assert_eq!(sentences("... !"), 0);
        assert_eq!(sentences("One. Two"), 2);
    }

    #[test]
    fn analyzes_a_text() {
        let text = "The cat sat.\nThe dog sat too!\nA cat? the END";
        assert_eq!(
            analyze(text, DEFAULT),
            TextStats {
                characters: 44,
                words: 11,
                lines: 3,
                sentences: 4,
                unique_words: 7,
                average_word_length: 2.82,
                top_words: counts(&[("the", 3), ("cat", 2), ("sat", 2), ("a", 1), ("dog", 1)]),
                reading_time_seconds: 3.3,
            }
        );
    }

    #[test]
    fn case_sensitivity_and_minimum_length() {
        let text = "The cat sat.\nThe dog sat too!\nA cat? the END";
        let stats = analyze(
            text,
            Options {
                top_n: 3,
                case_sensitive: true,
                min_word_length: 3,
            },
        );
        assert_eq!(stats.words, 11);
        assert_eq!(stats.unique_words, 7);
        assert_eq!(
            stats.top_words,
            counts(&[("The", 2), ("cat", 2), ("sat", 2)])
        );
    }

    #[test]
    fn empty_text() {
        assert_eq!(
            analyze("", DEFAULT),
            TextStats {
                characters: 0,
                words: 0,
                lines: 0,
                sentences: 0,
                unique_words: 0,
                average_word_length: 0.0,
                top_words: vec![],
                reading_time_seconds: 0.0,
            }
        );
    }
}
