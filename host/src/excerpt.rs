//! Client-controlled text in a log line: a bounded, escaped excerpt.
//!
//! A header, method name or session id comes from the client and may be
//! megabytes long or hold control characters; logged whole, a 60 KB `Origin`
//! makes a 60 KB log line per request, and a newline forges a second line. An
//! [`Excerpt`] shows the first [`EXCERPT_BYTES`] bytes, escaped (`\n`,
//! `\u{7f}`, `\xff` for a byte that is not UTF-8), and the total length when
//! it cut.

use std::fmt;

/// How much of a client's text a log line shows.
pub const EXCERPT_BYTES: usize = 256;

/// Displays a bounded, escaped excerpt of client-controlled bytes.
pub struct Excerpt<'a>(&'a [u8]);

impl<'a> Excerpt<'a> {
    pub fn new(text: &'a (impl AsRef<[u8]> + ?Sized)) -> Self {
        Self(text.as_ref())
    }
}

impl fmt::Display for Excerpt<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = &self.0[..self.0.len().min(EXCERPT_BYTES)];
        for chunk in shown.utf8_chunks() {
            write!(f, "{}", chunk.valid().escape_debug())?;
            for byte in chunk.invalid() {
                write!(f, "\\x{byte:02x}")?;
            }
        }
        if shown.len() < self.0.len() {
            write!(f, "… ({} bytes)", self.0.len())?;
        }
        Ok(())
    }
}

impl fmt::Debug for Excerpt<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{self}\"")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_shown_whole_and_escaped() {
        assert_eq!(
            Excerpt::new("https://a.example").to_string(),
            "https://a.example"
        );
        assert_eq!(Excerpt::new("a\nb\"c").to_string(), "a\\nb\\\"c");
        assert_eq!(Excerpt::new(b"x\xffy\x1b").to_string(), "x\\xffy\\u{1b}");
        assert_eq!(format!("{:?}", Excerpt::new("é")), "\"é\"");
    }

    #[test]
    fn long_text_is_cut_with_its_length() {
        let long = "o".repeat(60 * 1024);
        let shown = Excerpt::new(&long).to_string();
        assert_eq!(
            shown,
            format!("{}… (61440 bytes)", "o".repeat(EXCERPT_BYTES))
        );
        let exact = "o".repeat(EXCERPT_BYTES);
        assert_eq!(Excerpt::new(&exact).to_string(), exact);
    }
}
