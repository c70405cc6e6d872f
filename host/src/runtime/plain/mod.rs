//! Plain components: any component exporting ordinary typed functions, each of
//! which becomes a tool.
//!
//! Strategy: at load time `describe` reads the component's type through
//! wasmtime's reflection and turns every usable exported function into a
//! [`ToolSpec`](super::ToolSpec) (schemas from `schema`, descriptions from the
//! `package-docs` section) plus an owned copy of its signature. A call converts
//! the JSON arguments to component values with that signature (`convert`), calls
//! the function dynamically in a fresh instance, and converts the result back,
//! so the layers above see the same `CallOutput` as from a `wharf:plugin`
//! component.

pub(crate) mod convert;
mod describe;
pub mod schema;
pub mod shape;

use serde_json::{Value, json};
use wasmtime::component::Val;

pub use convert::{Budget, ConvertError};
pub(crate) use describe::{PlainTool, describe};

use super::failure::CallFailure;
use super::types::{CallOutput, ContentItem};
use shape::{Signature, WitType};

/// A plain component's tools (in the order of the plugin's specs).
pub(crate) struct PlainExports {
    pub(crate) tools: Vec<PlainTool>,
}

/// The call's parameters from its JSON arguments (an object), taking at most
/// `budget` bytes of host memory (see [`Budget`]).
pub(crate) fn arguments(
    signature: &Signature,
    arguments: &Value,
    budget: usize,
) -> Result<Vec<Val>, CallFailure> {
    convert::params_from_json(signature, arguments, &mut Budget::new(budget)).map_err(|e| match e {
        ConvertError::TooLarge { limit } => CallFailure::ArgumentsTooLarge { limit },
        other => CallFailure::InvalidArguments(other.to_string()),
    })
}

/// A placeholder for each result slot that `Func::call_async` fills in.
pub(crate) fn result_slots(signature: &Signature) -> Vec<Val> {
    vec![Val::Bool(false); usize::from(signature.result.is_some())]
}

/// The tool result for what the function returned.
///
/// No result: the text `ok`. A `result<T, E>`: `ok(v)` as a value of type `T`,
/// `err(e)` as a tool error whose text is `e`. Any other value: text (a string
/// itself, anything else as compact JSON) and `{"result": value}` as structured
/// content.
pub(crate) fn output(signature: &Signature, results: &[Val]) -> Result<CallOutput, CallFailure> {
    let mismatch = |e: ConvertError| CallFailure::Failed(e.to_string());
    let (ty, val) = match (&signature.result, results.first()) {
        (None, _) => return Ok(done()),
        (Some(ty), Some(val)) => (ty, val),
        (Some(ty), None) => {
            return Err(mismatch(ConvertError::Mismatch(ty.to_string())));
        }
    };
    match (ty, val) {
        (WitType::Result { ok, err }, Val::Result(outcome)) => match outcome {
            Ok(payload) => match (ok, payload) {
                (None, _) => Ok(done()),
                (Some(ty), Some(val)) => Ok(value(convert::to_json(ty, val).map_err(mismatch)?)),
                (Some(ty), None) => Err(mismatch(ConvertError::Mismatch(ty.to_string()))),
            },
            Err(payload) => {
                let text = match (err, payload) {
                    (Some(ty), Some(val)) => text(&convert::to_json(ty, val).map_err(mismatch)?),
                    _ => "the function returned an error without details".to_string(),
                };
                Ok(CallOutput::error(text))
            }
        },
        (ty, val) => Ok(value(convert::to_json(ty, val).map_err(mismatch)?)),
    }
}

/// The output of a function with nothing to return.
fn done() -> CallOutput {
    CallOutput {
        content: vec![ContentItem::Text("ok".into())],
        structured: None,
        is_error: false,
    }
}

fn value(result: Value) -> CallOutput {
    CallOutput {
        content: vec![ContentItem::Text(text(&result))],
        structured: Some(json!({ "result": result })),
        is_error: false,
    }
}

/// A string as itself, anything else as compact JSON.
fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(result: Option<WitType>) -> Signature {
        Signature {
            name: "f".into(),
            params: vec![],
            result,
        }
    }

    fn fallible(ok: Option<WitType>) -> WitType {
        WitType::Result {
            ok: ok.map(Box::new),
            err: Some(Box::new(WitType::String)),
        }
    }

    fn text_of(output: &CallOutput) -> &str {
        match &output.content[..] {
            [ContentItem::Text(text)] => text,
            other => panic!("expected one text item, got {other:?}"),
        }
    }

    #[test]
    fn no_result_is_ok_text() {
        let out = output(&sig(None), &[]).unwrap();
        assert_eq!(
            (text_of(&out), &out.structured, out.is_error),
            ("ok", &None, false)
        );
    }

    #[test]
    fn values_are_structured_and_mirrored_as_text() {
        let out = output(&sig(Some(WitType::String)), &[Val::String("hi".into())]).unwrap();
        assert_eq!(text_of(&out), "hi");
        assert_eq!(out.structured, Some(json!({"result": "hi"})));
        let list = WitType::List(Box::new(WitType::U8));
        let out = output(&sig(Some(list)), &[Val::List(vec![Val::U8(1), Val::U8(2)])]).unwrap();
        assert_eq!(text_of(&out), "[1,2]");
        assert_eq!(out.structured, Some(json!({"result": [1, 2]})));
    }

    #[test]
    fn result_ok_is_the_value_and_err_a_tool_error() {
        let s = sig(Some(fallible(Some(WitType::U32))));
        let ok = output(&s, &[Val::Result(Ok(Some(Box::new(Val::U32(3)))))]).unwrap();
        assert_eq!((text_of(&ok), ok.is_error), ("3", false));
        assert_eq!(ok.structured, Some(json!({"result": 3})));
        let err = output(
            &s,
            &[Val::Result(Err(Some(Box::new(Val::String("bad".into())))))],
        )
        .unwrap();
        assert_eq!((text_of(&err), err.is_error), ("bad", true));
        assert_eq!(err.structured, None);
        let unit = output(&sig(Some(fallible(None))), &[Val::Result(Ok(None))]).unwrap();
        assert_eq!((text_of(&unit), &unit.structured), ("ok", &None));
    }

    #[test]
    fn mismatched_results_fail_the_call() {
        let failure = output(&sig(Some(WitType::U8)), &[Val::Bool(true)]).unwrap_err();
        assert_eq!(
            failure.to_string(),
            "the component returned a value that does not match its declared type u8"
        );
    }

    #[test]
    fn arguments_over_the_budget_are_refused() {
        let list = Signature {
            name: "f".into(),
            params: vec![("xs".into(), WitType::List(Box::new(WitType::U8)))],
            result: None,
        };
        let xs = json!({"xs": vec![7u8; 1000]});
        let item = std::mem::size_of::<Val>();
        // The record of parameters, its one name, then the items.
        let needed = std::mem::size_of::<(String, Val)>() + 2 + 1000 * item;
        assert_eq!(arguments(&list, &xs, needed).unwrap().len(), 1);
        assert_eq!(
            arguments(&list, &xs, needed - 1).unwrap_err(),
            CallFailure::ArgumentsTooLarge { limit: needed - 1 }
        );
        assert_eq!(
            arguments(&list, &xs, 1000).unwrap_err().to_string(),
            "arguments too large: converted for the plugin they would take more than \
             1000 bytes of host memory (its memory limit); send less"
        );
    }
}
