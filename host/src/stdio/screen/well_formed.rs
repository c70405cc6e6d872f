//! The fast path of the line screen: a request that is plainly well formed
//! skips the full screen.
//!
//! The full screen parses a line into a `Value`, checks it, and has rmcp parse
//! that `Value` again; for the usual request that doubles the JSON work. Here a
//! borrowing probe checks the same things (`jsonrpc` is `"2.0"`, `id` a string
//! or an integer, `method` one rmcp knows, `params` absent or an object)
//! without building anything. Whatever does not pass, or does not parse into
//! one of rmcp's typed requests, takes the full screen, which words the error.
//!
//! For the frequent methods the line is then parsed straight into that
//! method's request type. rmcp's own parse of a message tries each of its
//! request types in turn (an untagged enum of twenty-odd), building an error for
//! every one that does not fit: a `tools/call` is the fourteenth. Knowing the
//! method from the probe, the result is the same (a unit test compares the
//! two) for about a third of the work.
//!
//! The probe and the typed parses skip unknown members unread, and serde_json
//! does not check the bytes of a string it skips: a line must first be UTF-8
//! with no `\uD800`-`\uDFFF` escape (a surrogate, paired or lone) to take this
//! path, so that a line the full screen refuses is never served here.

use std::borrow::Cow;
use std::fmt;

use rmcp::model::{
    CallToolRequest, ClientJsonRpcMessage, ClientRequest, GetPromptRequest, JsonRpcRequest,
    ListToolsRequest, ReadResourceRequest, RequestId,
};
use serde::Deserialize;
use serde::de::{self, DeserializeOwned, Deserializer, IgnoredAny, MapAccess, Visitor};

/// The parsed request, if `line` is a plainly well-formed request for one of
/// `known` methods.
pub(super) fn request(line: &[u8], known: &[&str]) -> Option<ClientJsonRpcMessage> {
    if std::str::from_utf8(line).is_err() || has_surrogate_escape(line) {
        return None;
    }
    let probe: Probe<'_> = serde_json::from_slice(line).ok()?;
    let (Some("2.0"), Some(Id(id)), Some(method)) =
        (probe.jsonrpc.as_deref(), probe.id, probe.method.as_deref())
    else {
        return None;
    };
    if !known.contains(&method) {
        return None;
    }
    let request = match method {
        "tools/call" => ClientRequest::CallToolRequest(typed::<CallToolRequest>(line)?),
        "tools/list" => ClientRequest::ListToolsRequest(typed::<ListToolsRequest>(line)?),
        "resources/read" => ClientRequest::ReadResourceRequest(typed::<ReadResourceRequest>(line)?),
        "prompts/get" => ClientRequest::GetPromptRequest(typed::<GetPromptRequest>(line)?),
        _ => return any_known(line),
    };
    Some(ClientJsonRpcMessage::Request(JsonRpcRequest::new(
        id, request,
    )))
}

/// Whether `line` holds a `\u` escape of a UTF-16 surrogate (`\uD800` to
/// `\uDFFF`). An escaped backslash before a `u` counts too: a false alarm only
/// sends the line to the full screen.
fn has_surrogate_escape(line: &[u8]) -> bool {
    line.windows(4).any(|w| {
        matches!(
            w,
            [
                b'\\',
                b'u',
                b'd' | b'D',
                b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F',
            ]
        )
    })
}

/// The request of one method, from the whole line (the envelope's other fields
/// are ignored, as rmcp's types do).
fn typed<R: DeserializeOwned>(line: &[u8]) -> Option<R> {
    serde_json::from_slice(line).ok()
}

/// rmcp's own parse, for the methods with no typed path here.
fn any_known(line: &[u8]) -> Option<ClientJsonRpcMessage> {
    match serde_json::from_slice::<ClientJsonRpcMessage>(line).ok()? {
        ClientJsonRpcMessage::Request(request)
            if !matches!(request.request, ClientRequest::CustomRequest(_)) =>
        {
            Some(ClientJsonRpcMessage::Request(request))
        }
        _ => None,
    }
}

/// The envelope fields the screen checks; any other field is skipped unread.
/// A field of the wrong type fails the probe.
#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(borrow)]
    jsonrpc: Option<Cow<'a, str>>,
    id: Option<Id>,
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    /// Checked by deserialising: an object, or absent (`null` fails).
    #[serde(default, rename = "params")]
    _params: Object,
}

/// An `id` that is a string or an integer (JSON-RPC allows no other in MCP),
/// one that fits rmcp's `i64`.
struct Id(RequestId);

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct IdVisitor;
        impl Visitor<'_> for IdVisitor {
            type Value = Id;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an integer")
            }
            fn visit_i64<E: de::Error>(self, id: i64) -> Result<Id, E> {
                Ok(Id(RequestId::Number(id)))
            }
            fn visit_u64<E: de::Error>(self, id: u64) -> Result<Id, E> {
                i64::try_from(id)
                    .map(|id| Id(RequestId::Number(id)))
                    .map_err(|_| E::custom("an id too large"))
            }
            fn visit_str<E: de::Error>(self, id: &str) -> Result<Id, E> {
                Ok(Id(RequestId::String(id.into())))
            }
        }
        deserializer.deserialize_any(IdVisitor)
    }
}

/// Any JSON object, skipped unread (the default stands for an absent one).
#[derive(Default)]
struct Object;

impl<'de> Deserialize<'de> for Object {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ObjectVisitor;
        impl<'de> Visitor<'de> for ObjectVisitor {
            type Value = Object;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Object, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Object)
            }
        }
        deserializer.deserialize_map(ObjectVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWN: &[&str] = &["tools/call", "tools/list"];

    fn fast(line: &str) -> bool {
        request(line.as_bytes(), KNOWN).is_some()
    }

    /// Found by the `stdio_screen` fuzz target (fuzz/artifacts-found): bytes
    /// in a skipped member were never checked, so rmcp served a line the full
    /// screen answers -32700.
    #[test]
    fn a_line_with_bad_text_in_a_skipped_member_takes_the_full_screen() {
        let mut bad_utf8 =
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","p2rams":{"a"#.to_vec();
        bad_utf8.extend_from_slice(&[0x95, 0x9e]);
        bad_utf8.extend_from_slice(br#"":1}}"#);
        assert!(request(&bad_utf8, KNOWN).is_none());
        assert!(!fast(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","x":"\ud800"}"#
        ));
        assert!(!fast(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","x":"\uDFFF"}"#
        ));
        // A surrogate pair is valid JSON; it takes the full screen all the same.
        assert!(!fast(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","x":"\ud83d\ude00"}"#
        ));
        // Other escapes keep the fast path.
        assert!(fast(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","x":"\u00e9\n"}"#
        ));
    }

    #[test]
    fn a_plain_request_takes_the_fast_path() {
        assert!(fast(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,{"b":null}]}}}"#
        ));
        assert!(fast(
            r#"{"id":"a\"b","method":"tools/list","jsonrpc":"2.0"}"#
        ));
        assert!(fast(
            r#"{"jsonrpc":"2.0","id":-7,"method":"tools/list","params":{},"extra":[1]}"#
        ));
    }

    /// Every method with a typed path, and one without.
    const TYPED: &[&str] = &[
        "tools/call",
        "tools/list",
        "resources/read",
        "prompts/get",
        "initialize",
    ];

    #[test]
    fn the_typed_path_parses_as_rmcp_does() {
        let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"progressToken":"p1"}"#;
        let lines = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#.to_string(),
            format!(r#"{{"jsonrpc":"2.0","id":"a\"b","method":"tools/call","params":{{"name":"echo","arguments":{{"n":[1,2.5,null]}},{meta}}}}}"#),
            format!(r#"{{"params":{{{meta},"name":"x","inputResponses":{{"k":{{"action":"decline"}}}},"requestState":"s","extra":true}},"method":"tools/call","id":9223372036854775807,"jsonrpc":"2.0","other":1}}"#),
            r#"{"jsonrpc":"2.0","id":-3,"method":"tools/call","params":{"name":"no-arguments"}}"#.to_string(),
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#.to_string(),
            format!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{{"cursor":"c",{meta}}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{{"uri":"wharf://x/y",{meta}}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{{"name":"p","arguments":{{"a":"b"}},{meta}}}}}"#),
            r#"{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#.to_string(),
        ];
        for line in &lines {
            let fast = request(line.as_bytes(), TYPED).unwrap_or_else(|| panic!("{line}"));
            let rmcp: ClientJsonRpcMessage = serde_json::from_str(line).unwrap();
            assert_eq!(
                serde_json::to_value(&fast).unwrap(),
                serde_json::to_value(&rmcp).unwrap(),
                "{line}"
            );
            let (ClientJsonRpcMessage::Request(fast), ClientJsonRpcMessage::Request(rmcp)) =
                (fast, rmcp)
            else {
                panic!("not a request: {line}");
            };
            assert_eq!(fast.id, rmcp.id, "{line}");
            assert_eq!(fast.request.method(), rmcp.request.method(), "{line}");
            assert_eq!(
                rmcp::model::GetMeta::get_meta(&fast.request).0,
                rmcp::model::GetMeta::get_meta(&rmcp.request).0,
                "{line}"
            );
        }
    }

    #[test]
    fn an_id_out_of_rmcp_s_range_takes_the_full_screen() {
        assert!(!fast(
            r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"tools/list"}"#
        ));
    }

    #[test]
    fn anything_unusual_takes_the_full_screen() {
        for line in [
            r#"{"jsonrpc":"2.0","method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":true,"method":"tools/list"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"tools/list"}"#,
            r#"{"id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"no/such"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":3}}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list"}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list""#,
            "",
        ] {
            assert!(!fast(line), "{line}");
        }
    }
}
