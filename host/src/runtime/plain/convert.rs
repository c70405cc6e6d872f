//! JSON arguments to component values and component results back to JSON, with
//! the mapping of `schema.rs`.
//!
//! Arguments are checked against the input schema before they get here, but the
//! conversion does not rely on it: everything the schema cannot say (a `char` of
//! two scalar values, say) or that a caller skipped is refused with the JSON
//! pointer of the offending value.

use serde_json::{Map, Number, Value};
use wasmtime::component::Val;

use super::shape::{Case, Field, Signature, WitType};

/// Why JSON could not become a component value, or a value JSON.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConvertError {
    #[error("at {}: expected {expected}, got {got}", at(.path))]
    WrongType {
        path: String,
        expected: String,
        got: &'static str,
    },
    #[error("at {}: {value} is out of range for {ty} ({min} to {max})", at(.path))]
    OutOfRange {
        path: String,
        value: String,
        ty: String,
        min: String,
        max: String,
    },
    #[error(
        "at {}: {value} is not an exact {ty}: beyond ±9007199254740992 (2^53) an integer \
         must be written in plain digits, from {min} to {max}",
        at(.path)
    )]
    Inexact {
        path: String,
        value: String,
        ty: String,
        min: String,
        max: String,
    },
    #[error(
        "the arguments would take more than {limit} bytes of host memory once converted \
         (the plugin's memory limit)"
    )]
    TooLarge { limit: usize },
    #[error("the component returned {value} as {ty}, which JSON cannot carry")]
    NotFinite { value: String, ty: &'static str },
    #[error("at {}: missing required property `{name}`", at(.path))]
    Missing { path: String, name: String },
    #[error("at {}: unknown property `{name}`", at(.path))]
    Unknown { path: String, name: String },
    #[error("at {}: `{value}` is not one of {allowed}", at(.path))]
    NotAllowed {
        path: String,
        value: String,
        allowed: String,
    },
    #[error("at {}: the flag `{name}` is given twice", at(.path))]
    DuplicateFlag { path: String, name: String },
    #[error("at {}: a char must be exactly one Unicode scalar value, got {count}", at(.path))]
    Char { path: String, count: usize },
    #[error("at {}: expected {expected} items, got {got}", at(.path))]
    Length {
        path: String,
        expected: usize,
        got: usize,
    },
    #[error("at {}: expected an object with exactly one property, one of {allowed}", at(.path))]
    Tag { path: String, allowed: String },
    #[error("the component returned a value that does not match its declared type {0}")]
    Mismatch(String),
}

/// A JSON pointer as shown in messages; the root has a name of its own.
fn at(path: &str) -> &str {
    if path.is_empty() { "(root)" } else { path }
}

/// Appends one reference token to a JSON pointer (RFC 6901 escaping).
fn child(path: &str, token: &str) -> String {
    format!("{path}/{}", token.replace('~', "~0").replace('/', "~1"))
}

/// What a JSON value is, for messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn wrong(path: &str, expected: impl Into<String>, got: &Value) -> ConvertError {
    ConvertError::WrongType {
        path: path.to_string(),
        expected: expected.into(),
        got: kind(got),
    }
}

/// Quoted names joined with commas, for messages.
fn listing<'a>(names: impl Iterator<Item = &'a str>) -> String {
    names
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The host memory one call's converted arguments may take.
///
/// A component value costs the host far more than its JSON text (each item of
/// a `list<u8>` is a whole `Val`), so every value is charged before it is
/// made, and a call whose arguments would go over is refused before anything
/// big is allocated.
#[derive(Debug)]
pub struct Budget {
    limit: usize,
    used: usize,
}

/// What one `Val` takes, wherever it is stored.
const VAL_BYTES: usize = std::mem::size_of::<Val>();

impl Budget {
    /// A budget of `limit` bytes.
    pub fn new(limit: usize) -> Self {
        Self { limit, used: 0 }
    }

    /// The bytes charged so far.
    pub fn used(&self) -> usize {
        self.used
    }

    fn charge(&mut self, bytes: usize) -> Result<(), ConvertError> {
        self.used = self.used.saturating_add(bytes);
        if self.used > self.limit {
            return Err(ConvertError::TooLarge { limit: self.limit });
        }
        Ok(())
    }

    /// `count` values stored side by side.
    fn charge_vals(&mut self, count: usize) -> Result<(), ConvertError> {
        self.charge(count.saturating_mul(VAL_BYTES))
    }
}

/// The parameters of `sig` from a JSON object keyed by parameter name, in order,
/// charging `budget` for every value made.
pub fn params_from_json(
    sig: &Signature,
    args: &Value,
    budget: &mut Budget,
) -> Result<Vec<Val>, ConvertError> {
    let fields = sig.params.iter().map(|(name, ty)| (name.as_str(), ty));
    match object_from_json(fields, args, "", budget)? {
        Val::Record(values) => Ok(values.into_iter().map(|(_, v)| v).collect()),
        _ => unreachable!("object_from_json builds a record"),
    }
}

/// The members of a closed object, in declaration order; `option` members may be
/// missing (none).
fn object_from_json<'a>(
    fields: impl Iterator<Item = (&'a str, &'a WitType)> + Clone,
    value: &Value,
    path: &str,
    budget: &mut Budget,
) -> Result<Val, ConvertError> {
    let Value::Object(map) = value else {
        return Err(wrong(path, "an object", value));
    };
    if let Some(name) = map
        .keys()
        .find(|key| !fields.clone().any(|(name, _)| name == key.as_str()))
    {
        return Err(ConvertError::Unknown {
            path: path.to_string(),
            name: name.clone(),
        });
    }
    let count = fields.clone().count();
    budget.charge(count.saturating_mul(std::mem::size_of::<(String, Val)>()))?;
    let mut values = Vec::with_capacity(count);
    for (name, ty) in fields {
        budget.charge(name.len())?;
        let val = match map.get(name) {
            Some(member) => from_json(ty, member, &child(path, name), budget)?,
            None if ty.is_option() => Val::Option(None),
            None => {
                return Err(ConvertError::Missing {
                    path: path.to_string(),
                    name: name.to_string(),
                });
            }
        };
        values.push((name.to_string(), val));
    }
    Ok(Val::Record(values))
}

/// One value of type `ty` from JSON, charged to `budget`.
pub fn from_json(
    ty: &WitType,
    value: &Value,
    path: &str,
    budget: &mut Budget,
) -> Result<Val, ConvertError> {
    Ok(match ty {
        WitType::Bool => Val::Bool(
            value
                .as_bool()
                .ok_or_else(|| wrong(path, "a boolean", value))?,
        ),
        WitType::S8 => Val::S8(integer(ty, value, path)?),
        WitType::U8 => Val::U8(integer(ty, value, path)?),
        WitType::S16 => Val::S16(integer(ty, value, path)?),
        WitType::U16 => Val::U16(integer(ty, value, path)?),
        WitType::S32 => Val::S32(integer(ty, value, path)?),
        WitType::U32 => Val::U32(integer(ty, value, path)?),
        WitType::S64 => Val::S64(integer(ty, value, path)?),
        WitType::U64 => Val::U64(integer(ty, value, path)?),
        WitType::F32 => Val::Float32(single(value, path)?),
        WitType::F64 => Val::Float64(number(value, path)?),
        WitType::Char => {
            let text = value
                .as_str()
                .ok_or_else(|| wrong(path, "a string", value))?;
            let mut chars = text.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => Val::Char(c),
                _ => {
                    return Err(ConvertError::Char {
                        path: path.to_string(),
                        count: text.chars().count(),
                    });
                }
            }
        }
        WitType::String => {
            let text = value
                .as_str()
                .ok_or_else(|| wrong(path, "a string", value))?;
            budget.charge(text.len())?;
            Val::String(text.to_string())
        }
        WitType::List(item) => {
            let items = value
                .as_array()
                .ok_or_else(|| wrong(path, "an array", value))?;
            // Charged and allocated once, at its exact size.
            budget.charge_vals(items.len())?;
            let mut vals = Vec::with_capacity(items.len());
            for (i, v) in items.iter().enumerate() {
                vals.push(from_json(item, v, &child(path, &i.to_string()), budget)?);
            }
            Val::List(vals)
        }
        WitType::Tuple(types) => {
            let items = value
                .as_array()
                .ok_or_else(|| wrong(path, "an array", value))?;
            if items.len() != types.len() {
                return Err(ConvertError::Length {
                    path: path.to_string(),
                    expected: types.len(),
                    got: items.len(),
                });
            }
            budget.charge_vals(types.len())?;
            Val::Tuple(
                types
                    .iter()
                    .zip(items)
                    .enumerate()
                    .map(|(i, (t, v))| from_json(t, v, &child(path, &i.to_string()), budget))
                    .collect::<Result<_, _>>()?,
            )
        }
        WitType::Option(inner) => match value {
            Value::Null => Val::Option(None),
            some => {
                budget.charge_vals(1)?;
                Val::Option(Some(Box::new(from_json(inner, some, path, budget)?)))
            }
        },
        WitType::Result { ok, err } => {
            let (tag, payload) = single_tag(value, path, ["ok", "err"].into_iter())?;
            let payload_ty = if tag == "ok" { ok } else { err };
            let payload =
                optional_payload(payload_ty.as_deref(), payload, &child(path, tag), budget)?;
            Val::Result(if tag == "ok" {
                Ok(payload)
            } else {
                Err(payload)
            })
        }
        WitType::Record(record) => object_from_json(
            record
                .items
                .iter()
                .map(|f: &Field| (f.name.as_str(), &f.ty)),
            value,
            path,
            budget,
        )?,
        WitType::Variant(variant) => variant_from_json(&variant.items, value, path, budget)?,
        WitType::Enum(cases) => {
            let name = value
                .as_str()
                .ok_or_else(|| wrong(path, "a string", value))?;
            if !cases.items.iter().any(|c| c == name) {
                return Err(ConvertError::NotAllowed {
                    path: path.to_string(),
                    value: name.to_string(),
                    allowed: listing(cases.items.iter().map(String::as_str)),
                });
            }
            budget.charge(name.len())?;
            Val::Enum(name.to_string())
        }
        WitType::Flags(flags) => {
            let items = value
                .as_array()
                .ok_or_else(|| wrong(path, "an array", value))?;
            budget.charge(items.len().saturating_mul(std::mem::size_of::<String>()))?;
            let mut set: Vec<String> = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let item_path = child(path, &i.to_string());
                let name = item
                    .as_str()
                    .ok_or_else(|| wrong(&item_path, "a string", item))?;
                if !flags.items.iter().any(|f| f == name) {
                    return Err(ConvertError::NotAllowed {
                        path: item_path,
                        value: name.to_string(),
                        allowed: listing(flags.items.iter().map(String::as_str)),
                    });
                }
                if set.iter().any(|f| f == name) {
                    return Err(ConvertError::DuplicateFlag {
                        path: item_path,
                        name: name.to_string(),
                    });
                }
                budget.charge(name.len())?;
                set.push(name.to_string());
            }
            Val::Flags(set)
        }
    })
}

/// `{"case": payload}`, or the bare name of a payloadless case.
fn variant_from_json(
    cases: &[Case],
    value: &Value,
    path: &str,
    budget: &mut Budget,
) -> Result<Val, ConvertError> {
    let names = || cases.iter().map(|c| c.name.as_str());
    if let Value::String(name) = value {
        budget.charge(name.len())?;
        return match cases.iter().find(|c| c.name == *name) {
            Some(case) if case.ty.is_none() => Ok(Val::Variant(name.clone(), None)),
            _ => Err(ConvertError::NotAllowed {
                path: path.to_string(),
                value: name.clone(),
                allowed: listing(
                    cases
                        .iter()
                        .filter(|c| c.ty.is_none())
                        .map(|c| c.name.as_str()),
                ),
            }),
        };
    }
    let (tag, payload) = single_tag(value, path, names())?;
    let case = cases.iter().find(|c| c.name == tag).expect("tag is a case");
    budget.charge(tag.len())?;
    let payload = optional_payload(case.ty.as_ref(), payload, &child(path, tag), budget)?;
    Ok(Val::Variant(tag.to_string(), payload))
}

/// The one property of a tagged object, which must be one of `allowed`.
fn single_tag<'v, 'n>(
    value: &'v Value,
    path: &str,
    allowed: impl Iterator<Item = &'n str> + Clone,
) -> Result<(&'v str, &'v Value), ConvertError> {
    let tag_error = || ConvertError::Tag {
        path: path.to_string(),
        allowed: listing(allowed.clone()),
    };
    let Value::Object(map) = value else {
        return Err(tag_error());
    };
    let mut members = map.iter();
    match (members.next(), members.next()) {
        (Some((name, payload)), None) if allowed.clone().any(|a| a == name) => {
            Ok((name.as_str(), payload))
        }
        (Some((name, _)), None) => Err(ConvertError::NotAllowed {
            path: path.to_string(),
            value: name.clone(),
            allowed: listing(allowed.clone()),
        }),
        _ => Err(tag_error()),
    }
}

/// A case's payload; a case without one takes `null`.
fn optional_payload(
    ty: Option<&WitType>,
    value: &Value,
    path: &str,
    budget: &mut Budget,
) -> Result<Option<Box<Val>>, ConvertError> {
    match ty {
        Some(ty) => {
            budget.charge_vals(1)?;
            Ok(Some(Box::new(from_json(ty, value, path, budget)?)))
        }
        None if value.is_null() => Ok(None),
        None => Err(wrong(path, "null", value)),
    }
}

/// The range of an integer type, and its WIT name.
fn range(ty: &WitType) -> (i128, i128) {
    match ty {
        WitType::S8 => (i8::MIN.into(), i8::MAX.into()),
        WitType::U8 => (0, u8::MAX.into()),
        WitType::S16 => (i16::MIN.into(), i16::MAX.into()),
        WitType::U16 => (0, u16::MAX.into()),
        WitType::S32 => (i32::MIN.into(), i32::MAX.into()),
        WitType::U32 => (0, u32::MAX.into()),
        WitType::S64 => (i64::MIN.into(), i64::MAX.into()),
        _ => (0, u64::MAX.into()),
    }
}

/// Beyond this magnitude a JSON number that serde_json did not read as an
/// integer (it has a fraction or an exponent, or its digits exceed 64 bits)
/// may have been rounded on the way in: `-9223372036854775809` reads as
/// `-9223372036854775808.0`.
const EXACT_IN_DOUBLE: f64 = 9_007_199_254_740_992.0;

/// An integer in `ty`'s range. A number with no fraction (`3.0`) counts, as it
/// does for JSON Schema's `integer`, but only up to ±2^53, where a double
/// still holds every integer exactly; beyond, only plain digits are taken, so
/// no number is silently changed.
fn integer<T: TryFrom<i128>>(ty: &WitType, value: &Value, path: &str) -> Result<T, ConvertError> {
    let Value::Number(n) = value else {
        return Err(wrong(path, "an integer", value));
    };
    let wide: i128 = if let Some(u) = n.as_u64() {
        u.into()
    } else if let Some(i) = n.as_i64() {
        i.into()
    } else {
        let f = n.as_f64().unwrap_or(f64::NAN);
        if f.fract() != 0.0 || !f.is_finite() {
            return Err(wrong(path, "an integer", value));
        }
        let (min, max) = range(ty);
        if f.abs() > EXACT_IN_DOUBLE {
            return Err(ConvertError::Inexact {
                path: path.to_string(),
                value: n.to_string(),
                ty: ty.to_string(),
                min: min.to_string(),
                max: max.to_string(),
            });
        }
        f as i128
    };
    let (min, max) = range(ty);
    if wide < min || wide > max {
        return Err(ConvertError::OutOfRange {
            path: path.to_string(),
            value: n.to_string(),
            ty: ty.to_string(),
            min: min.to_string(),
            max: max.to_string(),
        });
    }
    Ok(T::try_from(wide).unwrap_or_else(|_| unreachable!("checked against the range")))
}

fn number(value: &Value, path: &str) -> Result<f64, ConvertError> {
    value.as_f64().ok_or_else(|| wrong(path, "a number", value))
}

/// An `f32`: rounded to the nearest one, as a cast does, but a number beyond
/// its largest finite value is refused rather than made an infinity.
fn single(value: &Value, path: &str) -> Result<f32, ConvertError> {
    let wide = number(value, path)?;
    let max = f64::from(f32::MAX);
    if wide.abs() > max {
        return Err(ConvertError::OutOfRange {
            path: path.to_string(),
            value: value.to_string(),
            ty: "f32".into(),
            min: Value::from(-max).to_string(),
            max: Value::from(max).to_string(),
        });
    }
    Ok(wide as f32)
}

/// A component value of type `ty` as JSON. A float that JSON cannot hold (NaN,
/// an infinity) fails the conversion, and with it the call, with a message
/// that says so: `null` would hide it and break the output schema.
pub fn to_json(ty: &WitType, val: &Val) -> Result<Value, ConvertError> {
    let mismatch = || ConvertError::Mismatch(ty.to_string());
    Ok(match (ty, val) {
        (WitType::Bool, Val::Bool(b)) => Value::Bool(*b),
        (WitType::S8, Val::S8(i)) => (*i).into(),
        (WitType::U8, Val::U8(i)) => (*i).into(),
        (WitType::S16, Val::S16(i)) => (*i).into(),
        (WitType::U16, Val::U16(i)) => (*i).into(),
        (WitType::S32, Val::S32(i)) => (*i).into(),
        (WitType::U32, Val::U32(i)) => (*i).into(),
        (WitType::S64, Val::S64(i)) => (*i).into(),
        (WitType::U64, Val::U64(i)) => (*i).into(),
        // Through the shortest decimal form: 0.1f32 comes back as 0.1, not as
        // 0.10000000149011612.
        (WitType::F32, Val::Float32(f)) => float(f.to_string().parse().unwrap_or(f64::NAN), "f32")?,
        (WitType::F64, Val::Float64(f)) => float(*f, "f64")?,
        (WitType::Char, Val::Char(c)) => Value::String(c.to_string()),
        (WitType::String, Val::String(s)) => Value::String(s.clone()),
        (WitType::List(item), Val::List(vals)) => Value::Array(
            vals.iter()
                .map(|v| to_json(item, v))
                .collect::<Result<_, _>>()?,
        ),
        (WitType::Tuple(types), Val::Tuple(vals)) if types.len() == vals.len() => Value::Array(
            types
                .iter()
                .zip(vals)
                .map(|(t, v)| to_json(t, v))
                .collect::<Result<_, _>>()?,
        ),
        (WitType::Option(_), Val::Option(None)) => Value::Null,
        (WitType::Option(inner), Val::Option(Some(v))) => to_json(inner, v)?,
        (WitType::Result { ok, err }, Val::Result(result)) => {
            let (tag, ty, payload) = match result {
                Ok(payload) => ("ok", ok, payload),
                Err(payload) => ("err", err, payload),
            };
            let mut map = Map::new();
            map.insert(tag.into(), payload_json(ty.as_deref(), payload.as_deref())?);
            Value::Object(map)
        }
        (WitType::Record(record), Val::Record(fields)) if record.items.len() == fields.len() => {
            let mut map = Map::new();
            for (field, (name, v)) in record.items.iter().zip(fields) {
                if field.name != *name {
                    return Err(mismatch());
                }
                map.insert(name.clone(), to_json(&field.ty, v)?);
            }
            Value::Object(map)
        }
        (WitType::Variant(variant), Val::Variant(name, payload)) => {
            let case = variant
                .items
                .iter()
                .find(|c| c.name == *name)
                .ok_or_else(mismatch)?;
            let mut map = Map::new();
            map.insert(
                name.clone(),
                payload_json(case.ty.as_ref(), payload.as_deref())?,
            );
            Value::Object(map)
        }
        (WitType::Enum(_), Val::Enum(name)) => Value::String(name.clone()),
        (WitType::Flags(flags), Val::Flags(set)) => Value::Array(
            // Declaration order, whatever order the component gave.
            flags
                .items
                .iter()
                .filter(|f| set.contains(f))
                .map(|f| Value::String(f.clone()))
                .collect(),
        ),
        _ => return Err(mismatch()),
    })
}

fn payload_json(ty: Option<&WitType>, val: Option<&Val>) -> Result<Value, ConvertError> {
    match (ty, val) {
        (Some(ty), Some(val)) => to_json(ty, val),
        (None, None) => Ok(Value::Null),
        (ty, _) => Err(ConvertError::Mismatch(
            ty.map_or_else(|| "(no payload)".to_string(), ToString::to_string),
        )),
    }
}

fn float(f: f64, ty: &'static str) -> Result<Value, ConvertError> {
    Number::from_f64(f)
        .map(Value::Number)
        .ok_or_else(|| ConvertError::NotFinite {
            value: f.to_string(),
            ty,
        })
}

#[cfg(test)]
mod tests;
