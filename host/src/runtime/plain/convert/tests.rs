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

/// JSON -> Val -> JSON gives `expected` back.
fn round_trip(ty: &WitType, input: Value, expected: Value) {
    let val = from_json(ty, &input, "").unwrap();
    assert_eq!(to_json(ty, &val).unwrap(), expected, "for {input}");
}

fn error(ty: &WitType, input: Value) -> String {
    from_json(ty, &input, "/a").unwrap_err().to_string()
}

#[test]
fn values_round_trip() {
    round_trip(&WitType::Bool, json!(true), json!(true));
    round_trip(&WitType::U64, json!(u64::MAX), json!(u64::MAX));
    round_trip(&WitType::S64, json!(i64::MIN), json!(i64::MIN));
    round_trip(&WitType::S8, json!(-3.0), json!(-3));
    round_trip(&WitType::F32, json!(1.5), json!(1.5));
    round_trip(&WitType::F32, json!(0.1), json!(0.1));
    round_trip(&WitType::F32, json!(1e39), json!(null));
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
        params_from_json(&sig, &json!({"b": 2, "a": 1})).unwrap(),
        vec![Val::U8(1), Val::Option(Some(Box::new(Val::U8(2))))]
    );
    assert_eq!(
        params_from_json(&sig, &json!({"a": 1})).unwrap(),
        vec![Val::U8(1), Val::Option(None)]
    );
    assert_eq!(
        params_from_json(&sig, &json!([1])).unwrap_err().to_string(),
        "at (root): expected an object, got an array"
    );
    assert_eq!(
        params_from_json(&sig, &json!({})).unwrap_err().to_string(),
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
        from_json(&point(), &json!({"a/b~": 1}), "/p~1q")
            .unwrap_err()
            .to_string(),
        "at /p~1q: unknown property `a/b~`"
    );
    assert_eq!(
        from_json(&WitType::List(Box::new(point())), &json!([{"x": "1"}]), "")
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
        to_json(&WitType::F64, &Val::Float64(f64::NAN)).unwrap(),
        Value::Null
    );
}
