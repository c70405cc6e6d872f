//! `requestState` sealing: the client echoes it back, so it is attacker-controlled
//! input. Wharf signs it (HMAC-SHA256, rmcp's `RequestStateCodec`, with a random
//! key per process, or the key of `--state-key-file` shared by replicas), binds it to the request it belongs to (method, name and a
//! digest of the arguments) and lets it expire, so a client can neither forge
//! answers nor replay a state against another tool, other arguments, or later.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
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

/// The fewest bytes a state key file may hold: HMAC-SHA256 wants a key at
/// least as long as its output (rmcp's `RequestStateCodec::MIN_KEY_LENGTH`).
pub const MIN_STATE_KEY_BYTES: usize = RequestStateCodec::MIN_KEY_LENGTH;

/// Why `--state-key-file` could not be used; the server does not start.
#[derive(Debug, thiserror::Error)]
pub enum StateKeyError {
    #[error("state key file {}: no such file", .0.display())]
    Missing(PathBuf),
    #[error("cannot read state key file {}: {source}", path.display())]
    Unreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "state key file {} holds {len} bytes; a key needs at least {MIN_STATE_KEY_BYTES} \
         (make one with `head -c 32 /dev/urandom | base64 > FILE`)",
        path.display()
    )]
    TooShort { path: PathBuf, len: usize },
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

    /// A seal with the key in `path`, so that replicas given the same file open
    /// each other's states. The key is the file's bytes without one final line
    /// end (`\n` or `\r\n`, which an editor or `base64` adds); anything
    /// else, binary bytes included, is part of it.
    pub fn from_key_file(path: &Path) -> Result<Self, StateKeyError> {
        let bytes = std::fs::read(path).map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound => StateKeyError::Missing(path.to_path_buf()),
            _ => StateKeyError::Unreadable {
                path: path.to_path_buf(),
                source,
            },
        })?;
        let key = bytes
            .strip_suffix(b"\r\n")
            .or_else(|| bytes.strip_suffix(b"\n"))
            .unwrap_or(&bytes);
        if key.len() < MIN_STATE_KEY_BYTES {
            return Err(StateKeyError::TooShort {
                path: path.to_path_buf(),
                len: key.len(),
            });
        }
        Ok(Self::with_key(key, STATE_TTL))
    }

    pub(crate) fn with_key(key: &[u8], ttl: Duration) -> Self {
        Self {
            codec: RequestStateCodec::try_new(key.to_vec()).expect("a key of 32 bytes or more"),
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
    fn replicas_with_one_key_file_open_each_other_states() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.key");
        std::fs::write(
            &path,
            "c2hhcmVkIGJ5IGV2ZXJ5IHJlcGxpY2Egb2YgdGhpcyBkZXBsb3k=\n",
        )
        .unwrap();
        let args = json!({"a": 1});
        let sealed = StateSeal::from_key_file(&path)
            .unwrap()
            .seal(&carried(), binding(&args));
        let other_replica = StateSeal::from_key_file(&path).unwrap();
        assert_eq!(other_replica.open(&sealed, binding(&args)), Ok(carried()));
        // The final line end is not part of the key.
        std::fs::write(
            &path,
            "c2hhcmVkIGJ5IGV2ZXJ5IHJlcGxpY2Egb2YgdGhpcyBkZXBsb3k=",
        )
        .unwrap();
        let without_newline = StateSeal::from_key_file(&path).unwrap();
        assert_eq!(without_newline.open(&sealed, binding(&args)), Ok(carried()));
        std::fs::write(
            &path,
            "c2hhcmVkIGJ5IGV2ZXJ5IHJlcGxpY2Egb2YgdGhpcyBkZXBsb3k=\r\n",
        )
        .unwrap();
        let crlf = StateSeal::from_key_file(&path).unwrap();
        assert_eq!(crlf.open(&sealed, binding(&args)), Ok(carried()));
        // Any other byte is part of the key: another key refuses it.
        std::fs::write(
            &path,
            "c2hhcmVkIGJ5IGV2ZXJ5IHJlcGxpY2Egb2YgdGhpcyBkZXBsb3k= ",
        )
        .unwrap();
        let other_key = StateSeal::from_key_file(&path).unwrap();
        assert_eq!(
            other_key.open(&sealed, binding(&args)),
            Err(StateRejected::Invalid)
        );
    }

    #[test]
    fn a_missing_short_or_unreadable_key_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("absent.key");
        assert_eq!(
            StateSeal::from_key_file(&missing).unwrap_err().to_string(),
            format!("state key file {}: no such file", missing.display())
        );
        let short = dir.path().join("short.key");
        std::fs::write(&short, format!("{}\n", "k".repeat(31))).unwrap();
        assert_eq!(
            StateSeal::from_key_file(&short).unwrap_err().to_string(),
            format!(
                "state key file {} holds 31 bytes; a key needs at least 32 \
                 (make one with `head -c 32 /dev/urandom | base64 > FILE`)",
                short.display()
            )
        );
        // A directory cannot be read as a file.
        assert_eq!(
            StateSeal::from_key_file(dir.path())
                .unwrap_err()
                .to_string(),
            format!(
                "cannot read state key file {}: Is a directory (os error 21)",
                dir.path().display()
            )
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
