//! RFC 6570 URI templates, read both ways: expanded from variables, and matched
//! against a URI to recover them.
//!
//! MCP resource templates (`notes://{day}`, `file:///{+path}`) are RFC 6570
//! templates, but the RFC only defines expansion. A server that offers them must
//! also go the other way: given `notes://2026-12-02`, which template is it, and
//! what is `day`? Wharf's host routes reads with this, and the plugin SDK hands a
//! template's handler its variables with it, so both sides agree on every match.
//!
//! Every operator of level 3 is understood (`{x}`, `{+x}`, `{#x}`, `{.x}`,
//! `{/x}`, `{;x}`, `{?x}`, `{&x}`, each with several variables). The level-4
//! modifiers (`{x:3}`, `{x*}`) are accepted; a matched value is the text as it
//! stands in the URI, so an exploded list comes back joined. Matching is exact:
//! the whole URI must be consumed, and where a value could end in several places
//! the longest match wins, as with a greedy regular expression, except that a
//! `{+x}` followed by more of the template stops at `?` and `#`.
//!
//! ```
//! use wharf_uri_template::UriTemplate;
//!
//! let template = UriTemplate::parse("notes://{folder}/{name}{?rev}").unwrap();
//! assert_eq!(
//!     template.matches("notes://work/plan%20B?rev=3").unwrap(),
//!     [("folder".to_string(), "work".to_string()), ("name".into(), "plan B".into()), ("rev".into(), "3".into())]
//! );
//! assert_eq!(template.matches("other://work/plan"), None);
//! assert_eq!(template.expand(&[("folder", "a b"), ("name", "c")]), "notes://a%20b/c");
//! ```

#![warn(missing_docs)]

use std::collections::HashSet;
use std::fmt;

/// A parsed URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    source: String,
    parts: Vec<Part>,
}

/// Why a template could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError {
    /// Byte offset of the problem in the template.
    pub offset: usize,
    /// What is wrong there.
    pub reason: &'static str,
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at byte {})", self.reason, self.offset)
    }
}

impl std::error::Error for TemplateError {}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Expression {
        operator: Operator,
        names: Vec<String>,
    },
}

/// The operator of an expression: what it writes before and between values,
/// whether it names them, and which characters a value may hold unencoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operator {
    Simple,
    Reserved,
    Fragment,
    Label,
    Path,
    PathParameter,
    Query,
    QueryContinuation,
}

impl Operator {
    fn from_char(c: char) -> Option<Self> {
        Some(match c {
            '+' => Self::Reserved,
            '#' => Self::Fragment,
            '.' => Self::Label,
            '/' => Self::Path,
            ';' => Self::PathParameter,
            '?' => Self::Query,
            '&' => Self::QueryContinuation,
            _ => return None,
        })
    }

    /// Written before the first defined value.
    fn first(self) -> &'static str {
        match self {
            Self::Simple | Self::Reserved => "",
            Self::Fragment => "#",
            Self::Label => ".",
            Self::Path => "/",
            Self::PathParameter => ";",
            Self::Query => "?",
            Self::QueryContinuation => "&",
        }
    }

    /// Written between values.
    fn separator(self) -> char {
        match self {
            Self::Simple | Self::Reserved | Self::Fragment => ',',
            Self::Label => '.',
            Self::Path => '/',
            Self::PathParameter => ';',
            Self::Query | Self::QueryContinuation => '&',
        }
    }

    /// Values are written `name=value`.
    fn named(self) -> bool {
        matches!(
            self,
            Self::PathParameter | Self::Query | Self::QueryContinuation
        )
    }

    /// Reserved characters (`/`, `?`, ...) may appear in values unencoded.
    fn allows_reserved(self) -> bool {
        matches!(self, Self::Reserved | Self::Fragment)
    }
}

impl UriTemplate {
    /// Parses `template`.
    pub fn parse(template: &str) -> Result<Self, TemplateError> {
        let mut parts = Vec::new();
        let mut literal = String::new();
        let mut rest = template.char_indices().peekable();
        while let Some((offset, c)) = rest.next() {
            match c {
                '{' => {
                    let close = template[offset..].find('}').ok_or(TemplateError {
                        offset,
                        reason: "`{` is never closed",
                    })?;
                    let body = &template[offset + 1..offset + close];
                    if !literal.is_empty() {
                        parts.push(Part::Literal(std::mem::take(&mut literal)));
                    }
                    parts.push(expression(body, offset)?);
                    while rest.peek().is_some_and(|(at, _)| *at <= offset + close) {
                        rest.next();
                    }
                }
                '}' => {
                    return Err(TemplateError {
                        offset,
                        reason: "`}` without `{`",
                    });
                }
                c => literal.push(c),
            }
        }
        if !literal.is_empty() {
            parts.push(Part::Literal(literal));
        }
        Ok(Self {
            source: template.to_owned(),
            parts,
        })
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The names of its variables, in order of appearance.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts
            .iter()
            .flat_map(|part| match part {
                Part::Literal(_) => [].iter(),
                Part::Expression { names, .. } => names.iter(),
            })
            .map(String::as_str)
    }

    /// Whether the template has no expressions: it names exactly one URI.
    pub fn is_literal(&self) -> bool {
        self.parts
            .iter()
            .all(|part| matches!(part, Part::Literal(_)))
    }

    /// The template with `variables` substituted (undefined ones are left out,
    /// as the RFC says).
    pub fn expand(&self, variables: &[(&str, &str)]) -> String {
        let mut out = String::new();
        for part in &self.parts {
            let (operator, names) = match part {
                Part::Literal(text) => {
                    out.push_str(text);
                    continue;
                }
                Part::Expression { operator, names } => (*operator, names),
            };
            let mut first = true;
            for name in names {
                let Some((_, value)) = variables.iter().find(|(n, _)| n == name) else {
                    continue;
                };
                if first {
                    out.push_str(operator.first());
                    first = false;
                } else {
                    out.push(operator.separator());
                }
                if operator.named() {
                    out.push_str(name);
                    if !value.is_empty() || operator != Operator::PathParameter {
                        out.push('=');
                    }
                }
                encode(value, operator.allows_reserved(), &mut out);
            }
        }
        out
    }

    /// The variables of `uri` if it is an expansion of this template, each value
    /// percent-decoded, in order of appearance (absent optional ones left out).
    pub fn matches(&self, uri: &str) -> Option<Vec<(String, String)>> {
        let mut found = Vec::new();
        let mut failed = HashSet::new();
        match_parts(&self.parts, uri, &mut found, &mut failed).then_some(found)
    }
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

/// One `{...}` body (without braces) starting at `offset`.
fn expression(body: &str, offset: usize) -> Result<Part, TemplateError> {
    let error = |reason| TemplateError { offset, reason };
    let mut chars = body.chars();
    let operator = match chars.next() {
        None => return Err(error("empty expression `{}`")),
        Some(c) if "=,!@|".contains(c) => return Err(error("reserved operator in expression")),
        Some(c) => Operator::from_char(c).unwrap_or(Operator::Simple),
    };
    let list = if operator == Operator::Simple {
        body
    } else {
        chars.as_str()
    };
    let mut names = Vec::new();
    for spec in list.split(',') {
        // Level-4 modifiers: a prefix length or explode. Matching reads the
        // text as it stands, so only the name matters here.
        let name = spec
            .split_once(':')
            .map_or(spec, |(name, length)| {
                if length.is_empty() || !length.bytes().all(|b| b.is_ascii_digit()) {
                    ""
                } else {
                    name
                }
            })
            .trim_end_matches('*');
        let valid = !name.is_empty()
            && name.split('.').all(|piece| {
                !piece.is_empty()
                    && piece
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'%')
            });
        if !valid {
            return Err(error("bad variable name in expression"));
        }
        names.push(name.to_owned());
    }
    Ok(Part::Expression { operator, names })
}

/// Matches `parts` against the whole of `uri`, pushing variables onto `found`;
/// backtracks over where each expression ends. Whether a tail of the parts
/// matches a tail of the URI does not depend on what was read before, so
/// each pair that failed (by their lengths) is kept in `failed` and not
/// tried again: without it, a template of many expressions took time
/// exponential in their number (the fuzzer found a 15 s one).
fn match_parts(
    parts: &[Part],
    uri: &str,
    found: &mut Vec<(String, String)>,
    failed: &mut HashSet<(usize, usize)>,
) -> bool {
    if failed.contains(&(parts.len(), uri.len())) {
        return false;
    }
    let Some((part, rest)) = parts.split_first() else {
        return uri.is_empty();
    };
    let matched = match part {
        Part::Literal(text) => uri
            .strip_prefix(text.as_str())
            .is_some_and(|after| match_parts(rest, after, found, failed)),
        Part::Expression { operator, names } => {
            // Candidate ends, longest first: everything the operator may span.
            let span = uri
                .char_indices()
                .find(|(_, c)| !may_hold(*operator, *c, rest.is_empty()))
                .map_or(uri.len(), |(at, _)| at);
            (0..=span)
                .rev()
                .filter(|&at| uri.is_char_boundary(at))
                .any(|end| {
                    let mark = found.len();
                    let read = read_expression(*operator, names, &uri[..end], found)
                        && match_parts(rest, &uri[end..], found, failed);
                    if !read {
                        found.truncate(mark);
                    }
                    read
                })
        }
    };
    if !matched {
        failed.insert((parts.len(), uri.len()));
    }
    matched
}

/// Whether an expansion of `operator` may contain `c` (its own prefix and
/// separators included). A `{+x}` that is not last stops at a query or
/// fragment, so that `{+path}{?q}` reads `q` rather than swallowing it.
fn may_hold(operator: Operator, c: char, last: bool) -> bool {
    match operator {
        Operator::Reserved => last || !"?#".contains(c),
        Operator::Fragment => true,
        Operator::Simple => !"/?#&".contains(c),
        Operator::Label => !"/?#&;".contains(c),
        Operator::Path => !"?#&;".contains(c),
        Operator::PathParameter => !"/?#".contains(c),
        Operator::Query | Operator::QueryContinuation => c != '#',
    }
}

/// Reads `text` (exactly what one expression expanded to) into variables.
fn read_expression(
    operator: Operator,
    names: &[String],
    text: &str,
    found: &mut Vec<(String, String)>,
) -> bool {
    if text.is_empty() {
        // Every variable undefined. A lone simple variable may instead be the
        // empty string; say so, since the URI has a place for it.
        if matches!(operator, Operator::Simple | Operator::Reserved) && names.len() == 1 {
            found.push((names[0].clone(), String::new()));
        }
        return true;
    }
    let Some(body) = text.strip_prefix(operator.first()) else {
        return false;
    };
    let pieces: Vec<&str> = body.split(operator.separator()).collect();
    if operator.named() {
        // Each name read, its value, and how many times it came.
        let mut seen: Vec<(String, String, usize)> = Vec::new();
        for piece in pieces {
            let (name, value) = piece.split_once('=').unwrap_or((piece, ""));
            let value = decode(value, operator.allows_reserved());
            let listed = names.iter().filter(|n| *n == name).count();
            match seen.iter_mut().find(|(n, ..)| n == name) {
                // A variable the template names more than once (`{?q,q}`)
                // expands as often, each time to the same value.
                Some((_, first, times)) if *times < listed && *first == value => *times += 1,
                Some(_) => return false,
                None if listed > 0 => seen.push((name.to_owned(), value, 1)),
                None => return false,
            }
        }
        // In template order.
        for name in names {
            if let Some(at) = seen.iter().position(|(n, ..)| n == name) {
                let (name, value, _) = seen.swap_remove(at);
                found.push((name, value));
            }
        }
        return true;
    }
    if pieces.len() > names.len() {
        // More values than names: the last one was an exploded list.
        if names.len() != 1 {
            return false;
        }
        found.push((names[0].clone(), decode(body, operator.allows_reserved())));
        return true;
    }
    for (name, piece) in names.iter().zip(pieces) {
        found.push((name.clone(), decode(piece, operator.allows_reserved())));
    }
    true
}

/// RFC 6570's reserved characters (RFC 3986 gen-delims and sub-delims).
const RESERVED: &[u8] = b":/?#[]@!$&'()*+,;=";

/// Percent-encodes `value`: unreserved characters stay, and with
/// `allow_reserved` so do reserved ones and existing `%XX` triplets.
fn encode(value: &str, allow_reserved: bool, out: &mut String) {
    let bytes = value.as_bytes();
    for (at, &byte) in bytes.iter().enumerate() {
        let unreserved = byte.is_ascii_alphanumeric() || b"-._~".contains(&byte);
        let reserved = RESERVED.contains(&byte);
        let triplet = byte == b'%'
            && bytes.get(at + 1).is_some_and(u8::is_ascii_hexdigit)
            && bytes.get(at + 2).is_some_and(u8::is_ascii_hexdigit);
        if unreserved || (allow_reserved && (reserved || triplet)) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
}

/// Percent-decodes `text`; left as it is if the result is not UTF-8. With
/// `keep_reserved` (a `{+x}` or `{#x}` value), a triplet that stands for a
/// reserved character stays encoded: those expansions copy triplets and
/// reserved characters as they are, so `%23` can only have come from a
/// value holding `%23` (a value holding `#` expands to `#`, which a `{+x}`
/// before a query or fragment cannot even hold).
fn decode(text: &str, keep_reserved: bool) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[at] == b'%'
            && let (Some(Some(high)), Some(Some(low))) = (
                bytes.get(at + 1).map(|&b| hex(b)),
                bytes.get(at + 2).map(|&b| hex(b)),
            )
        {
            let byte = (high * 16 + low) as u8;
            if keep_reserved && RESERVED.contains(&byte) {
                out.extend_from_slice(&bytes[at..at + 3]);
            } else {
                out.push(byte);
            }
            at += 3;
        } else {
            out.push(bytes[at]);
            at += 1;
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    fn matches(template: &str, uri: &str) -> Option<Vec<(String, String)>> {
        UriTemplate::parse(template).unwrap().matches(uri)
    }

    #[test]
    fn a_variable_named_twice_in_a_query_matches_its_own_expansion() {
        // Found by the fuzzer (fuzz/artifacts-found/uri_template-named-twice).
        let template = UriTemplate::parse("wharf:{?q,q,page}").unwrap();
        let expanded = template.expand(&[("q", "a b")]);
        assert_eq!(expanded, "wharf:?q=a%20b&q=a%20b");
        assert_eq!(template.matches(&expanded), Some(vars(&[("q", "a b")])));
        assert_eq!(
            matches("wharf:{?q,q,page}", "wharf:?q=a&q=a&page=2"),
            Some(vars(&[("q", "a"), ("page", "2")]))
        );
        // Two values for one variable, or a key more often than named: not
        // an expansion.
        assert_eq!(matches("wharf:{?q,q}", "wharf:?q=a&q=b"), None);
        assert_eq!(matches("wharf:{?q,q}", "wharf:?q=a&q=a&q=a"), None);
        assert_eq!(matches("wharf:{?q,page}", "wharf:?q=a&q=a"), None);
        assert_eq!(matches("wharf:{?q}", "wharf:?p=a"), None);
    }

    #[test]
    fn many_expressions_match_in_polynomial_time() {
        // Found by the fuzzer (fuzz/artifacts-found/uri_template-many-expressions-timeout):
        // 15 s before failed tails were remembered.
        let template = "res://{+pa}{h.e,t}{ath}/{xpage.%ta}{h.e,t}{ath}/{xpage.e}{;p}";
        let uri = ["res://$/th./+eb{/path}}", &"\0".repeat(70), "{;p}"].concat();
        let started = std::time::Instant::now();
        let _ = matches(template, &uri);
        // Twenty expressions over 40 characters, and a literal that never
        // comes: every split of the characters fails.
        let twenty = format!("x:{}/end", "{a}".repeat(20));
        assert_eq!(matches(&twenty, &format!("x:{}", "b".repeat(40))), None);
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
    }

    #[test]
    fn simple_variables_stop_at_slashes() {
        assert_eq!(
            matches("test://template/{id}/data", "test://template/123/data"),
            Some(vars(&[("id", "123")]))
        );
        assert_eq!(
            matches("test://template/{id}/data", "test://template/1/2/data"),
            None
        );
        assert_eq!(
            matches("test://template/{id}/data", "test://template/123/dat"),
            None
        );
        assert_eq!(
            matches("notes://{a},{b}", "notes://x,y"),
            Some(vars(&[("a", "x"), ("b", "y")]))
        );
    }

    #[test]
    fn an_encoded_reserved_character_in_a_reserved_expansion_stays_encoded() {
        // `%23` can only come from a value holding `%23`: a `#` would expand
        // as it is, and this `{+x}` cannot hold one before `{.ext}`. Found by
        // the fuzzer, as its expansion failed to match again.
        let template = UriTemplate::parse("res://{+path}{;a}/{.ext}").unwrap();
        let found = template.matches("res://a/b%23c%7D/.txt").unwrap();
        assert_eq!(found, vars(&[("path", "a/b%23c}"), ("ext", "txt")]));
        let pairs: Vec<(&str, &str)> = found
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let expanded = template.expand(&pairs);
        assert_eq!(expanded, "res://a/b%23c%7D/.txt");
        assert_eq!(template.matches(&expanded), Some(found));
    }

    #[test]
    fn reserved_expansion_spans_slashes() {
        assert_eq!(
            matches("file:///{+path}", "file:///home/me/a%20b.txt"),
            Some(vars(&[("path", "home/me/a b.txt")]))
        );
        assert_eq!(
            matches("docs://{+path}/index", "docs://a/b/index"),
            Some(vars(&[("path", "a/b")]))
        );
    }

    #[test]
    fn queries_are_optional_and_unordered() {
        let template = "search://{q}{?limit,page}";
        assert_eq!(
            matches(template, "search://cats"),
            Some(vars(&[("q", "cats")]))
        );
        assert_eq!(
            matches(template, "search://cats?page=2&limit=10"),
            Some(vars(&[("q", "cats"), ("limit", "10"), ("page", "2")]))
        );
        assert_eq!(matches(template, "search://cats?other=1"), None);
        assert_eq!(matches(template, "search://cats?page=1&page=2"), None);
    }

    #[test]
    fn path_label_fragment_and_parameters() {
        assert_eq!(
            matches("repo://x{/owner,name}", "repo://x/me/wharf"),
            Some(vars(&[("owner", "me"), ("name", "wharf")]))
        );
        assert_eq!(
            matches("host://www{.domain}", "host://www.example"),
            Some(vars(&[("domain", "example")]))
        );
        assert_eq!(
            matches("doc://a{#section}", "doc://a#intro/b"),
            Some(vars(&[("section", "intro/b")]))
        );
        assert_eq!(matches("m://x{;v}", "m://x;v=2"), Some(vars(&[("v", "2")])));
    }

    #[test]
    fn literals_match_only_themselves() {
        let template = UriTemplate::parse("test://static-text").unwrap();
        assert!(template.is_literal());
        assert_eq!(template.matches("test://static-text"), Some(vec![]));
        assert_eq!(template.matches("test://static-text2"), None);
    }

    #[test]
    fn expansion_encodes_per_operator() {
        let template = UriTemplate::parse("x://{a}/{+b}{?c,d}").unwrap();
        assert_eq!(
            template.expand(&[("a", "1/2"), ("b", "3/4"), ("c", "é")]),
            "x://1%2F2/3/4?c=%C3%A9"
        );
        // Expansion and matching agree.
        assert_eq!(
            template.matches("x://1%2F2/3/4?c=%C3%A9"),
            Some(vars(&[("a", "1/2"), ("b", "3/4"), ("c", "é")]))
        );
        assert_eq!(
            template.variables().collect::<Vec<_>>(),
            ["a", "b", "c", "d"]
        );
    }

    #[test]
    fn bad_templates_are_refused_with_the_place() {
        let error = |t: &str| UriTemplate::parse(t).unwrap_err();
        assert_eq!(
            error("x://{a").to_string(),
            "`{` is never closed (at byte 4)"
        );
        assert_eq!(error("x://a}").to_string(), "`}` without `{` (at byte 5)");
        assert_eq!(error("x://{}").reason, "empty expression `{}`");
        assert_eq!(error("x://{=a}").reason, "reserved operator in expression");
        assert_eq!(error("x://{a b}").reason, "bad variable name in expression");
        assert_eq!(error("x://{a:}").reason, "bad variable name in expression");
        assert!(UriTemplate::parse("x://{a:3}/{b*}").is_ok());
    }
}
