//! Conversion round trips and every conversion error with its exact message.

use serde_json::{Value, json};
use wasmtime::component::Val;

use super::super::shape::{Case, Field, Named, Signature, WitType};
use super::*;

fn opt(t: WitType) -> WitType {
    WitType::Option(Box::new(t))
}

fn point() -> WitType {
    WitType::Record(Named::bare(vec![
        Field {
            name: "x".into(),
            ty: WitType::S32,
            docs: None,
        },
        Field {
            name: "label".into(),
            ty: opt(WitType::String),
            docs: None,
        },
    ]))
}

fn shape() -> WitType {
    WitType::Variant(Named::bare(vec![
        Case {
            name: "circle".into(),
            ty: Some(WitType::F64),
            docs: None,
        },
        Case {
            name: "empty".into(),
            ty: None,
            docs: None,
        },
    ]))
}

fn perms() -> WitType {
    WitType::Flags(Named::bare(vec!["read".into(), "write".into()]))
}

fn color() -> WitType {
    WitType::Enum(Named::bare(vec!["red".into(), "blue".into()]))
}

fn fallible() -> WitType {
    WitType::Result {
        ok: Some(Box::new(WitType::U8)),
        err: None,
    }
}

fn unlimited() -> Budget {
    Budget::new(usize::MAX)
}

/// JSON -> Val -> JSON gives `expected` back.
fn round_trip(ty: &WitType, input: Value, expected: Value) {
    let val = from_json(ty, &input, "", &mut unlimited()).unwrap();
    assert_eq!(to_json(ty, &val).unwrap(), expected, "for {input}");
}

fn error(ty: &WitType, input: Value) -> String {
    from_json(ty, &input, "/a", &mut unlimited())
        .unwrap_err()
        .to_string()
}

#[test]
fn values_round_trip() {
    round_trip(&WitType::Bool, json!(true), json!(true));
    round_trip(&WitType::U64, json!(u64::MAX), json!(u64::MAX));
    round_trip(&WitType::S64, json!(i64::MIN), json!(i64::MIN));
    round_trip(&WitType::S8, json!(-3.0), json!(-3));
    round_trip(&WitType::F32, json!(1.5), json!(1.5));
    round_trip(&WitType::F32, json!(0.1), json!(0.1));
    round_trip(&WitType::F64, json!(2), json!(2.0));
    round_trip(&WitType::Char, json!("é"), json!("é"));
    round_trip(&WitType::String, json!("hi"), json!("hi"));
    round_trip(
        &WitType::List(Box::new(WitType::U16)),
        json!([1, 2]),
        json!([1, 2]),
    );
    round_trip(
        &WitType::Tuple(vec![WitType::U8, WitType::String]),
        json!([1, "a"]),
        json!([1, "a"]),
    );
    round_trip(&opt(WitType::U8), json!(null), json!(null));
    round_trip(&opt(WitType::U8), json!(4), json!(4));
    round_trip(&point(), json!({"x": 1}), json!({"x": 1, "label": null}));
    round_trip(
        &point(),
        json!({"x": 1, "label": "p"}),
        json!({"x": 1, "label": "p"}),
    );
    round_trip(&shape(), json!({"circle": 2.5}), json!({"circle": 2.5}));
    round_trip(&shape(), json!("empty"), json!({"empty": null}));
    round_trip(&shape(), json!({"empty": null}), json!({"empty": null}));
    round_trip(&color(), json!("blue"), json!("blue"));
    round_trip(&perms(), json!(["write", "read"]), json!(["read", "write"]));
    round_trip(&fallible(), json!({"ok": 7}), json!({"ok": 7}));
    round_trip(&fallible(), json!({"err": null}), json!({"err": null}));
}

#[test]
fn parameters_come_in_declaration_order() {
    let sig = Signature {
        name: "f".into(),
        params: vec![("a".into(), WitType::U8), ("b".into(), opt(WitType::U8))],
        result: None,
    };
    assert_eq!(
        params_from_json(&sig, &json!({"b": 2, "a": 1}), &mut unlimited()).unwrap(),
        vec![Val::U8(1), Val::Option(Some(Box::new(Val::U8(2))))]
    );
    assert_eq!(
        params_from_json(&sig, &json!({"a": 1}), &mut unlimited()).unwrap(),
        vec![Val::U8(1), Val::Option(None)]
    );
    assert_eq!(
        params_from_json(&sig, &json!([1]), &mut unlimited())
            .unwrap_err()
            .to_string(),
        "at (root): expected an object, got an array"
    );
    assert_eq!(
        params_from_json(&sig, &json!({}), &mut unlimited())
            .unwrap_err()
            .to_string(),
        "at (root): missing required property `a`"
    );
}

#[test]
fn every_error_names_the_place_and_the_problem() {
    assert_eq!(
        error(&WitType::Bool, json!(1)),
        "at /a: expected a boolean, got an integer"
    );
    assert_eq!(
        error(&WitType::U8, json!(256)),
        "at /a: 256 is out of range for u8 (0 to 255)"
    );
    assert_eq!(
        error(&WitType::U64, json!(-1)),
        "at /a: -1 is out of range for u64 (0 to 18446744073709551615)"
    );
    assert_eq!(
        error(&WitType::S32, json!(1.5)),
        "at /a: expected an integer, got a number"
    );
    assert_eq!(
        error(&WitType::F64, json!("1")),
        "at /a: expected a number, got a string"
    );
    assert_eq!(
        error(&WitType::Char, json!("ab")),
        "at /a: a char must be exactly one Unicode scalar value, got 2"
    );
    assert_eq!(
        error(&WitType::Char, json!("")),
        "at /a: a char must be exactly one Unicode scalar value, got 0"
    );
    assert_eq!(
        error(&WitType::List(Box::new(WitType::U8)), json!([1, "x"])),
        "at /a/1: expected an integer, got a string"
    );
    assert_eq!(
        error(&WitType::Tuple(vec![WitType::U8]), json!([1, 2])),
        "at /a: expected 1 items, got 2"
    );
    assert_eq!(
        error(&point(), json!({"x": 1, "z": 2})),
        "at /a: unknown property `z`"
    );
    assert_eq!(
        error(&point(), json!({"label": "p"})),
        "at /a: missing required property `x`"
    );
    assert_eq!(
        error(&color(), json!("green")),
        "at /a: `green` is not one of `red`, `blue`"
    );
    assert_eq!(
        error(&perms(), json!(["read", "read"])),
        "at /a/1: the flag `read` is given twice"
    );
    assert_eq!(
        error(&perms(), json!(["exec"])),
        "at /a/0: `exec` is not one of `read`, `write`"
    );
    assert_eq!(
        error(&shape(), json!("circle")),
        "at /a: `circle` is not one of `empty`"
    );
    assert_eq!(
        error(&shape(), json!({"square": 1})),
        "at /a: `square` is not one of `circle`, `empty`"
    );
    assert_eq!(
        error(&shape(), json!({"circle": 1, "empty": null})),
        "at /a: expected an object with exactly one property, one of `circle`, `empty`"
    );
    assert_eq!(
        error(&shape(), json!({"empty": 1})),
        "at /a/empty: expected null, got an integer"
    );
    assert_eq!(
        error(&fallible(), json!({"ok": "x"})),
        "at /a/ok: expected an integer, got a string"
    );
    assert_eq!(
        from_json(&point(), &json!({"a/b~": 1}), "/p~1q", &mut unlimited())
            .unwrap_err()
            .to_string(),
        "at /p~1q: unknown property `a/b~`"
    );
    assert_eq!(
        from_json(
            &WitType::List(Box::new(point())),
            &json!([{"x": "1"}]),
            "",
            &mut unlimited()
        )
        .unwrap_err()
        .to_string(),
        "at /0/x: expected an integer, got a string"
    );
}

#[test]
fn results_that_do_not_match_their_type_are_reported() {
    assert_eq!(
        to_json(&WitType::U8, &Val::String("x".into()))
            .unwrap_err()
            .to_string(),
        "the component returned a value that does not match its declared type u8"
    );
    assert_eq!(
        to_json(&WitType::F64, &Val::Float64(f64::NAN))
            .unwrap_err()
            .to_string(),
        "the component returned NaN as f64, which JSON cannot carry"
    );
    assert_eq!(
        to_json(&WitType::F32, &Val::Float32(f32::NEG_INFINITY))
            .unwrap_err()
            .to_string(),
        "the component returned NaN as f32, which JSON cannot carry".replace("NaN", "-inf")
    );
    let list = WitType::List(Box::new(WitType::F64));
    assert_eq!(
        to_json(
            &list,
            &Val::List(vec![Val::Float64(1.0), Val::Float64(f64::INFINITY)])
        )
        .unwrap_err()
        .to_string(),
        "the component returned inf as f64, which JSON cannot carry"
    );
}

/// Every integer width at min - 1, min, max and max + 1: the ends are taken
/// exactly and one past them is refused with the range.
#[test]
fn integer_boundaries_are_exact() {
    let widths: [(WitType, i128, i128); 8] = [
        (WitType::S8, i8::MIN.into(), i8::MAX.into()),
        (WitType::U8, 0, u8::MAX.into()),
        (WitType::S16, i16::MIN.into(), i16::MAX.into()),
        (WitType::U16, 0, u16::MAX.into()),
        (WitType::S32, i32::MIN.into(), i32::MAX.into()),
        (WitType::U32, 0, u32::MAX.into()),
        (WitType::S64, i64::MIN.into(), i64::MAX.into()),
        (WitType::U64, 0, u64::MAX.into()),
    ];
    // As a client sends them: JSON text.
    let parse = |n: i128| serde_json::from_str::<Value>(&n.to_string()).unwrap();
    for (ty, min, max) in widths {
        for n in [min, max] {
            round_trip(&ty, parse(n), parse(n));
        }
        for n in [min - 1, max + 1] {
            let message = error(&ty, parse(n));
            assert!(
                message.starts_with("at /a: ")
                    && (message.ends_with(&format!("({min} to {max})"))
                        || message.ends_with(&format!("from {min} to {max}"))),
                "{ty} {n}: {message}"
            );
        }
    }
    // Read as integers by serde_json: the exact value is in the message.
    assert_eq!(
        error(&WitType::U8, parse(-1)),
        "at /a: -1 is out of range for u8 (0 to 255)"
    );
    assert_eq!(
        error(&WitType::S64, parse(i128::from(i64::MAX) + 1)),
        "at /a: 9223372036854775808 is out of range for s64 \
         (-9223372036854775808 to 9223372036854775807)"
    );
    // Past 64 bits serde_json reads a double, rounded to -2^63: refused, not clamped.
    assert_eq!(
        error(&WitType::S64, parse(i128::from(i64::MIN) - 1)),
        "at /a: -9.223372036854776e+18 is not an exact s64: beyond ±9007199254740992 (2^53) \
         an integer must be written in plain digits, from -9223372036854775808 to \
         9223372036854775807"
    );
    assert_eq!(
        error(&WitType::U64, parse(i128::from(u64::MAX) + 1)),
        "at /a: 1.8446744073709552e+19 is not an exact u64: beyond ±9007199254740992 (2^53) \
         an integer must be written in plain digits, from 0 to 18446744073709551615"
    );
}

/// A number with a fraction or exponent counts as an integer only where a
/// double holds it exactly.
#[test]
fn integers_written_as_doubles_are_taken_only_when_exact() {
    let exact: Value = serde_json::from_str("9007199254740992.0").unwrap();
    round_trip(&WitType::U64, exact, json!(9_007_199_254_740_992u64));
    round_trip(&WitType::S16, json!(-1e3), json!(-1000));
    assert_eq!(
        error(&WitType::S64, serde_json::from_str("1e18").unwrap()),
        "at /a: 1e+18 is not an exact s64: beyond ±9007199254740992 (2^53) an integer must \
         be written in plain digits, from -9223372036854775808 to 9223372036854775807"
    );
    assert_eq!(
        error(&WitType::U8, json!(1e3)),
        "at /a: 1000.0 is out of range for u8 (0 to 255)"
    );
}

#[test]
fn f32_refuses_what_it_cannot_hold() {
    let max = f64::from(f32::MAX);
    // Back through the shortest f32 form.
    round_trip(&WitType::F32, json!(max), json!(3.4028235e38));
    round_trip(&WitType::F32, json!(-max), json!(-3.4028235e38));
    for big in [1e308, -1e39] {
        assert_eq!(
            error(&WitType::F32, json!(big)),
            format!(
                "at /a: {} is out of range for f32 (-3.4028234663852886e+38 to 3.4028234663852886e+38)",
                json!(big)
            )
        );
    }
    round_trip(&WitType::F64, json!(1e308), json!(1e308));
}

/// Large lists: under the budget they convert whole; over it they are refused
/// before the items are allocated.
#[test]
fn the_budget_counts_what_conversion_allocates() {
    let list = WitType::List(Box::new(WitType::U8));
    let items = json!(vec![255u8; 100_000]);
    let needed = 100_000 * std::mem::size_of::<Val>();
    let mut budget = Budget::new(needed);
    let Val::List(vals) = from_json(&list, &items, "", &mut budget).unwrap() else {
        panic!("not a list");
    };
    assert_eq!(
        (vals.len(), vals.capacity(), budget.used()),
        (100_000, 100_000, needed)
    );
    assert_eq!(
        from_json(&list, &items, "", &mut Budget::new(needed - 1)).unwrap_err(),
        ConvertError::TooLarge { limit: needed - 1 }
    );
    // Strings count their bytes; nested lists each of their items.
    let strings = WitType::List(Box::new(WitType::String));
    let mut budget = unlimited();
    from_json(&strings, &json!(["abc", "de"]), "", &mut budget).unwrap();
    assert_eq!(budget.used(), 2 * std::mem::size_of::<Val>() + 5);
    let nested = WitType::List(Box::new(list));
    let mut budget = Budget::new(10 * std::mem::size_of::<Val>());
    assert_eq!(
        from_json(
            &nested,
            &json!([[1, 2, 3], [4, 5, 6], [7, 8, 9]]),
            "",
            &mut budget
        )
        .unwrap_err()
        .to_string(),
        "the arguments would take more than 320 bytes of host memory once converted \
         (the plugin's memory limit)"
            .replace("320", &(10 * std::mem::size_of::<Val>()).to_string())
    );
}
