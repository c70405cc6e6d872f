//! Numbers between JSON and component values: each integer type's range, and
//! floats that must stay finite.

use super::*;

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
pub(super) fn integer<T: TryFrom<i128>>(
    ty: &WitType,
    value: &Value,
    path: &str,
) -> Result<T, ConvertError> {
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

pub(super) fn number(value: &Value, path: &str) -> Result<f64, ConvertError> {
    value.as_f64().ok_or_else(|| wrong(path, "a number", value))
}

/// An `f32`: rounded to the nearest one, as a cast does, but a number beyond
/// its largest finite value is refused rather than made an infinity.
pub(super) fn single(value: &Value, path: &str) -> Result<f32, ConvertError> {
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
