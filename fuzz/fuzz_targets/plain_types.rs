//! A plain component's types: WIT type to JSON Schema, and JSON to WIT value
//! and back, for arbitrary type trees (built structurally from the input, as
//! the component reflection of `describe` would give them) and arbitrary JSON.
//! Invariants: no panic; every schema compiles as a 2020-12 JSON Schema; a
//! value the converter accepts is valid under the type's schema and
//! round-trips (its JSON form converts again, to the same JSON).
#![no_main]
use arbitrary::{Arbitrary, Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value, json};
use wharf::fuzzing::{
    Case, Field, Named, Signature, WitType, from_json, input_schema, output_schema,
    params_from_json, to_json, type_schema,
};

const NAMES: [&str; 8] = ["a", "b", "c", "ok", "err", "x-y", "name", "value"];

/// `n` distinct item names.
fn names(u: &mut Unstructured<'_>) -> Result<Vec<String>> {
    let n = u.int_in_range(1..=4)?;
    let mut out: Vec<String> = Vec::new();
    while out.len() < n {
        let name = if u.ratio(1, 8)? {
            String::arbitrary(u)?
        } else {
            (*u.choose(&NAMES)?).to_string()
        };
        if name.is_empty() || out.contains(&name) {
            if u.is_empty() {
                out.push(format!("n{}", out.len()));
            }
            continue;
        }
        out.push(name);
    }
    Ok(out)
}

fn named<T>(u: &mut Unstructured<'_>, items: T) -> Result<Named<T>> {
    Ok(Named {
        name: if u.arbitrary()? {
            Some("t".into())
        } else {
            None
        },
        docs: if u.arbitrary()? {
            Some(String::arbitrary(u)?)
        } else {
            None
        },
        items,
    })
}

fn wit_type(u: &mut Unstructured<'_>, depth: u32) -> Result<WitType> {
    let leaf = depth == 0 || u.is_empty();
    let kind = if leaf {
        u.int_in_range(0..=12)?
    } else {
        u.int_in_range(0..=20)?
    };
    let child = |u: &mut Unstructured<'_>| wit_type(u, depth - 1).map(Box::new);
    Ok(match kind {
        0 => WitType::Bool,
        1 => WitType::S8,
        2 => WitType::U8,
        3 => WitType::S16,
        4 => WitType::U16,
        5 => WitType::S32,
        6 => WitType::U32,
        7 => WitType::S64,
        8 => WitType::U64,
        9 => WitType::F32,
        10 => WitType::F64,
        11 => WitType::Char,
        12 => WitType::String,
        13 => WitType::List(child(u)?),
        14 => {
            let n = u.int_in_range(1..=3)?;
            WitType::Tuple(
                (0..n)
                    .map(|_| wit_type(u, depth - 1))
                    .collect::<Result<_>>()?,
            )
        }
        15 => WitType::Option(child(u)?),
        16 => WitType::Result {
            ok: if u.arbitrary()? {
                Some(child(u)?)
            } else {
                None
            },
            err: if u.arbitrary()? {
                Some(child(u)?)
            } else {
                None
            },
        },
        17 => {
            let fields = names(u)?
                .into_iter()
                .map(|name| {
                    Ok(Field {
                        name,
                        ty: wit_type(u, depth - 1)?,
                        docs: None,
                    })
                })
                .collect::<Result<_>>()?;
            WitType::Record(named(u, fields)?)
        }
        18 => {
            let cases = names(u)?
                .into_iter()
                .map(|name| {
                    let ty = if u.arbitrary()? {
                        Some(wit_type(u, depth - 1)?)
                    } else {
                        None
                    };
                    Ok(Case {
                        name,
                        ty,
                        docs: None,
                    })
                })
                .collect::<Result<_>>()?;
            WitType::Variant(named(u, cases)?)
        }
        19 => {
            let items = names(u)?;
            WitType::Enum(named(u, items)?)
        }
        _ => {
            let items = names(u)?;
            WitType::Flags(named(u, items)?)
        }
    })
}

/// A JSON value shaped like `ty` most of the time, anything now and then.
fn value(u: &mut Unstructured<'_>, ty: &WitType, depth: u32) -> Result<Value> {
    if depth == 0 || u.ratio(1, 16)? {
        return Ok(match u.int_in_range(0..=5)? {
            0 => Value::Null,
            1 => json!(bool::arbitrary(u)?),
            2 => json!(i64::arbitrary(u)?),
            3 => {
                serde_json::Number::from_f64(f64::arbitrary(u)?).map_or(Value::Null, Value::Number)
            }
            4 => json!(String::arbitrary(u)?),
            _ => json!(u64::arbitrary(u)?),
        });
    }
    let d = depth - 1;
    Ok(match ty {
        WitType::Bool => json!(bool::arbitrary(u)?),
        WitType::S8 | WitType::U8 | WitType::S16 | WitType::U16 | WitType::S32 | WitType::U32 => {
            json!(i32::arbitrary(u)? % 70000)
        }
        WitType::S64 => json!(i64::arbitrary(u)?),
        WitType::U64 => json!(u64::arbitrary(u)?),
        WitType::F32 | WitType::F64 => {
            serde_json::Number::from_f64(f64::arbitrary(u)?).map_or(json!(0.5), Value::Number)
        }
        WitType::Char | WitType::String => json!(String::arbitrary(u)?),
        WitType::List(item) => {
            let n = u.int_in_range(0..=3)?;
            Value::Array((0..n).map(|_| value(u, item, d)).collect::<Result<_>>()?)
        }
        WitType::Tuple(items) => Value::Array(
            items
                .iter()
                .map(|t| value(u, t, d))
                .collect::<Result<_>>()?,
        ),
        WitType::Option(inner) => {
            if u.arbitrary()? {
                Value::Null
            } else {
                value(u, inner, d)?
            }
        }
        WitType::Result { ok, err } => {
            let (tag, ty) = if u.arbitrary()? {
                ("ok", ok)
            } else {
                ("err", err)
            };
            let payload = match ty {
                Some(t) => value(u, t, d)?,
                None => Value::Null,
            };
            json!({ tag: payload })
        }
        WitType::Record(record) => {
            let mut map = Map::new();
            for field in &record.items {
                if !u.ratio(1, 8)? {
                    map.insert(field.name.clone(), value(u, &field.ty, d)?);
                }
            }
            Value::Object(map)
        }
        WitType::Variant(variant) => {
            let case = u.choose(&variant.items)?;
            match &case.ty {
                None if u.arbitrary()? => json!(case.name),
                None => json!({ case.name.clone(): null }),
                Some(t) => json!({ case.name.clone(): value(u, t, d)? }),
            }
        }
        WitType::Enum(cases) => json!(u.choose(&cases.items)?),
        WitType::Flags(flags) => Value::Array(
            flags
                .items
                .iter()
                .filter(|_| u.arbitrary().unwrap_or(false))
                .map(|f| json!(f))
                .collect(),
        ),
    })
}

fn contains_f32(ty: &WitType) -> bool {
    match ty {
        WitType::F32 => true,
        WitType::List(t) | WitType::Option(t) => contains_f32(t),
        WitType::Tuple(ts) => ts.iter().any(contains_f32),
        WitType::Result { ok, err } => {
            ok.as_deref().is_some_and(contains_f32) || err.as_deref().is_some_and(contains_f32)
        }
        WitType::Record(r) => r.items.iter().any(|f| contains_f32(&f.ty)),
        WitType::Variant(v) => v
            .items
            .iter()
            .any(|c| c.ty.as_ref().is_some_and(contains_f32)),
        _ => false,
    }
}

fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::meta::validate(schema)
        .unwrap_or_else(|e| panic!("not a JSON Schema ({e}): {schema}"));
    jsonschema::draft202012::new(schema)
        .unwrap_or_else(|e| panic!("schema does not compile ({e}): {schema}"))
}

fn check(ty: &WitType, json: &Value) {
    let schema = validator(&type_schema(ty));
    let Ok(val) = from_json(ty, json) else {
        // The schema may be laxer only where the converter checks what a
        // schema cannot say (f32's range).
        if !contains_f32(ty) {
            assert!(
                !schema.is_valid(json),
                "the schema allows what the converter refuses: {ty} {json}"
            );
        }
        return;
    };
    assert!(
        schema.is_valid(json),
        "the converter accepts what the schema refuses: {ty} {json}"
    );
    let back = to_json(ty, &val)
        .unwrap_or_else(|e| panic!("{ty}: its own value does not convert back ({e})"));
    let val2 = from_json(ty, &back)
        .unwrap_or_else(|e| panic!("{ty}: {json} came back as {back}, which is refused ({e})"));
    let again = to_json(ty, &val2).expect("converts back");
    assert_eq!(back, again, "{ty}: not stable");
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(ty) = wit_type(&mut u, 4) else { return };
    let Ok(json) = value(&mut u, &ty, 6) else {
        return;
    };
    check(&ty, &json);
    let sig = Signature {
        name: "f".into(),
        params: vec![
            ("p".into(), ty.clone()),
            ("q".into(), WitType::Option(Box::new(WitType::U8))),
        ],
        result: Some(ty.clone()),
    };
    validator(&Value::Object(input_schema(&sig)));
    if let Some(out) = output_schema(&sig) {
        validator(&Value::Object(out));
    }
    let _ = params_from_json(&sig, &json!({"p": json}));
});
