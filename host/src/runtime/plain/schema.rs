//! JSON Schemas (2020-12) for WIT types: the tool's input schema from its
//! parameters, its output schema from its result.
//!
//! The mapping (also in docs/plugins.md): records and parameter lists are closed
//! objects whose `option<T>` members are optional and accept `null`; other
//! options are `T` or `null`; lists are arrays; tuples are arrays with
//! `prefixItems`; enums are strings; flags are arrays of unique names; variants
//! and results are externally tagged objects (`{"case": payload}`, `{"ok": v}`),
//! and a payloadless variant case may also be given as its bare name.

use serde_json::{Map, Value, json};

use super::shape::{Case, Field, Named, Signature, WitType};

/// The dialect every generated root schema declares.
pub const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// The input schema of a function: an object keyed by parameter names.
pub fn input_schema(sig: &Signature) -> Map<String, Value> {
    let fields = sig
        .params
        .iter()
        .map(|(name, ty)| (name.as_str(), ty, None));
    let mut schema = Map::new();
    schema.insert("$schema".into(), DIALECT.into());
    schema.extend(object_schema(fields));
    schema
}

/// The output schema of a function, `{"result": ...}`, or `None` when there is no
/// structured result: no result type, or `result<_, E>` whose `ok` carries nothing.
pub fn output_schema(sig: &Signature) -> Option<Map<String, Value>> {
    let value = match sig.result.as_ref()? {
        WitType::Result { ok, .. } => ok.as_deref()?,
        other => other,
    };
    let schema = json!({
        "$schema": DIALECT,
        "type": "object",
        "properties": {"result": type_schema(value)},
        "required": ["result"],
        "additionalProperties": false,
    });
    match schema {
        Value::Object(map) => Some(map),
        _ => unreachable!("built as an object"),
    }
}

/// The schema of one WIT type.
pub fn type_schema(ty: &WitType) -> Value {
    match ty {
        WitType::Bool => json!({"type": "boolean"}),
        WitType::S8 => int(i8::MIN, i8::MAX),
        WitType::U8 => int(u8::MIN, u8::MAX),
        WitType::S16 => int(i16::MIN, i16::MAX),
        WitType::U16 => int(u16::MIN, u16::MAX),
        WitType::S32 => int(i32::MIN, i32::MAX),
        WitType::U32 => int(u32::MIN, u32::MAX),
        WitType::S64 => int(i64::MIN, i64::MAX),
        WitType::U64 => int(u64::MIN, u64::MAX),
        // JSON cannot exceed a double; an f32 can: its range is stated, and
        // checked again when the arguments are converted.
        WitType::F32 => json!({
            "type": "number",
            "minimum": -f64::from(f32::MAX),
            "maximum": f64::from(f32::MAX),
        }),
        WitType::F64 => json!({"type": "number"}),
        WitType::Char => json!({"type": "string", "minLength": 1, "maxLength": 1}),
        WitType::String => json!({"type": "string"}),
        WitType::List(item) => json!({"type": "array", "items": type_schema(item)}),
        WitType::Tuple(items) => json!({
            "type": "array",
            "prefixItems": items.iter().map(type_schema).collect::<Vec<_>>(),
            "minItems": items.len(),
            "maxItems": items.len(),
            "items": false,
        }),
        WitType::Option(inner) => nullable(type_schema(inner)),
        WitType::Result { ok, err } => json!({"oneOf": [
            tagged("ok", ok.as_deref().map(type_schema), None),
            tagged("err", err.as_deref().map(type_schema), None),
        ]}),
        WitType::Record(record) => {
            let fields = record
                .items
                .iter()
                .map(|f: &Field| (f.name.as_str(), &f.ty, f.docs.as_deref()));
            described(Value::Object(object_schema(fields)), record)
        }
        WitType::Variant(variant) => described(variant_schema(&variant.items), variant),
        WitType::Enum(cases) => described(json!({"type": "string", "enum": cases.items}), cases),
        WitType::Flags(flags) => described(
            json!({
                "type": "array",
                "items": {"type": "string", "enum": flags.items},
                "uniqueItems": true,
            }),
            flags,
        ),
    }
}

fn int<T: Into<Value>>(min: T, max: T) -> Value {
    json!({"type": "integer", "minimum": min.into(), "maximum": max.into()})
}

fn nullable(schema: Value) -> Value {
    json!({"anyOf": [schema, {"type": "null"}]})
}

/// A closed object; members of type `option<T>` are optional.
fn object_schema<'a>(
    fields: impl Iterator<Item = (&'a str, &'a WitType, Option<&'a str>)>,
) -> Map<String, Value> {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (name, ty, docs) in fields {
        let mut schema = type_schema(ty);
        if let (Some(docs), Value::Object(map)) = (docs, &mut schema) {
            map.insert("description".into(), docs.into());
        }
        properties.insert(name.to_string(), schema);
        if !ty.is_option() {
            required.push(Value::String(name.to_string()));
        }
    }
    let mut schema = Map::new();
    schema.insert("type".into(), "object".into());
    schema.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".into(), Value::Array(required));
    }
    schema.insert("additionalProperties".into(), false.into());
    schema
}

/// `{"name": payload}` as a closed object; a missing payload is `null`.
fn tagged(name: &str, payload: Option<Value>, docs: Option<&str>) -> Value {
    let mut schema = json!({
        "type": "object",
        "properties": {name: payload.unwrap_or_else(|| json!({"type": "null"}))},
        "required": [name],
        "additionalProperties": false,
    });
    if let Some(docs) = docs {
        schema["description"] = docs.into();
    }
    schema
}

/// One tagged object per case, plus the bare names of the payloadless cases.
fn variant_schema(cases: &[Case]) -> Value {
    let mut one_of: Vec<Value> = cases
        .iter()
        .map(|c| tagged(&c.name, c.ty.as_ref().map(type_schema), c.docs.as_deref()))
        .collect();
    let bare: Vec<&str> = cases
        .iter()
        .filter(|c| c.ty.is_none())
        .map(|c| c.name.as_str())
        .collect();
    if !bare.is_empty() {
        one_of.push(json!({"type": "string", "enum": bare}));
    }
    json!({ "oneOf": one_of })
}

/// Adds a nominal type's doc comment as its description.
fn described<T>(mut schema: Value, named: &Named<T>) -> Value {
    if let (Some(docs), Value::Object(map)) = (&named.docs, &mut schema) {
        map.insert("description".into(), docs.as_str().into());
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(params: Vec<(&str, WitType)>, result: Option<WitType>) -> Signature {
        Signature {
            name: "f".into(),
            params: params
                .into_iter()
                .map(|(n, t)| (n.to_string(), t))
                .collect(),
            result,
        }
    }

    fn opt(t: WitType) -> WitType {
        WitType::Option(Box::new(t))
    }

    #[test]
    fn f32_states_its_range_and_f64_needs_none() {
        assert_eq!(
            type_schema(&WitType::F32),
            json!({"type": "number", "minimum": -3.4028234663852886e38, "maximum": 3.4028234663852886e38})
        );
        assert_eq!(type_schema(&WitType::F64), json!({"type": "number"}));
    }

    #[test]
    fn parameters_become_a_closed_object() {
        let schema = input_schema(&sig(
            vec![("name", WitType::String), ("times", opt(WitType::U8))],
            None,
        ));
        assert_eq!(
            Value::Object(schema),
            json!({
                "$schema": DIALECT,
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "times": {"anyOf": [
                        {"type": "integer", "minimum": 0, "maximum": 255},
                        {"type": "null"}
                    ]}
                },
                "required": ["name"],
                "additionalProperties": false
            })
        );
        let empty = input_schema(&sig(vec![], None));
        assert_eq!(
            Value::Object(empty),
            json!({"$schema": DIALECT, "type": "object", "properties": {}, "additionalProperties": false})
        );
    }

    #[test]
    fn integers_carry_their_range() {
        assert_eq!(
            type_schema(&WitType::S64),
            json!({"type": "integer", "minimum": i64::MIN, "maximum": i64::MAX})
        );
        assert_eq!(
            type_schema(&WitType::U64),
            json!({"type": "integer", "minimum": 0, "maximum": u64::MAX})
        );
        assert_eq!(
            type_schema(&WitType::S8),
            json!({"type": "integer", "minimum": -128, "maximum": 127})
        );
    }

    #[test]
    fn compound_types() {
        assert_eq!(
            type_schema(&WitType::Tuple(vec![WitType::Bool, WitType::Char])),
            json!({
                "type": "array",
                "prefixItems": [{"type": "boolean"}, {"type": "string", "minLength": 1, "maxLength": 1}],
                "minItems": 2, "maxItems": 2, "items": false
            })
        );
        assert_eq!(
            type_schema(&WitType::Flags(Named::bare(vec!["a".into(), "b".into()]))),
            json!({"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "uniqueItems": true})
        );
        assert_eq!(
            type_schema(&WitType::Result {
                ok: Some(Box::new(WitType::U8)),
                err: None
            }),
            json!({"oneOf": [
                {"type": "object", "properties": {"ok": {"type": "integer", "minimum": 0, "maximum": 255}}, "required": ["ok"], "additionalProperties": false},
                {"type": "object", "properties": {"err": {"type": "null"}}, "required": ["err"], "additionalProperties": false}
            ]})
        );
    }

    #[test]
    fn variants_accept_tagged_objects_and_bare_names() {
        let variant = WitType::Variant(Named {
            name: Some("shape".into()),
            docs: Some("A shape.".into()),
            items: vec![
                Case {
                    name: "circle".into(),
                    ty: Some(WitType::F64),
                    docs: Some("Round.".into()),
                },
                Case {
                    name: "empty".into(),
                    ty: None,
                    docs: None,
                },
            ],
        });
        assert_eq!(
            type_schema(&variant),
            json!({
                "oneOf": [
                    {"type": "object", "properties": {"circle": {"type": "number"}}, "required": ["circle"], "additionalProperties": false, "description": "Round."},
                    {"type": "object", "properties": {"empty": {"type": "null"}}, "required": ["empty"], "additionalProperties": false},
                    {"type": "string", "enum": ["empty"]}
                ],
                "description": "A shape."
            })
        );
    }

    #[test]
    fn records_document_their_fields() {
        let record = WitType::Record(Named {
            name: Some("point".into()),
            docs: Some("A point.".into()),
            items: vec![
                Field {
                    name: "x".into(),
                    ty: WitType::S32,
                    docs: Some("Across.".into()),
                },
                Field {
                    name: "label".into(),
                    ty: opt(WitType::String),
                    docs: None,
                },
            ],
        });
        assert_eq!(
            type_schema(&record),
            json!({
                "type": "object",
                "properties": {
                    "x": {"type": "integer", "minimum": i32::MIN, "maximum": i32::MAX, "description": "Across."},
                    "label": {"anyOf": [{"type": "string"}, {"type": "null"}]}
                },
                "required": ["x"],
                "additionalProperties": false,
                "description": "A point."
            })
        );
    }

    #[test]
    fn output_schemas_wrap_the_result() {
        assert_eq!(output_schema(&sig(vec![], None)), None);
        let unit_ok = WitType::Result {
            ok: None,
            err: Some(Box::new(WitType::String)),
        };
        assert_eq!(output_schema(&sig(vec![], Some(unit_ok))), None);
        let fallible = WitType::Result {
            ok: Some(Box::new(WitType::String)),
            err: Some(Box::new(WitType::String)),
        };
        assert_eq!(
            output_schema(&sig(vec![], Some(fallible))).map(Value::Object),
            Some(json!({
                "$schema": DIALECT,
                "type": "object",
                "properties": {"result": {"type": "string"}},
                "required": ["result"],
                "additionalProperties": false
            }))
        );
    }

    #[test]
    fn generated_schemas_are_valid_and_validate() {
        let schema = Value::Object(input_schema(&sig(
            vec![
                ("t", WitType::Tuple(vec![WitType::U8])),
                ("c", WitType::Char),
            ],
            None,
        )));
        let validator = jsonschema::validator_for(&schema).unwrap();
        assert!(validator.is_valid(&json!({"t": [1], "c": "é"})));
        assert!(!validator.is_valid(&json!({"t": [1, 2], "c": "a"})));
        assert!(!validator.is_valid(&json!({"t": [1], "c": "ab"})));
        assert!(!validator.is_valid(&json!({"t": [1], "c": "a", "x": 1})));
    }
}
