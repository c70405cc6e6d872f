//! `requestState` sealing: the client echoes it back, so it is attacker-controlled
//! input. Wharf signs it (HMAC-SHA256, rmcp's `RequestStateCodec`, with a random
//! key per process), binds it to the request it belongs to (method, name and a
//! digest of the arguments) and lets it expire, so a client can neither forge
//! answers nor replay a state against another tool, other arguments, or later.

use std::collections::BTreeMap;
use std::time::Duration;

use rmcp::model::{RequestStateCodec, RequestStateError, SealOptions};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// How long a sealed state may be echoed back: enough for a person to answer a
/// form, short enough that a leaked state is soon useless.
pub const STATE_TTL: Duration = Duration::from_secs(15 * 60);

/// What a state carries from one round to the next.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Carried {
    /// Answers given in earlier rounds, by key, so that a plugin asking the
    /// same questions again gets them at once.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub answers: BTreeMap<String, Value>,
    /// The plugin's own state (`set-request-state`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
}

/// The request a state belongs to.
#[derive(Debug, Clone, Copy)]
pub struct Binding<'a> {
    /// `tools/call`, `prompts/get` or `resources/read`.
    pub method: &'a str,
    /// The tool or prompt name, or the resource URI.
    pub name: &'a str,
    /// The request's arguments (`Value::Null` when it has none).
    pub arguments: &'a Value,
}

impl Binding<'_> {
    /// The associated data the tag covers: method, name and the SHA-256 of the
    /// arguments in a canonical form (object keys sorted), so a retry that
    /// re-serialises the same arguments still matches.
    fn associated_data(&self) -> Vec<u8> {
        let mut canonical = String::new();
        write_canonical(self.arguments, &mut canonical);
        let digest = Sha256::digest(canonical.as_bytes());
        let mut data = Vec::with_capacity(self.method.len() + self.name.len() + 34);
        data.extend_from_slice(self.method.as_bytes());
        data.push(0);
        data.extend_from_slice(self.name.as_bytes());
        data.push(0);
        data.extend_from_slice(&digest);
        data
    }
}

/// JSON with object keys in sorted order, whatever order they arrived in.
fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// Why an echoed state was refused, for the -32602 message.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum StateRejected {
    #[error("requestState has expired; call again without it")]
    Expired,
    #[error("requestState failed verification (altered, or from another request)")]
    Invalid,
}

/// Seals and opens request states with this process's key.
pub struct StateSeal {
    codec: RequestStateCodec,
    ttl: Duration,
}

impl std::fmt::Debug for StateSeal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateSeal").field("ttl", &self.ttl).finish()
    }
}

impl StateSeal {
    /// A seal with a fresh random key: states do not survive a restart, which
    /// only costs a client one more round.
    pub fn random() -> Self {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).expect("the operating system's random number generator");
        Self::with_key(&key, STATE_TTL)
    }

    pub(crate) fn with_key(key: &[u8], ttl: Duration) -> Self {
        Self {
            codec: RequestStateCodec::try_new(key.to_vec()).expect("a 32-byte key"),
            ttl,
        }
    }

    pub fn seal(&self, carried: &Carried, binding: Binding<'_>) -> String {
        let data = binding.associated_data();
        let payload = serde_json::to_vec(carried).expect("carried state serialises");
        self.codec.seal_with(
            &payload,
            &SealOptions::new().associated_data(&data).ttl(self.ttl),
        )
    }

    pub fn open(&self, sealed: &str, binding: Binding<'_>) -> Result<Carried, StateRejected> {
        let data = binding.associated_data();
        let payload = self
            .codec
            .open_with(sealed, &data)
            .map_err(|error| match error {
                RequestStateError::Expired => StateRejected::Expired,
                _ => StateRejected::Invalid,
            })?;
        serde_json::from_slice(&payload).map_err(|_| StateRejected::Invalid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn carried() -> Carried {
        Carried {
            answers: BTreeMap::from([("name".into(), json!({"action": "accept"}))]),
            state: Some("step-2".into()),
        }
    }

    fn binding(arguments: &Value) -> Binding<'_> {
        Binding {
            method: "tools/call",
            name: "t",
            arguments,
        }
    }

    #[test]
    fn a_sealed_state_opens_for_the_same_request_in_any_key_order() {
        let seal = StateSeal::random();
        let sealed = seal.seal(&carried(), binding(&json!({"a": 1, "b": [true]})));
        let reordered: Value = serde_json::from_str(r#"{"b":[true],"a":1}"#).unwrap();
        assert_eq!(seal.open(&sealed, binding(&reordered)), Ok(carried()));
    }

    #[test]
    fn tampering_and_other_requests_are_rejected() {
        let seal = StateSeal::random();
        let args = json!({"a": 1});
        let sealed = seal.seal(&carried(), binding(&args));
        let tampered = format!("{sealed}-TAMPERED");
        assert_eq!(
            seal.open(&tampered, binding(&args)),
            Err(StateRejected::Invalid)
        );
        let mut flipped = sealed.clone().into_bytes();
        let last = flipped.len() - 1;
        flipped[last] = if flipped[last] == b'A' { b'B' } else { b'A' };
        assert_eq!(
            seal.open(std::str::from_utf8(&flipped).unwrap(), binding(&args)),
            Err(StateRejected::Invalid)
        );
        assert_eq!(
            seal.open(&sealed, binding(&json!({"a": 2}))),
            Err(StateRejected::Invalid)
        );
        let other_tool = Binding {
            name: "u",
            ..binding(&args)
        };
        assert_eq!(seal.open(&sealed, other_tool), Err(StateRejected::Invalid));
        let other_method = Binding {
            method: "prompts/get",
            ..binding(&args)
        };
        assert_eq!(
            seal.open(&sealed, other_method),
            Err(StateRejected::Invalid)
        );
        assert_eq!(
            seal.open("not a state", binding(&args)),
            Err(StateRejected::Invalid)
        );
    }

    #[test]
    fn another_process_key_is_rejected() {
        let args = json!({});
        let sealed = StateSeal::random().seal(&carried(), binding(&args));
        assert_eq!(
            StateSeal::random().open(&sealed, binding(&args)),
            Err(StateRejected::Invalid)
        );
    }

    #[test]
    fn an_old_state_expires() {
        let seal = StateSeal::with_key(&[7; 32], Duration::from_millis(1));
        let args = json!({});
        let sealed = seal.seal(&carried(), binding(&args));
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(
            seal.open(&sealed, binding(&args)),
            Err(StateRejected::Expired)
        );
    }

    #[test]
    fn canonical_json_sorts_keys_at_every_depth() {
        let mut out = String::new();
        write_canonical(
            &json!({"b": {"d": 1, "c": "x"}, "a": [null, 2.5]}),
            &mut out,
        );
        assert_eq!(out, r#"{"a":[null,2.5],"b":{"c":"x","d":1}}"#);
    }
}
