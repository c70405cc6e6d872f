//! The fast path of the line screen: a request that is plainly well formed goes
//! straight to rmcp's parser, as it would without Wharf's screen.
//!
//! The full screen parses a line into a `Value`, checks it, and has rmcp parse
//! that `Value` again; for the usual request that doubles the JSON work. Here a
//! borrowing probe checks the same things (`jsonrpc` is `"2.0"`, `id` a string
//! or an integer, `method` one rmcp knows, `params` absent or an object)
//! without building anything, and rmcp parses the line itself. Whatever does not
//! pass, or does not parse into one of rmcp's typed requests, takes the full
//! screen, which words the error.

use std::borrow::Cow;
use std::fmt;

use rmcp::model::{ClientJsonRpcMessage, ClientRequest};
use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};

/// The parsed request, if `line` is a plainly well-formed request for one of
/// `known` methods.
pub(super) fn request(line: &[u8], known: &[&str]) -> Option<ClientJsonRpcMessage> {
    let probe: Probe<'_> = serde_json::from_slice(line).ok()?;
    let plain = probe.jsonrpc.as_deref() == Some("2.0")
        && probe.id.is_some()
        && probe.method.as_deref().is_some_and(|m| known.contains(&m));
    if !plain {
        return None;
    }
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

/// An `id` that is a string or an integer (JSON-RPC allows no other in MCP).
struct Id;

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct IdVisitor;
        impl Visitor<'_> for IdVisitor {
            type Value = Id;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an integer")
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Id, E> {
                Ok(Id)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Id, E> {
                Ok(Id)
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Id, E> {
                Ok(Id)
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
