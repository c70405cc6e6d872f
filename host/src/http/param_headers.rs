//! `Mcp-Param-*` headers (SEP-2243) checked against the body of a
//! 2026-07-28 `tools/call`.
//!
//! A tool may mark arguments with `x-mcp-header` in its input schema; a client
//! then repeats each one's value in `Mcp-Param-{Name}`, so that a gateway can
//! route on it without reading the body. A header that says something else
//! than the body would route the call by a value it never runs with, so each
//! disagreement is refused 400 with -32020: a value in the body without its
//! header, a header for a value absent or `null`, a different value, a value
//! with characters a header may not carry, or a `=?base64?…?=` wrapper that is
//! not canonical Base64 of UTF-8 text. A value without the whole wrapper is
//! literal. Integers are compared as numbers.
//!
//! rmcp 3.11 runs the same check only when its handler's `get_tool` knows the
//! schema, which Wharf's (a registry that changes under it) does not answer;
//! the transport knows nothing of plugins, so it asks a [`ParamHeaders`]
//! (which the CLI implements over the registry) for the tool's mapped
//! arguments, and reads the body only for a tool that has some. Legacy
//! requests carry no such headers and are not checked.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rmcp::model::{ErrorCode, ErrorData, RequestId};
use serde_json::Value;

use super::envelope::json_rpc_error;
use super::session::{Admitted, header_claims_stateless};

/// The prefix of a header-mapped argument's header.
const PARAM_PREFIX: &str = "Mcp-Param-";
/// The wrapper of a Base64-encoded header value.
const BASE64_OPEN: &str = "=?base64?";
const BASE64_CLOSE: &str = "?=";

/// One argument a tool mirrors in a header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamHeader {
    /// The `{Name}` of `Mcp-Param-{Name}`, as the tool declares it.
    pub header: String,
    /// Property names from the arguments' root to the value.
    pub path: Vec<String>,
}

/// What the transport asks about a tool's header-mapped arguments, answered
/// by whoever knows the tools (the transport knows nothing of plugins).
pub trait ParamHeaders: Send + Sync {
    /// The arguments `tool` mirrors in `Mcp-Param-*` headers; none for an
    /// unknown tool (which the server then refuses as unknown).
    fn param_headers(&self, tool: &str) -> Vec<ParamHeader>;
}

/// The check the gate runs, over the tools' [`ParamHeaders`].
#[derive(Clone)]
pub struct ParamHeaderCheck(pub Arc<dyn ParamHeaders>);

impl std::fmt::Debug for ParamHeaderCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ParamHeaderCheck")
    }
}

impl ParamHeaderCheck {
    /// Checks a `tools/call` of the stateless era whose tool maps arguments
    /// to headers: the refusal (400, -32020), else the request, its body put
    /// back. Any other request passes untouched.
    pub async fn admit(&self, admitted: Admitted) -> Result<Admitted, Response> {
        let mapped = match admitted.name.as_deref() {
            Some(tool)
                if admitted.method.as_deref() == Some("tools/call")
                    && header_claims_stateless(admitted.request.headers()) =>
            {
                self.0.param_headers(tool)
            }
            _ => Vec::new(),
        };
        if mapped.is_empty() {
            return Ok(admitted);
        }
        let Admitted {
            request,
            session,
            method,
            id,
            name,
        } = admitted;
        let (parts, body) = request.into_parts();
        // The envelope has read the body already: this takes its one chunk.
        let bytes = axum::body::to_bytes(body, usize::MAX)
            .await
            .unwrap_or_default();
        let arguments = serde_json::from_slice::<Value>(&bytes)
            .ok()
            .and_then(|mut body| {
                body.get_mut("params")?
                    .get_mut("arguments")
                    .map(Value::take)
            })
            .unwrap_or(Value::Null);
        if let Err(reason) = check(&parts.headers, &arguments, &mapped) {
            tracing::debug!(tool = name.as_deref(), "refused a tools/call: {reason}");
            let id = match &id {
                Value::String(s) => Some(RequestId::String(s.as_str().into())),
                Value::Number(n) => n.as_i64().map(RequestId::Number),
                _ => None,
            };
            return Err(json_rpc_error(
                StatusCode::BAD_REQUEST,
                id,
                ErrorData::new(
                    ErrorCode::HEADER_MISMATCH,
                    format!("Header mismatch: {reason}"),
                    None,
                ),
            ));
        }
        Ok(Admitted {
            request: Request::from_parts(parts, Body::from(bytes)),
            session,
            method,
            id,
            name,
        })
    }
}

/// The first disagreement between `headers` and `arguments` over `mapped`.
fn check(headers: &HeaderMap, arguments: &Value, mapped: &[ParamHeader]) -> Result<(), String> {
    for param in mapped {
        let header = format!("{PARAM_PREFIX}{}", param.header);
        let property = param.path.join(".");
        let given = headers.get(header.as_str());
        let value = param
            .path
            .iter()
            .try_fold(arguments, |value, key| value.get(key))
            .filter(|value| !value.is_null());
        match (given, value) {
            (None, None) => {}
            (None, Some(_)) => {
                return Err(format!(
                    "the {header} header is missing, but the body gives `{property}`"
                ));
            }
            (Some(_), None) => {
                return Err(format!(
                    "the {header} header is given, but `{property}` is absent or null in the body"
                ));
            }
            (Some(given), Some(value)) => {
                let Ok(text) = given.to_str() else {
                    return Err(format!(
                        "the {header} header holds characters a header value may not carry \
                         (use the =?base64?…?= form)"
                    ));
                };
                let text = decode(text).ok_or_else(|| {
                    format!("the {header} header is not valid =?base64?…?= (Base64 of UTF-8 text)")
                })?;
                if !same(&text, value) {
                    return Err(format!(
                        "the {header} header does not match `{property}` in the body"
                    ));
                }
            }
        }
    }
    Ok(())
}

/// A header value as text: unwrapped from `=?base64?…?=` (strict, canonical
/// padding), else literal. `None` for a wrapper around anything but Base64
/// of UTF-8 text.
fn decode(value: &str) -> Option<std::borrow::Cow<'_, str>> {
    let Some(inner) = value
        .strip_prefix(BASE64_OPEN)
        .and_then(|rest| rest.strip_suffix(BASE64_CLOSE))
    else {
        return Some(value.into());
    };
    let bytes = STANDARD.decode(inner).ok()?;
    String::from_utf8(bytes).ok().map(Into::into)
}

/// Whether a header's text stands for the body's `value`: a string as is,
/// a boolean as `true`/`false`, a number compared as a number.
fn same(text: &str, value: &Value) -> bool {
    match value {
        Value::String(s) => s == text,
        Value::Bool(b) => text == if *b { "true" } else { "false" },
        Value::Number(n) => match (n.as_i64(), text.parse::<i64>()) {
            (Some(a), Ok(b)) => a == b,
            _ => n
                .as_f64()
                .zip(text.parse::<f64>().ok())
                .is_some_and(|(a, b)| a == b),
        },
        // Annotations are only on primitive properties; the argument check
        // refuses anything else, so the header cannot stand for it.
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use axum::http::{HeaderName, HeaderValue};
    use serde_json::json;

    use super::*;

    fn region() -> Vec<ParamHeader> {
        vec![
            ParamHeader {
                header: "Region".into(),
                path: vec!["region".into()],
            },
            ParamHeader {
                header: "Count".into(),
                path: vec!["opts".into(), "count".into()],
            },
        ]
    }

    fn headers(pairs: &[(&str, &[u8])]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_bytes(value).unwrap(),
            );
        }
        map
    }

    #[test]
    fn matching_headers_pass_in_every_form() {
        let arguments = json!({"region": "Hello", "opts": {"count": 42}});
        for (place, count) in [
            (&b"Hello"[..], &b"42"[..]),
            (b"=?base64?SGVsbG8=?=", b"=?base64?NDI=?="),
        ] {
            let given = headers(&[("mcp-param-region", place), ("Mcp-Param-Count", count)]);
            assert_eq!(check(&given, &arguments, &region()), Ok(()));
        }
        // Without the whole wrapper a value is literal.
        let literal = json!({"region": "=?base64?SGVsbG8="});
        let given = headers(&[("mcp-param-region", b"=?base64?SGVsbG8=")]);
        assert_eq!(check(&given, &literal, &region()), Ok(()));
        // Absent and null values need no header; an undeclared header is not ours.
        let given = headers(&[("mcp-param-other", b"x")]);
        assert_eq!(check(&given, &json!({"region": null}), &region()), Ok(()));
        assert_eq!(check(&HeaderMap::new(), &Value::Null, &region()), Ok(()));
        // Non-ASCII text travels wrapped.
        let given = headers(&[("mcp-param-region", b"=?base64?Y2Fmw6k=?=")]);
        assert_eq!(check(&given, &json!({"region": "café"}), &region()), Ok(()));
        let given = headers(&[("mcp-param-count", b"7")]);
        assert_eq!(
            check(&given, &json!({"opts": {"count": 7.0}}), &region()),
            Ok(())
        );
    }

    #[test]
    fn each_disagreement_has_its_reason() {
        let arguments = json!({"region": "Hello"});
        let refuse = |pairs: &[(&str, &[u8])], arguments: &Value| {
            check(&headers(pairs), arguments, &region()).unwrap_err()
        };
        assert_eq!(
            refuse(&[], &arguments),
            "the Mcp-Param-Region header is missing, but the body gives `region`"
        );
        assert_eq!(
            refuse(
                &[("mcp-param-region", b"Hello"), ("mcp-param-count", b"1")],
                &arguments
            ),
            "the Mcp-Param-Count header is given, but `opts.count` is absent or null in the body"
        );
        assert_eq!(
            refuse(&[("mcp-param-region", b"Hola")], &arguments),
            "the Mcp-Param-Region header does not match `region` in the body"
        );
        assert_eq!(
            refuse(&[("mcp-param-region", b"hello")], &arguments),
            "the Mcp-Param-Region header does not match `region` in the body"
        );
        for bad in [
            &b"=?base64?SGVsbG8?="[..],
            b"=?base64?SGVs!!!bG8=?=",
            b"=?base64?/w==?=",
        ] {
            assert_eq!(
                refuse(&[("mcp-param-region", bad)], &arguments),
                "the Mcp-Param-Region header is not valid =?base64?…?= (Base64 of UTF-8 text)",
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        assert_eq!(
            refuse(
                &[("mcp-param-region", b"caf\xc3\xa9")],
                &json!({"region": "café"})
            ),
            "the Mcp-Param-Region header holds characters a header value may not carry \
             (use the =?base64?…?= form)"
        );
        let count = json!({"region": "Hello", "opts": {"count": 3}});
        assert_eq!(
            refuse(
                &[("mcp-param-region", b"Hello"), ("mcp-param-count", b"4")],
                &count
            ),
            "the Mcp-Param-Count header does not match `opts.count` in the body"
        );
        let flag = vec![ParamHeader {
            header: "Dry".into(),
            path: vec!["dry".into()],
        }];
        let given = headers(&[("mcp-param-dry", b"True")]);
        assert_eq!(
            check(&given, &json!({"dry": true}), &flag).unwrap_err(),
            "the Mcp-Param-Dry header does not match `dry` in the body"
        );
        let given = headers(&[("mcp-param-dry", b"true")]);
        assert_eq!(check(&given, &json!({"dry": true}), &flag), Ok(()));
    }
}
