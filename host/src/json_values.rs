//! How many JSON values a message holds, counted before it is parsed.
//!
//! A parsed JSON value costs the host far more than its text: `1,` is two bytes
//! and becomes a 32-byte `serde_json::Value`, then a 32-byte component value
//! for the plugin, so a 16 MiB line of small numbers held about 700 MiB while
//! it was read and converted (issue 32, defect 5). The transports refuse a
//! message with more values than a limit before parsing it; the limit bounds
//! what one request can make the host allocate, whatever its bytes hold.
//!
//! The count is a scan of the bytes outside strings: a message holds at most
//! one value more than its commas and opening brackets together (each
//! container of n members has n - 1 commas). Every value takes at least one
//! byte, so a message no longer than the limit is never scanned.

/// The default limit: a million values, some 70 MiB of host memory at most
/// for the values of one request.
pub const DEFAULT_MAX_JSON_VALUES: usize = 1_000_000;

/// Whether `message` may hold more than `limit` JSON values (it does, if it is
/// well-formed JSON). Malformed JSON is counted all the same: the parser that
/// follows names what is wrong with it.
pub fn more_than(message: &[u8], limit: usize) -> bool {
    if message.len() <= limit {
        return false;
    }
    let mut count = 1usize;
    let mut in_string = false;
    let mut escaped = false;
    for &byte in message {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match byte {
                b'"' => in_string = true,
                b',' | b'[' | b'{' => {
                    count += 1;
                    if count > limit {
                        return true;
                    }
                }
                _ => {}
            }
        }
    }
    count > limit
}

/// The message of the error that refuses such a message.
pub fn too_many(limit: usize) -> String {
    format!(
        "Invalid Request: the message holds more than {limit} JSON values \
         (--max-json-values); send bulk data as one string"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exact number of values in `json`, by parsing it.
    fn values(json: &str) -> usize {
        fn count(value: &serde_json::Value) -> usize {
            1 + match value {
                serde_json::Value::Array(items) => items.iter().map(count).sum(),
                serde_json::Value::Object(members) => members.values().map(count).sum(),
                _ => 0,
            }
        }
        count(&serde_json::from_str(json).unwrap())
    }

    /// The smallest limit `more_than` lets `json` pass.
    fn counted(json: &str) -> usize {
        (0..=json.len())
            .find(|&limit| !more_than(json.as_bytes(), limit))
            .unwrap()
    }

    #[test]
    fn the_count_is_never_below_the_values_and_exact_without_empty_containers() {
        for json in [
            "1",
            "[1,2,3]",
            r#"{"a":1,"b":[true,null,{"c":"x"}]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e","arguments":{"xs":[1,2,3,4]}}}"#,
            r#"["a,b","c\"],[{","\\",1]"#,
        ] {
            assert_eq!(counted(json), values(json), "{json}");
        }
        // Each empty container is counted one over: a bound, never an
        // undercount.
        assert_eq!(values("[[],{}]"), 3);
        assert_eq!(counted("[[],{}]"), 5);
    }

    #[test]
    fn a_message_no_longer_than_the_limit_is_not_scanned() {
        assert!(!more_than(b"[,,,,,,,,,]", 11));
        assert!(more_than(b"[,,,,,,,,,]", 10));
    }

    #[test]
    fn a_long_list_of_small_numbers_is_refused() {
        let list = format!("[{}]", vec!["1"; 2_000_000].join(","));
        assert!(more_than(list.as_bytes(), DEFAULT_MAX_JSON_VALUES));
        assert!(!more_than(list.as_bytes(), 2_000_001));
        let text = format!(r#"{{"xs":"{}"}}"#, "1,".repeat(2_000_000));
        assert!(
            !more_than(text.as_bytes(), DEFAULT_MAX_JSON_VALUES),
            "commas in a string are text"
        );
    }
}
