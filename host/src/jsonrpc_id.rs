//! The `id` of a JSON-RPC request that could not be parsed whole.
//!
//! A request whose body is too deep for the parser (serde_json stops at 128
//! levels), holds a number no `f64` can hold (`1e400`), invalid UTF-8 or a
//! lone surrogate in some string, or is cut short, is answered with `-32700`.
//! If that answer carries no `id`, the client waits for its request forever.
//! MCP (basic, "Error Responses") says an error carries the request's id
//! except when the id "could not be read due to a malformed request"; so
//! [`recover`] reads it without parsing the body: a scan of the top-level
//! object that steps over each member's value by its brackets and quotes,
//! building nothing, so depth and number range do not matter.
//!
//! A leaf like [`crate::protocol`]: pure, importing nothing from the crate, so
//! both transports (stdio's screen, HTTP's envelope check) can use it.

use rmcp::model::RequestId;

/// The id of the request `message` holds, read without parsing the message
/// whole, or `None` when it cannot be read.
///
/// The scan reads the members of the top-level object in order until the
/// object ends or the scan meets something it cannot step over (the body may
/// be cut short: what was read counts). The id is the value of the `id`
/// member, read as rmcp reads one (a string, or an integer in `i64`, `1.0`
/// being `1`), so it equals the id the request would have had. It is `None`
/// when the message is not an object, when there is no `id` member, when
/// the id is of another type, when two `id` members were read (which one
/// would be ambiguous), and when the message is not seen to be a request (no
/// `method` member, or a `result` or `error` member: an error sent with the
/// id of a client's *response* would answer one of the client's own requests).
pub fn recover(message: &[u8]) -> Option<RequestId> {
    let mut scan = Scan {
        bytes: message.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(message),
        at: 0,
    };
    scan.skip_whitespace();
    if !scan.eat(b'{') {
        return None;
    }
    let mut id: Option<Option<RequestId>> = None;
    let mut method = false;
    loop {
        scan.skip_whitespace();
        if scan.peek() != Some(b'"') {
            break;
        }
        let Some(key) = scan.string().map(member_name) else {
            break;
        };
        scan.skip_whitespace();
        if !scan.eat(b':') {
            break;
        }
        scan.skip_whitespace();
        match key.as_deref() {
            Some("id") if id.is_some() => return None,
            Some("method") => method = true,
            Some("result" | "error") => return None,
            _ => {}
        }
        let Some(value) = scan.value() else {
            break;
        };
        if key.as_deref() == Some("id") {
            id = Some(serde_json::from_slice(value).ok());
        }
        scan.skip_whitespace();
        if !scan.eat(b',') {
            break;
        }
    }
    if method { id.flatten() } else { None }
}

/// A member's name, unescaped (`"\u0069d"` is `id`); `None` if it is not a
/// valid JSON string.
fn member_name(quoted: &[u8]) -> Option<String> {
    if !quoted.contains(&b'\\') {
        return std::str::from_utf8(&quoted[1..quoted.len() - 1])
            .ok()
            .map(str::to_owned);
    }
    serde_json::from_slice(quoted).ok()
}

/// A cursor over the message's bytes.
struct Scan<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Scan<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        let found = self.peek() == Some(byte);
        if found {
            self.at += 1;
        }
        found
    }

    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// The string starting here, quotes included, if it ends.
    fn string(&mut self) -> Option<&'a [u8]> {
        let bytes = self.bytes;
        let start = self.at;
        self.at += 1;
        while let Some(byte) = self.peek() {
            self.at += 1;
            match byte {
                b'"' => return Some(&bytes[start..self.at]),
                b'\\' => self.at += 1,
                _ => {}
            }
        }
        None
    }

    /// The value starting here, stepped over whole if it ends: a string, an
    /// object or array (brackets counted, strings skipped, nothing checked
    /// inside), or a scalar up to the next delimiter.
    fn value(&mut self) -> Option<&'a [u8]> {
        let bytes = self.bytes;
        let start = self.at;
        match self.peek()? {
            b'"' => self.string(),
            b'{' | b'[' => {
                let mut depth = 0usize;
                while let Some(byte) = self.peek() {
                    match byte {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => depth -= 1,
                        _ => {}
                    }
                    self.at += 1;
                    if depth == 0 {
                        return Some(&bytes[start..self.at]);
                    }
                }
                None
            }
            _ => {
                while let Some(byte) = self.peek() {
                    if matches!(byte, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                        break;
                    }
                    self.at += 1;
                }
                (self.at > start).then_some(&bytes[start..self.at])
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(message: &str) -> Option<RequestId> {
        recover(message.as_bytes())
    }

    fn number(n: i64) -> Option<RequestId> {
        Some(RequestId::Number(n))
    }

    fn string(s: &str) -> Option<RequestId> {
        Some(RequestId::String(s.into()))
    }

    #[test]
    fn the_id_of_a_plain_request() {
        assert_eq!(id(r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#), number(7));
        assert_eq!(id(r#"{"method":"ping","id":"a\"b"}"#), string("a\"b"));
        assert_eq!(
            id(" \r\n\t{ \"id\" : -3 , \"method\" : \"x\" } "),
            number(-3)
        );
        assert_eq!(
            id("\u{feff}{\"id\":1,\"method\":\"x\"}"),
            number(1),
            "a byte-order mark is skipped"
        );
    }

    #[test]
    fn a_body_too_deep_to_parse_keeps_its_id() {
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{}{}}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        assert!(serde_json::from_str::<serde_json::Value>(&deep).is_err());
        assert_eq!(id(&deep), number(9));
        let deep_first = format!(
            r#"{{"params":{{"a":{}1{}}},"method":"tools/call","id":"x"}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        assert_eq!(id(&deep_first), string("x"), "members after a deep value");
    }

    #[test]
    fn unparsable_values_elsewhere_keep_the_id() {
        for message in [
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"n":1e400}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"s":"\ud800"}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"s":"a\"]}{["}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"s":"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call"} trailing"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"#,
        ] {
            assert_eq!(id(message), number(4), "{message}");
        }
        let mut bad_utf8 = br#"{"id":4,"method":"tools/call","params":{"s":""#.to_vec();
        bad_utf8.extend_from_slice(b"\xff\xfe\"}}");
        assert_eq!(recover(&bad_utf8), number(4));
    }

    #[test]
    fn ids_are_read_as_rmcp_reads_them() {
        assert_eq!(id(r#"{"id":1.0,"method":"x"}"#), number(1));
        assert_eq!(id(r#"{"id":1e2,"method":"x"}"#), number(100));
        assert_eq!(id(r#"{"id":-0,"method":"x"}"#), number(0));
        assert_eq!(id(r#"{"id":"1","method":"x"}"#), string("1"));
        assert_eq!(id(r#"{"id":"\u0061","method":"x"}"#), string("a"));
        assert_eq!(id(r#"{"\u0069d":5,"method":"x"}"#), number(5));
        assert_eq!(
            id(r#"{"id":9223372036854775807,"method":"x"}"#),
            number(i64::MAX)
        );
    }

    #[test]
    fn an_id_that_cannot_be_read_is_none() {
        for message in [
            r#"{"id":null,"method":"x"}"#,
            r#"{"id":true,"method":"x"}"#,
            r#"{"id":1.5,"method":"x"}"#,
            r#"{"id":1e400,"method":"x"}"#,
            r#"{"id":9223372036854775808,"method":"x"}"#,
            r#"{"id":[1],"method":"x"}"#,
            r#"{"id":{"a":1},"method":"x"}"#,
            r#"{"id":"a"#,
            r#"{"id":"\ud800","method":"x"}"#,
            r#"{"id":01,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","method":"x"}"#,
            r#"{"jsonrpc":"2.0" "id":1,"method":"x"}"#,
            r#"[{"id":1,"method":"x"}]"#,
            r#""id""#,
            "",
            "{",
        ] {
            assert_eq!(id(message), None, "{message}");
        }
    }

    #[test]
    fn two_ids_are_ambiguous() {
        assert_eq!(id(r#"{"id":1,"id":2,"method":"x"}"#), None);
        assert_eq!(id(r#"{"id":1,"method":"x","id":1}"#), None);
    }

    #[test]
    fn only_requests_have_their_id_recovered() {
        assert_eq!(id(r#"{"jsonrpc":"2.0","id":6,"result":{"n":1e400}}"#), None);
        assert_eq!(
            id(r#"{"jsonrpc":"2.0","id":6,"error":{"code":1e400}}"#),
            None
        );
        assert_eq!(id(r#"{"jsonrpc":"2.0","id":6}"#), None);
        assert_eq!(
            id(r#"{"id":6,"method":"x","result":1}"#),
            None,
            "a request and a response at once is neither"
        );
    }

    #[test]
    fn only_top_level_members_count() {
        assert_eq!(
            id(r#"{"method":"x","params":{"id":3,"method":"y"},"id":"top"}"#),
            string("top")
        );
        assert_eq!(id(r#"{"method":"x","params":{"id":3}}"#), None);
        assert_eq!(id(r#"{"params":{"method":"x"},"id":3}"#), None);
    }
}
