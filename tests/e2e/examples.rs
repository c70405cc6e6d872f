//! The example plugins in other languages (`cargo xtask examples`: JavaScript,
//! Python, C, Go, WAT) are plain components: each exported WIT function is a tool.
//! For each one, the real binary serves a folder holding just that example; the
//! tests list its tools (names, descriptions from the WIT docs, parameters), call
//! every tool with valid arguments and check the exact result, and check that bad
//! arguments and domain errors come back as tool errors.
//!
//! The contract they check: tool `<plugin>_<function>` (or
//! `<plugin>_<interface>.<function>`), arguments keyed by WIT parameter names,
//! text content = the string itself for a string result and compact JSON
//! otherwise, `structuredContent` = `{"result": value}`, `err(e)` of a `result`
//! = `isError: true` with `e` as text.

use serde_json::{Value, json};

use crate::harness::*;

/// One tool as `tools/list` should show it.
struct Listed {
    name: &'static str,
    /// A phrase from the function's WIT doc comment.
    doc: &'static str,
    /// The WIT parameter names.
    params: &'static [&'static str],
}

/// Serves just `example` (from target/plugins) and checks its tool list.
fn serve(example: &str, tools: &[Listed]) -> Wharf {
    let mut wharf = Wharf::start(&[example], &[]);
    let response = wharf.modern(1, "tools/list", json!({}));
    let listed = result_of(&response)["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {response}"))
        .clone();
    let names: Vec<&str> = listed.iter().map(|t| t["name"].as_str().unwrap()).collect();
    let expected: Vec<&str> = tools.iter().map(|t| t.name).collect();
    assert_eq!(names, expected, "tools of {example}");
    for (tool, want) in listed.iter().zip(tools) {
        let description = tool["description"]
            .as_str()
            .unwrap_or_else(|| panic!("no description: {tool}"));
        assert!(
            description.contains(want.doc),
            "the description of {} should come from its WIT docs ({:?}): {tool}",
            want.name,
            want.doc
        );
        let schema = &tool["inputSchema"];
        assert_eq!(schema["type"], "object", "{tool}");
        let mut properties: Vec<&str> = schema["properties"]
            .as_object()
            .unwrap_or_else(|| panic!("no properties: {tool}"))
            .keys()
            .map(String::as_str)
            .collect();
        properties.sort_unstable();
        let mut params = want.params.to_vec();
        params.sort_unstable();
        assert_eq!(properties, params, "parameters of {}", want.name);
    }
    wharf
}

/// Calls `tool` and asserts a successful result whose text is exactly `text`
/// and whose structured content is `{"result": structured}`.
fn assert_result(
    wharf: &mut Wharf,
    id: i64,
    tool: &str,
    args: Value,
    text: &str,
    structured: Value,
) {
    let result = call(wharf, id, tool, args);
    assert_ne!(result["isError"], true, "{tool} failed: {result}");
    assert_eq!(first_text(&result), text, "{result}");
    assert_eq!(
        result["structuredContent"],
        json!({ "result": structured }),
        "{result}"
    );
}

/// Calls `tool` and asserts a successful result holding the JSON value
/// `expected` (as compact JSON text and as structured content); numbers are
/// compared by value, so `1.0` and `1` are equal.
fn assert_json_result(wharf: &mut Wharf, id: i64, tool: &str, args: Value, expected: Value) {
    let result = call(wharf, id, tool, args);
    assert_ne!(result["isError"], true, "{tool} failed: {result}");
    let text = first_text(&result);
    assert!(!text.contains(['\n', ' ']), "not compact JSON: {text:?}");
    let parsed: Value =
        serde_json::from_str(text).unwrap_or_else(|e| panic!("text is not JSON ({e}): {text}"));
    assert_same(&parsed, &expected, &result);
    assert_same(&result["structuredContent"]["result"], &expected, &result);
}

fn assert_same(found: &Value, expected: &Value, context: &Value) {
    match (found, expected) {
        (Value::Number(a), Value::Number(b)) => {
            assert_eq!(a.as_f64(), b.as_f64(), "{found} != {expected} in {context}")
        }
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<_> = a.keys().collect();
            keys.sort();
            let mut wanted: Vec<_> = b.keys().collect();
            wanted.sort();
            assert_eq!(keys, wanted, "fields of {found} in {context}");
            for (key, value) in b {
                assert_same(&a[key], value, context);
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            assert_eq!(a.len(), b.len(), "{found} != {expected} in {context}");
            for (x, y) in a.iter().zip(b) {
                assert_same(x, y, context);
            }
        }
        _ => assert_eq!(found, expected, "in {context}"),
    }
}

/// Calls `tool` and asserts a tool error (`isError: true`, not a JSON-RPC
/// error), whose text is exactly `message` when given.
fn assert_tool_error(wharf: &mut Wharf, id: i64, tool: &str, args: Value, message: Option<&str>) {
    let result = call(wharf, id, tool, args);
    assert_eq!(result["isError"], true, "{tool} should fail: {result}");
    if let Some(message) = message {
        assert_eq!(first_text(&result), message, "{result}");
    }
}

#[test]
fn wat_add() {
    let mut wharf = serve(
        "wat-add",
        &[Listed {
            name: "wat-add_add",
            doc: "Adds two 32-bit signed integers",
            params: &["a", "b"],
        }],
    );
    assert_result(
        &mut wharf,
        2,
        "wat-add_add",
        json!({"a": 2, "b": 40}),
        "42",
        json!(42),
    );
    assert_result(
        &mut wharf,
        3,
        "wat-add_add",
        json!({"a": 2147483647, "b": 1}),
        "-2147483648",
        json!(-2147483648i64),
    );
    assert_tool_error(
        &mut wharf,
        4,
        "wat-add_add",
        json!({"a": "two", "b": 40}),
        None,
    );
    assert_tool_error(&mut wharf, 5, "wat-add_add", json!({"a": 2}), None);
}

#[test]
fn c_checksum() {
    let mut wharf = serve(
        "c-checksum",
        &[
            Listed {
                name: "c-checksum_hash.checksum",
                doc: "The checksum of the UTF-8 bytes of a text, as a number",
                params: &["text", "algorithm"],
            },
            Listed {
                name: "c-checksum_hash.format-checksum",
                doc: "written out in a format",
                params: &["text", "algorithm", "format"],
            },
        ],
    );
    let checksum = "c-checksum_hash.checksum";
    for (id, algorithm, sum) in [
        (2, "crc32", 907060870u32),
        (3, "fnv1a", 1335831723),
        (4, "adler32", 103547413),
    ] {
        let text = sum.to_string();
        let args = json!({"text": "hello", "algorithm": algorithm});
        assert_result(&mut wharf, id, checksum, args, &text, json!(sum));
    }
    let format = "c-checksum_hash.format-checksum";
    // Variant cases without a payload are `{"case": null}`.
    assert_result(
        &mut wharf,
        9,
        format,
        json!({"text": "hello", "algorithm": "crc32", "format": {"hex": null}}),
        "3610a686",
        json!("3610a686"),
    );
    assert_result(
        &mut wharf,
        10,
        format,
        json!({"text": "hello", "algorithm": "adler32", "format": {"decimal": null}}),
        "103547413",
        json!("103547413"),
    );
    assert_result(
        &mut wharf,
        5,
        format,
        json!({"text": "hello", "algorithm": "crc32", "format": {"radix": 16}}),
        "3610a686",
        json!("3610a686"),
    );
    assert_result(
        &mut wharf,
        6,
        format,
        json!({"text": "hello", "algorithm": "fnv1a", "format": {"radix": 36}}),
        "m3bicr",
        json!("m3bicr"),
    );
    // A domain error: `err(...)` of the result.
    assert_tool_error(
        &mut wharf,
        7,
        format,
        json!({"text": "hello", "algorithm": "crc32", "format": {"radix": 40}}),
        Some("radix 40 is outside 2..=36"),
    );
    // Not a case of the enum.
    assert_tool_error(
        &mut wharf,
        8,
        checksum,
        json!({"text": "hello", "algorithm": "md5"}),
        None,
    );
}

#[test]
fn go_roman() {
    let mut wharf = serve(
        "go-roman",
        &[
            Listed {
                name: "go-roman_from-roman",
                doc: "Reads Roman numerals",
                params: &["numeral"],
            },
            Listed {
                name: "go-roman_to-roman",
                doc: "Writes a number (1 to 3999) in Roman numerals",
                params: &["number"],
            },
        ],
    );
    let to = "go-roman_to-roman";
    let from = "go-roman_from-roman";
    assert_result(
        &mut wharf,
        2,
        to,
        json!({"number": 1994}),
        "MCMXCIV",
        json!("MCMXCIV"),
    );
    assert_result(
        &mut wharf,
        3,
        to,
        json!({"number": 3999}),
        "MMMCMXCIX",
        json!("MMMCMXCIX"),
    );
    assert_result(
        &mut wharf,
        4,
        from,
        json!({"numeral": "MCMXCIV"}),
        "1994",
        json!(1994),
    );
    assert_result(
        &mut wharf,
        5,
        from,
        json!({"numeral": "mmxxvi"}),
        "2026",
        json!(2026),
    );
    assert_tool_error(
        &mut wharf,
        6,
        to,
        json!({"number": 0}),
        Some("0 has no Roman numeral: they cover 1 to 3999"),
    );
    assert_tool_error(
        &mut wharf,
        7,
        from,
        json!({"numeral": "IIII"}),
        Some(r#""IIII" is not a Roman numeral in canonical form (4 is written IV)"#),
    );
    // Not a u32.
    assert_tool_error(&mut wharf, 8, to, json!({"number": -5}), None);
}

#[test]
fn py_stats() {
    // componentize-py also exports an `exports` interface (its `init` hook): not a tool.
    let mut wharf = serve(
        "py-stats",
        &[
            Listed {
                name: "py-stats_percentile",
                doc: "The p-th percentile",
                params: &["values", "p"],
            },
            Listed {
                name: "py-stats_summarize",
                doc: "Summarises a list of numbers",
                params: &["values"],
            },
        ],
    );
    assert_json_result(
        &mut wharf,
        2,
        "py-stats_summarize",
        json!({"values": [4, 1, 3, 2]}),
        json!({"count": 4, "min": 1.0, "max": 4.0, "mean": 2.5, "median": 2.5,
               "stddev": 1.118033988749895}),
    );
    assert_result(
        &mut wharf,
        3,
        "py-stats_percentile",
        json!({"values": [1, 2, 3, 4], "p": 90}),
        "3.7",
        json!(3.7),
    );
    assert_tool_error(
        &mut wharf,
        4,
        "py-stats_summarize",
        json!({"values": []}),
        Some("the list of values is empty"),
    );
    assert_tool_error(
        &mut wharf,
        5,
        "py-stats_percentile",
        json!({"values": [1, 2], "p": 101}),
        Some("p must be between 0 and 100, not 101.0"),
    );
    // Not a list of numbers.
    assert_tool_error(
        &mut wharf,
        6,
        "py-stats_summarize",
        json!({"values": "1,2"}),
        None,
    );
}

#[test]
fn js_strings() {
    let mut wharf = serve(
        "js-strings",
        &[
            Listed {
                name: "js-strings_convert-case",
                doc: "Rewrites text in another case style",
                params: &["text", "style"],
            },
            Listed {
                name: "js-strings_slugify",
                doc: "Turns text into a URL slug",
                params: &["text"],
            },
            Listed {
                name: "js-strings_word-count",
                doc: "Counts the words, characters and lines",
                params: &["text"],
            },
        ],
    );
    assert_result(
        &mut wharf,
        2,
        "js-strings_slugify",
        json!({"text": "Héllo, Wörld! It's 2026 — Straße"}),
        "hello-world-its-2026-strasse",
        json!("hello-world-its-2026-strasse"),
    );
    assert_json_result(
        &mut wharf,
        3,
        "js-strings_word-count",
        json!({"text": "Hello world\nit's me"}),
        json!({"words": 4, "characters": 19, "lines": 2}),
    );
    for (id, style, text) in [
        (4, "snake", "parse_http_response_now_please"),
        (5, "camel", "parseHttpResponseNowPlease"),
        (6, "title", "Parse Http Response Now Please"),
        (7, "kebab", "parse-http-response-now-please"),
    ] {
        let args = json!({"text": "parseHTTPResponse now_please", "style": style});
        assert_result(
            &mut wharf,
            id,
            "js-strings_convert-case",
            args,
            text,
            json!(text),
        );
    }
    // Not a case of the enum.
    assert_tool_error(
        &mut wharf,
        8,
        "js-strings_convert-case",
        json!({"text": "x", "style": "shouting"}),
        None,
    );
}
