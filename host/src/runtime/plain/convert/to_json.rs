//! Component results back to JSON.

use super::*;

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
