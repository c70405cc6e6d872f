//! One pass over a POST body: is it JSON that rmcp can read, and what does
//! its JSON-RPC envelope say?
//!
//! rmcp reads a body by buffering the whole document (every string checked as
//! UTF-8 without lone surrogates, every number in range, at most serde_json's
//! nesting limit), and answers anything it cannot read with 415 and a plain-text
//! body. The probe walks the document the same way, with the same parser and
//! limits, so a body it accepts is one rmcp can read; on the way it notes the
//! envelope fields (`jsonrpc`, `id`, `method`, `params`, `result`, `error`) and
//! the protocol version claimed in `params._meta`. It builds nothing but the
//! few strings it keeps (borrowed when the body has no escapes), so a large
//! argument costs no memory here.
//!
//! When a body is not readable, [`readable_id`] looks for the request `id`
//! alone, skipping everything else unchecked: a body too deep, or with `1e400`,
//! or with a bad string somewhere else still has an id to answer with
//! (JSON-RPC 2.0; MCP 2026-07-28 omits the id only when it cannot be read).

use std::borrow::Cow;
use std::fmt;

use rmcp::model::RequestId;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// The key in `params._meta` that claims a protocol revision.
use crate::protocol::META_PROTOCOL_VERSION as PROTOCOL_VERSION_KEY;

/// Visitor methods for every JSON scalar (`null`, booleans, numbers, strings),
/// each answering `$value`: the scalars a probe reads but does not keep.
macro_rules! scalars_give {
    ($value:expr) => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok($value)
        }
    };
}

/// What the probe found in a readable body.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Envelope<'a> {
    /// Whether the body is a JSON object (anything else is not a message).
    pub object: bool,
    /// Whether the body is a JSON array (a batch, when it is not empty).
    pub array: bool,
    pub jsonrpc: Option<Scalar<'a>>,
    pub id: Option<Scalar<'a>>,
    pub method: Option<Scalar<'a>>,
    pub params: Option<Params<'a>>,
    pub result: bool,
    pub error: bool,
}

/// A field's value, as far as the envelope checks need it.
#[derive(Debug, PartialEq)]
pub(super) enum Scalar<'a> {
    Str(Cow<'a, str>),
    /// An integer that fits rmcp's `i64` request ids (`27.0` is 27, as rmcp reads it).
    Int(i64),
    /// Anything else: `null`, a boolean, a fraction, an integer out of range,
    /// an array or an object.
    Other,
}

impl Scalar<'_> {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Scalar::Str(text) => Some(text),
            _ => None,
        }
    }

    /// The value as a request id: a string or an integer.
    pub fn request_id(&self) -> Option<RequestId> {
        match self {
            Scalar::Str(text) => Some(RequestId::String(text.as_ref().into())),
            Scalar::Int(number) => Some(RequestId::Number(*number)),
            Scalar::Other => None,
        }
    }
}

/// `params`: an object (with the revision its `_meta` claims, if any) or not.
#[derive(Debug, PartialEq)]
pub(super) enum Params<'a> {
    Object {
        protocol_version: Option<Cow<'a, str>>,
    },
    NotAnObject,
}

/// Walks `body` as rmcp would read it; the error is serde_json's.
pub(super) fn probe(body: &[u8]) -> Result<Envelope<'_>, serde_json::Error> {
    serde_json::from_slice(body)
}

impl<'de> Deserialize<'de> for Envelope<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(EnvelopeVisitor)
    }
}

struct EnvelopeVisitor;

impl<'de> Visitor<'de> for EnvelopeVisitor {
    type Value = Envelope<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Envelope<'de>, A::Error> {
        let mut envelope = Envelope {
            object: true,
            ..Envelope::default()
        };
        // A repeated key counts once, the last one winning, as in serde_json's `Value`.
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Jsonrpc => envelope.jsonrpc = Some(map.next_value()?),
                Key::Id => envelope.id = Some(map.next_value()?),
                Key::Method => envelope.method = Some(map.next_value()?),
                Key::Params => envelope.params = Some(map.next_value()?),
                Key::Result => envelope.result = map.next_value::<Checked>().map(|_| true)?,
                Key::Error => envelope.error = map.next_value::<Checked>().map(|_| true)?,
                Key::Other => {
                    map.next_value::<Checked>()?;
                }
            }
        }
        Ok(envelope)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Envelope<'de>, A::Error> {
        CheckedVisitor.visit_seq(seq)?;
        Ok(Envelope {
            array: true,
            ..Envelope::default()
        })
    }

    scalars_give!(Envelope::default());
}

/// The integer a number in float form (`27.0`, `1e2`) stands for, as rmcp
/// reads request ids: one an `f64` represents exactly (below 2^53).
fn integral(number: f64) -> Option<i64> {
    const MAX_EXACT: f64 = 9_007_199_254_740_992.0;
    (number.fract() == 0.0 && number.abs() < MAX_EXACT).then_some(number as i64)
}

/// The envelope keys the probe keeps; any other key is checked and dropped.
enum Key {
    Jsonrpc,
    Id,
    Method,
    Params,
    Result,
    Error,
    Other,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E>(self, key: &str) -> Result<Key, E> {
                Ok(match key {
                    "jsonrpc" => Key::Jsonrpc,
                    "id" => Key::Id,
                    "method" => Key::Method,
                    "params" => Key::Params,
                    "result" => Key::Result,
                    "error" => Key::Error,
                    _ => Key::Other,
                })
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

impl<'de> Deserialize<'de> for Scalar<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ScalarVisitor;
        impl<'de> Visitor<'de> for ScalarVisitor {
            type Value = Scalar<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Str(Cow::Borrowed(text)))
            }
            fn visit_str<E>(self, text: &str) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Str(Cow::Owned(text.to_owned())))
            }
            fn visit_i64<E>(self, number: i64) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Int(number))
            }
            fn visit_u64<E>(self, number: u64) -> Result<Scalar<'de>, E> {
                Ok(i64::try_from(number).map_or(Scalar::Other, Scalar::Int))
            }
            fn visit_f64<E>(self, number: f64) -> Result<Scalar<'de>, E> {
                Ok(integral(number).map_or(Scalar::Other, Scalar::Int))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Other)
            }
            fn visit_unit<E>(self) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Other)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Scalar<'de>, A::Error> {
                CheckedVisitor.visit_seq(seq).map(|_| Scalar::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Scalar<'de>, A::Error> {
                CheckedVisitor.visit_map(map).map(|_| Scalar::Other)
            }
        }
        deserializer.deserialize_any(ScalarVisitor)
    }
}

impl<'de> Deserialize<'de> for Params<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ParamsVisitor;
        impl<'de> Visitor<'de> for ParamsVisitor {
            type Value = Params<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Params<'de>, A::Error> {
                let mut protocol_version = None;
                while let Some(key) = map.next_key::<Scalar<'de>>()? {
                    if key.as_str() == Some("_meta") {
                        protocol_version = map.next_value::<MetaVersion>()?.0;
                    } else {
                        map.next_value::<Checked>()?;
                    }
                }
                Ok(Params::Object { protocol_version })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Params<'de>, A::Error> {
                CheckedVisitor.visit_seq(seq).map(|_| Params::NotAnObject)
            }
            scalars_give!(Params::NotAnObject);
        }
        deserializer.deserialize_any(ParamsVisitor)
    }
}

/// `params._meta`'s protocol revision, when `_meta` is an object naming one as a string.
struct MetaVersion<'a>(Option<Cow<'a, str>>);

impl<'de> Deserialize<'de> for MetaVersion<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MetaVisitor;
        impl<'de> Visitor<'de> for MetaVisitor {
            type Value = MetaVersion<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<MetaVersion<'de>, A::Error> {
                let mut version = None;
                while let Some(key) = map.next_key::<Scalar<'de>>()? {
                    if key.as_str() == Some(PROTOCOL_VERSION_KEY) {
                        version = match map.next_value::<Scalar<'de>>()? {
                            Scalar::Str(text) => Some(text),
                            _ => None,
                        };
                    } else {
                        map.next_value::<Checked>()?;
                    }
                }
                Ok(MetaVersion(version))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<MetaVersion<'de>, A::Error> {
                CheckedVisitor.visit_seq(seq).map(|_| MetaVersion(None))
            }
            scalars_give!(MetaVersion(None));
        }
        deserializer.deserialize_any(MetaVisitor)
    }
}

/// Any JSON value, read in full (strings as text, numbers as numbers, at
/// serde_json's nesting limit) and dropped: `IgnoredAny` would skip it
/// unchecked.
struct Checked;

impl<'de> Deserialize<'de> for Checked {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(CheckedVisitor)
    }
}

struct CheckedVisitor;

impl<'de> Visitor<'de> for CheckedVisitor {
    type Value = Checked;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    scalars_give!(Checked);
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Checked, A::Error> {
        while seq.next_element::<Checked>()?.is_some() {}
        Ok(Checked)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Checked, A::Error> {
        while map.next_entry::<Checked, Checked>()?.is_some() {}
        Ok(Checked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(depth: usize) -> String {
        format!("{}{}", "[".repeat(depth), "]".repeat(depth))
    }

    #[test]
    fn a_request_s_envelope_is_read() {
        let body = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x",
            "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}},"extra":[1,{"a":null}]}"#;
        let envelope = probe(body).unwrap();
        assert_eq!(
            envelope,
            Envelope {
                object: true,
                jsonrpc: Some(Scalar::Str("2.0".into())),
                id: Some(Scalar::Int(7)),
                method: Some(Scalar::Str("tools/call".into())),
                params: Some(Params::Object {
                    protocol_version: Some("2026-07-28".into())
                }),
                ..Envelope::default()
            }
        );
    }

    #[test]
    fn ids_of_every_type() {
        let check = |raw: &str, expected: Scalar<'static>| {
            let body = format!(r#"{{"id":{raw}}}"#);
            assert_eq!(probe(body.as_bytes()).unwrap().id, Some(expected), "{raw}");
        };
        check(r#""a""#, Scalar::Str("a".into()));
        check(r#""a\"b""#, Scalar::Str("a\"b".into()));
        check("-9223372036854775808", Scalar::Int(i64::MIN));
        check("27.0", Scalar::Int(27));
        check("1e2", Scalar::Int(100));
        for other in [
            "null",
            "true",
            "1.5",
            "1e300",
            "9223372036854775808",
            "[]",
            "{}",
        ] {
            check(other, Scalar::Other);
        }
    }

    #[test]
    fn what_rmcp_cannot_read_is_not_read_here_either() {
        let depth = |n: usize| format!(r#"{{"id":1,"params":{{"deep":{}}}}}"#, nested(n));
        // serde_json reads at most 127 levels; the body and params take two.
        assert!(probe(depth(125).as_bytes()).is_ok());
        let error = probe(depth(126).as_bytes()).unwrap_err();
        assert!(
            error.to_string().starts_with("recursion limit exceeded"),
            "{error}"
        );
        for bad in [
            &br#"{"id":1,"x":1e400}"#[..],
            br#"{"id":1,"x":"\ud800"}"#,
            b"{\"id\":1,\"x\":\"\xff\"}",
            b"{\"id\":1,\"x\":1}trailing",
            br#"{"id":1,"x":"#,
        ] {
            assert!(probe(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }
}
