//! The stdio transport's line framing, screening and JSON-RPC classification,
//! on a stream of arbitrary lines.
//! Invariants: no panic; at most one answer or hand-on per line; every answer
//! is one JSON-RPC error line with a screening code; a line the fast path
//! takes parses the same through rmcp's own parser.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wharf::fuzzing::{ClientJsonRpcMessage, screen_stdio, well_formed_request};

/// A short line cap, so the too-long path is reached too.
const MAX_LINE: usize = 4096;

fuzz_target!(|data: &[u8]| {
    let outcome = screen_stdio(data, MAX_LINE);
    let lines = data
        .split(|&b| b == b'\n')
        .filter(|l| l.len() > MAX_LINE || !l.iter().all(u8::is_ascii_whitespace))
        .count();
    let written = String::from_utf8(outcome.written).expect("answers are UTF-8");
    let answers: Vec<&str> = written.lines().collect();
    assert!(
        answers.len() + outcome.handed.len() <= lines,
        "{} answers and {} messages for {lines} lines",
        answers.len(),
        outcome.handed.len()
    );
    for answer in answers {
        let value: serde_json::Value = serde_json::from_str(answer).expect("an answer is JSON");
        assert_eq!(value["jsonrpc"], "2.0", "{answer}");
        let code = value["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("not an error: {answer}"));
        assert!([-32700, -32600, -32601, -32602].contains(&code), "{answer}");
    }
    for line in data.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if let Some(fast) = well_formed_request(line) {
            let full: ClientJsonRpcMessage = serde_json::from_slice(line)
                .unwrap_or_else(|e| panic!("the fast path took a line rmcp refuses ({e})"));
            assert_eq!(
                serde_json::to_value(&fast).unwrap(),
                serde_json::to_value(&full).unwrap(),
                "the fast path and rmcp disagree"
            );
        }
    }
});
