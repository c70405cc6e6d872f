//! The sealed `requestState` opener: the client echoes the state back, so it
//! is attacker-controlled.
//! Invariants: no panic; a string the fuzzer made never opens (it cannot
//! know the key); a state sealed here opens for its own request, in any key
//! order, and a changed copy never opens to anything else.
#![no_main]
use std::collections::BTreeMap;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use wharf::fuzzing::{Binding, Carried, seal_with_key};

#[derive(Arbitrary, Debug)]
struct Case {
    forged: String,
    method: String,
    name: String,
    arguments: Vec<(String, i64)>,
    answers: Vec<(String, String)>,
    state: Option<String>,
    /// Where to change the sealed state, and the byte to put there.
    flip: Option<(u16, u8)>,
    other_name: String,
}

fuzz_target!(|case: Case| {
    let seal = seal_with_key(&[7; 32]);
    let arguments = Value::Object(
        case.arguments
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect(),
    );
    let binding = Binding {
        method: &case.method,
        name: &case.name,
        arguments: &arguments,
    };
    assert!(
        seal.open(&case.forged, binding).is_err(),
        "a forged state opened"
    );
    let carried = Carried {
        answers: case
            .answers
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect::<BTreeMap<_, _>>(),
        state: case.state.clone(),
    };
    let sealed = seal.seal(&carried, binding);
    assert_eq!(seal.open(&sealed, binding).as_ref(), Ok(&carried));
    let reversed = Value::Object(
        case.arguments
            .iter()
            .rev()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect(),
    );
    let reordered = Binding {
        arguments: &reversed,
        ..binding
    };
    if reversed == arguments {
        assert_eq!(seal.open(&sealed, reordered).as_ref(), Ok(&carried));
    }
    if case.other_name != case.name {
        let other = Binding {
            name: &case.other_name,
            ..binding
        };
        assert!(
            seal.open(&sealed, other).is_err(),
            "opened for another name"
        );
    }
    if let Some((at, byte)) = case.flip {
        let mut bytes = sealed.clone().into_bytes();
        if !bytes.is_empty() {
            let at = usize::from(at) % bytes.len();
            bytes[at] = byte;
            if let Ok(changed) = String::from_utf8(bytes)
                && let Ok(opened) = seal.open(&changed, binding)
            {
                assert_eq!(opened, carried, "a changed state opened to other contents");
            }
        }
    }
});
