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

mod numbers;
mod to_json;

use numbers::{integer, number, single};
pub use to_json::to_json;

#[cfg(test)]
mod tests;
