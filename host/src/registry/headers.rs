//! `x-mcp-header` (SEP-2243): the tool arguments a client also sends as
//! `Mcp-Param-{Name}` HTTP headers, so that a gateway can route a call
//! without reading its body.
//!
//! A client drops a tool whose annotations break the rules from its
//! `tools/list`, silently; so Wharf checks them when a plugin is listed and
//! leaves such a tool out with a warning that says which rule and where
//! ([`ToolSet::with_naming`](super::ToolSet::with_naming)). The rules: on a
//! property (not the root), reached from the root through `properties` keys
//! alone (not inside `items`, `anyOf`, `$defs`, ...), a non-empty RFC 9110
//! token, unique without regard to case, on a `string`, `integer` or
//! `boolean` property only.

use serde_json::{Map, Value};

/// The annotation's key in a property schema.
pub const ANNOTATION: &str = "x-mcp-header";

/// One argument mirrored in a header: `Mcp-Param-{header}` carries the value
/// at `path` (property names from the root) of the arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamHeader {
    /// The name as the tool declares it (`Region` for `Mcp-Param-Region`).
    pub header: String,
    /// The property names from the arguments' root to the value.
    pub path: Vec<String>,
}

/// Why a tool's `x-mcp-header` annotations are refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderAnnotationError {
    #[error("x-mcp-header must annotate a property, not the schema's root")]
    OnRoot,
    #[error(
        "x-mcp-header at {0} is not on a property reached through `properties` alone from the root"
    )]
    OffChain(String),
    #[error("x-mcp-header of property `{0}` must be a string")]
    NotAString(String),
    #[error("x-mcp-header of property `{0}` is empty")]
    Empty(String),
    #[error(
        "x-mcp-header `{header}` of property `{property}` is not an HTTP token (RFC 9110: letters, digits and !#$%&'*+-.^_`|~)"
    )]
    NotAToken { property: String, header: String },
    #[error(
        "x-mcp-header `{header}` of property `{property}` repeats `{first}` (header names ignore case)"
    )]
    Duplicate {
        property: String,
        header: String,
        first: String,
    },
    #[error(
        "x-mcp-header of property `{property}` needs type string, integer or boolean, not {found}"
    )]
    NotPrimitive { property: String, found: String },
}

/// The header-mapped arguments an input schema declares, in the order of its
/// properties; an error for the first annotation that breaks the rules.
pub fn param_headers(
    schema: &Map<String, Value>,
) -> Result<Vec<ParamHeader>, HeaderAnnotationError> {
    if schema.contains_key(ANNOTATION) {
        return Err(HeaderAnnotationError::OnRoot);
    }
    if let Some(pointer) = off_chain(schema, "", true) {
        return Err(HeaderAnnotationError::OffChain(pointer));
    }
    let mut found: Vec<ParamHeader> = Vec::new();
    collect(schema, &mut Vec::new(), &mut found)?;
    Ok(found)
}

/// Walks the `properties` chains of `schema`, checking each annotation.
fn collect(
    schema: &Map<String, Value>,
    path: &mut Vec<String>,
    found: &mut Vec<ParamHeader>,
) -> Result<(), HeaderAnnotationError> {
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return Ok(());
    };
    for (name, property) in properties {
        let Value::Object(property) = property else {
            continue;
        };
        path.push(name.clone());
        if let Some(header) = property.get(ANNOTATION) {
            let dotted = path.join(".");
            let Value::String(header) = header else {
                return Err(HeaderAnnotationError::NotAString(dotted));
            };
            if header.is_empty() {
                return Err(HeaderAnnotationError::Empty(dotted));
            }
            if !header.bytes().all(is_tchar) {
                return Err(HeaderAnnotationError::NotAToken {
                    property: dotted,
                    header: header.clone(),
                });
            }
            if let Some(first) = found.iter().find(|f| f.header.eq_ignore_ascii_case(header)) {
                return Err(HeaderAnnotationError::Duplicate {
                    property: dotted,
                    header: header.clone(),
                    first: first.header.clone(),
                });
            }
            match property.get("type") {
                Some(Value::String(t))
                    if matches!(t.as_str(), "string" | "integer" | "boolean") => {}
                other => {
                    return Err(HeaderAnnotationError::NotPrimitive {
                        property: dotted,
                        found: other.map_or_else(|| "no type".to_owned(), Value::to_string),
                    });
                }
            }
            found.push(ParamHeader {
                header: header.clone(),
                path: path.clone(),
            });
        }
        collect(property, path, found)?;
        path.pop();
    }
    Ok(())
}

/// The JSON pointer of the first annotation in `schema` that is not on a
/// `properties` chain from the root (`on_chain`: whether `schema` itself is
/// the root or such a property).
fn off_chain(schema: &Map<String, Value>, at: &str, on_chain: bool) -> Option<String> {
    for (key, value) in schema {
        let here = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
        let found = match key.as_str() {
            ANNOTATION if !on_chain => Some(at.to_owned()),
            ANNOTATION => None,
            "properties" => value.as_object().and_then(|properties| {
                properties.iter().find_map(|(name, property)| {
                    let at = format!("{here}/{}", name.replace('~', "~0").replace('/', "~1"));
                    property
                        .as_object()
                        .and_then(|property| off_chain(property, &at, on_chain))
                })
            }),
            // Instance data and property names, not schemas.
            "default" | "const" | "enum" | "examples" | "required" | "dependentRequired" => None,
            _ => off_chain_in(value, &here),
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

/// [`off_chain`] for any value below a keyword other than `properties`.
fn off_chain_in(value: &Value, at: &str) -> Option<String> {
    match value {
        Value::Object(map) => off_chain(map, at, false),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| off_chain_in(item, &format!("{at}/{i}"))),
        _ => None,
    }
}

/// An RFC 9110 `tchar`.
fn is_tchar(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn headers_of(schema: Value) -> Result<Vec<ParamHeader>, String> {
        param_headers(schema.as_object().unwrap()).map_err(|e| e.to_string())
    }

    fn header(name: &str, path: &[&str]) -> ParamHeader {
        ParamHeader {
            header: name.into(),
            path: path.iter().map(|p| (*p).to_owned()).collect(),
        }
    }

    #[test]
    fn annotated_primitives_are_found_nested_ones_too() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "count": {"type": "integer", "x-mcp-header": "Count"},
            "plain": {"type": "string"},
            "target": {"type": "object", "properties": {
                "dry": {"type": "boolean", "x-mcp-header": "Dry-Run"}
            }}
        }});
        assert_eq!(
            headers_of(schema).unwrap(),
            vec![
                header("Count", &["count"]),
                header("Region", &["region"]),
                header("Dry-Run", &["target", "dry"]),
            ]
        );
        assert_eq!(headers_of(json!({"type": "object"})).unwrap(), vec![]);
    }

    #[test]
    fn each_rule_has_its_error() {
        let on = |property: Value| json!({"type": "object", "properties": {"p": property}});
        assert_eq!(
            headers_of(json!({"type": "object", "x-mcp-header": "A"})).unwrap_err(),
            "x-mcp-header must annotate a property, not the schema's root"
        );
        assert_eq!(
            headers_of(on(json!({"type": "string", "x-mcp-header": 7}))).unwrap_err(),
            "x-mcp-header of property `p` must be a string"
        );
        assert_eq!(
            headers_of(on(json!({"type": "string", "x-mcp-header": ""}))).unwrap_err(),
            "x-mcp-header of property `p` is empty"
        );
        assert_eq!(
            headers_of(on(json!({"type": "string", "x-mcp-header": "Bad Name"}))).unwrap_err(),
            "x-mcp-header `Bad Name` of property `p` is not an HTTP token \
             (RFC 9110: letters, digits and !#$%&'*+-.^_`|~)"
        );
        assert_eq!(
            headers_of(on(json!({"type": "string", "x-mcp-header": "A\r\nB"}))).unwrap_err(),
            "x-mcp-header `A\r\nB` of property `p` is not an HTTP token \
             (RFC 9110: letters, digits and !#$%&'*+-.^_`|~)"
        );
        assert_eq!(
            headers_of(on(json!({"type": "number", "x-mcp-header": "N"}))).unwrap_err(),
            "x-mcp-header of property `p` needs type string, integer or boolean, not \"number\""
        );
        assert_eq!(
            headers_of(on(json!({"x-mcp-header": "N"}))).unwrap_err(),
            "x-mcp-header of property `p` needs type string, integer or boolean, not no type"
        );
        assert_eq!(
            headers_of(on(json!({"type": ["string", "null"], "x-mcp-header": "N"}))).unwrap_err(),
            "x-mcp-header of property `p` needs type string, integer or boolean, not [\"string\",\"null\"]"
        );
        let twice = json!({"type": "object", "properties": {
            "a": {"type": "string", "x-mcp-header": "Region"},
            "b": {"type": "string", "x-mcp-header": "REGION"}
        }});
        assert_eq!(
            headers_of(twice).unwrap_err(),
            "x-mcp-header `REGION` of property `b` repeats `Region` (header names ignore case)"
        );
    }

    #[test]
    fn only_properties_chains_may_carry_it() {
        let in_items = json!({"type": "object", "properties": {
            "list": {"type": "array", "items": {"type": "string", "x-mcp-header": "X"}}
        }});
        assert_eq!(
            headers_of(in_items).unwrap_err(),
            "x-mcp-header at /properties/list/items is not on a property reached \
             through `properties` alone from the root"
        );
        let in_any_of = json!({"type": "object", "anyOf": [
            {"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}
        ]});
        assert_eq!(
            headers_of(in_any_of).unwrap_err(),
            "x-mcp-header at /anyOf/0/properties/a is not on a property reached \
             through `properties` alone from the root"
        );
        let in_defs = json!({"type": "object", "$defs": {
            "R": {"type": "string", "x-mcp-header": "R"}
        }});
        assert_eq!(
            headers_of(in_defs).unwrap_err(),
            "x-mcp-header at /$defs/R is not on a property reached \
             through `properties` alone from the root"
        );
        // A default that happens to hold the key is data, not an annotation.
        let in_default = json!({"type": "object", "properties": {
            "o": {"type": "object", "default": {"x-mcp-header": "no"}}
        }});
        assert_eq!(headers_of(in_default).unwrap(), vec![]);
    }
}
