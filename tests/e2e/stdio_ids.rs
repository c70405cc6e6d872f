//! Request ids over stdio: a duplicate id in flight is refused and loses no
//! answer, an unparsable request is answered with its id when it can be read,
//! and `initialize` never changes a connection's era once it started.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::*;

/// The exact answer to a request whose id is already in flight.
fn duplicate(id: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32600, "message": format!(
        "Invalid Request: id {id} is already in use by a request in flight; \
         ids must be unique among requests in flight"
    )}})
}

/// A 2026-07-28 tool call with a raw `id` (written as given: `1.0`, `-0`).
fn call_line(id: &str, tool: &str, arguments: Value) -> String {
    let params = modern(json!({"name": tool, "arguments": arguments}));
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{params}}}"#)
}

fn echo_line(id: &str) -> String {
    call_line(id, "echo_echo", json!({"text": "hi"}))
}

fn spin_line(id: &str) -> String {
    call_line(id, "misbehave_spin", json!({}))
}

/// Every message with this id that arrives within `window`.
fn answers_to(wharf: &mut Wharf, id: &Value, window: Duration) -> Vec<Value> {
    wharf
        .drain(window)
        .into_iter()
        .filter(|m| m.get("id") == Some(id))
        .collect()
}

/// Cancels the calls with these ids and waits until each has stopped.
fn cancel(wharf: &mut Wharf, ids: &[Value]) {
    const STOPPED: &str = "call failed: the call was cancelled";
    let before = wharf.stderr().matches(STOPPED).count();
    for id in ids {
        wharf.notify("notifications/cancelled", json!({"requestId": id}));
    }
    let deadline = Instant::now() + PATIENCE;
    while wharf.stderr().matches(STOPPED).count() < before + ids.len() {
        assert!(
            Instant::now() < deadline,
            "not cancelled: {}",
            wharf.stderr()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_slow_and_a_fast_call_with_one_id_lose_no_answer() {
    let mut wharf = Wharf::start(&["echo", "misbehave"], &["--timeout-ms", "1500"]);
    wharf.send_raw(spin_line("7").as_bytes());
    wharf.send_raw(echo_line("7").as_bytes());
    // The echo is refused at once, while the spinner still runs...
    assert_eq!(wharf.response(&json!(7)), duplicate(json!(7)));
    // ...and the spinner's own answer still comes, once.
    let result = wharf.response(&json!(7));
    assert_eq!(result_of(&result)["isError"], true, "{result}");
    assert!(
        first_text(result_of(&result)).contains("time limit"),
        "{result}"
    );
    assert_eq!(
        answers_to(&mut wharf, &json!(7), Duration::from_millis(300)),
        Vec::<Value>::new()
    );
    // The id is free again once answered.
    wharf.send_raw(echo_line("7").as_bytes());
    assert_eq!(first_text(result_of(&wharf.response(&json!(7)))), "hi");
}

#[test]
fn two_pings_with_one_id_are_each_answered_once() {
    let mut wharf = Wharf::start(&["echo"], &[]);
    wharf.initialize("2025-11-25");
    // In one write, so the second is often read while the first is in flight.
    let ping = r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#;
    wharf.send_raw(format!("{ping}\n{ping}").as_bytes());
    let first = wharf.response(&json!(5));
    let second = wharf.response(&json!(5));
    let pong = json!({"jsonrpc": "2.0", "id": 5, "result": {}});
    for answer in [&first, &second] {
        assert!(
            *answer == pong || *answer == duplicate(json!(5)),
            "{answer}"
        );
    }
    assert!(
        first == pong || second == pong,
        "the first ping is answered"
    );
    assert_eq!(
        answers_to(&mut wharf, &json!(5), Duration::from_millis(300)),
        Vec::<Value>::new()
    );
}

#[test]
fn ids_are_equal_as_rmcp_reads_them() {
    let mut wharf = Wharf::start(&["echo", "misbehave"], &["--timeout-ms", "60000"]);
    // 1, 1.0 and 1e0 are one id; "1" is another.
    wharf.send_raw(spin_line("1").as_bytes());
    wharf.send_raw(echo_line("1.0").as_bytes());
    assert_eq!(wharf.response(&json!(1)), duplicate(json!(1)));
    wharf.send_raw(echo_line("1e0").as_bytes());
    assert_eq!(wharf.response(&json!(1)), duplicate(json!(1)));
    wharf.send_raw(echo_line(r#""1""#).as_bytes());
    assert_eq!(first_text(result_of(&wharf.response(&json!("1")))), "hi");
    // 0 and -0 are one id.
    wharf.send_raw(spin_line("-0").as_bytes());
    wharf.send_raw(echo_line("0").as_bytes());
    assert_eq!(wharf.response(&json!(0)), duplicate(json!(0)));
    // "a" and "\u0061" are one id.
    wharf.send_raw(spin_line(r#""a""#).as_bytes());
    wharf.send_raw(echo_line(r#""\u0061""#).as_bytes());
    assert_eq!(wharf.response(&json!("a")), duplicate(json!("a")));
    // A cancelled request gets no answer, and its id is free again.
    cancel(&mut wharf, &[json!(1), json!(0), json!("a")]);
    still_serving(&mut wharf, 2);
    wharf.send_raw(echo_line("1.0").as_bytes());
    assert_eq!(first_text(result_of(&wharf.response(&json!(1)))), "hi");
    wharf.send_raw(echo_line("-0").as_bytes());
    assert_eq!(first_text(result_of(&wharf.response(&json!(0)))), "hi");
    assert_eq!(
        answers_to(&mut wharf, &json!(1), Duration::from_millis(300)),
        Vec::<Value>::new()
    );
}

#[test]
fn a_thousand_mixed_lines_lose_and_double_nothing() {
    let mut wharf = Wharf::start(&["echo", "misbehave"], &["--timeout-ms", "60000"]);
    // Two calls that run until cancelled: their ids are certainly in flight.
    for id in ["9000", "9001"] {
        wharf.send_raw(spin_line(id).as_bytes());
    }
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":{{"name":"echo_echo","arguments":{{"text":{}"x"{}}}}}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    let mut sent: HashMap<Value, usize> = HashMap::new();
    let mut idless = 0;
    let mut input = Vec::new();
    for n in 0..1000u32 {
        let id = (n % 150) as i64;
        let line = match n % 10 {
            // A spinner's id: refused, every time.
            0 => echo_line(&format!("{}", 9000 + (n / 10) % 2)),
            // The same id twice in a row, the second often still in flight.
            1 | 2 => echo_line(&format!("{}", 10_000 + n / 10)),
            3 => deep.replace("ID", &id.to_string()),
            4 => call_line(&id.to_string(), "echo_echo", json!({"n": 1}))
                .replace(r#""n":1"#, r#""n":1e400"#),
            5 => {
                idless += 1;
                "{\"jsonrpc\":\"2.0\",\"method\":\"tools/list\",\"params\":[".to_string()
            }
            6 => format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{}}}"#,
                modern(json!({}))
            ),
            _ => echo_line(&id.to_string()),
        };
        if n % 10 != 5 {
            let id: Value = match n % 10 {
                0 => json!(9000 + (n / 10) % 2),
                1 | 2 => json!(10_000 + n / 10),
                _ => json!(id),
            };
            *sent.entry(id).or_default() += 1;
        }
        input.extend_from_slice(line.as_bytes());
        input.push(b'\n');
    }
    wharf.send_raw(&input[..input.len() - 1]);
    let expected: usize = sent.values().sum::<usize>() + idless;
    let mut answers: HashMap<Value, Vec<Value>> = HashMap::new();
    let mut idless_answers = Vec::new();
    for _ in 0..expected {
        let answer = wharf.next_matching(|m| m.get("method").is_none());
        match answer.get("id") {
            Some(id) => answers.entry(id.clone()).or_default().push(answer),
            None => idless_answers.push(answer),
        }
    }
    cancel(&mut wharf, &[json!(9000), json!(9001)]);
    let late = wharf.drain(Duration::from_millis(500));
    assert!(
        late.iter().all(|m| m.get("method").is_some()),
        "answers beyond one per request: {late:?}"
    );
    assert_eq!(idless_answers.len(), idless);
    for answer in &idless_answers {
        assert_eq!(answer["error"]["code"], -32700, "{answer}");
    }
    for (id, count) in &sent {
        let got = answers.get(id).map_or(0, Vec::len);
        assert_eq!(got, *count, "answers to id {id}: {:?}", answers.get(id));
    }
    assert_eq!(answers.len(), sent.len(), "answers to ids never sent");
    // Every line with a spinner's id was refused.
    for id in [json!(9000), json!(9001)] {
        for answer in &answers[&id] {
            assert_eq!(*answer, duplicate(id.clone()));
        }
    }
    // The pairs: each answer is the call's or the refusal, and one of each
    // pair is the call's.
    for n in 0..100 {
        let id = json!(10_000 + n);
        let pair = &answers[&id];
        assert!(
            pair.iter()
                .all(|a| a.get("result").is_some() || *a == duplicate(id.clone()))
        );
        assert!(pair.iter().any(|a| a.get("result").is_some()), "{pair:?}");
    }
    let parse_errors = answers
        .values()
        .flatten()
        .filter(|a| a["error"]["code"] == -32700)
        .count();
    assert_eq!(
        parse_errors, 200,
        "the deep and 1e400 lines, with their ids"
    );
    still_serving(&mut wharf, 20_000);
}

#[test]
fn an_unparsable_request_is_answered_with_its_id() {
    let mut wharf = Wharf::start(&["echo"], &["--max-message-bytes", "100000"]);
    let nested = |levels: usize| {
        format!(
            r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"echo_echo","arguments":{{"text":{}"x"{}}},"_meta":{}}}}}"#,
            "[".repeat(levels),
            "]".repeat(levels),
            meta()
        )
    };
    // 124 levels inside the envelope's 3 parse (and fail the tool's schema);
    // serde_json stops at the 128th level, the 125th array, at column 95 + 125.
    wharf.send_raw(nested(124).as_bytes());
    let response = wharf.response(&json!(5));
    assert_eq!(result_of(&response)["isError"], true, "parsed: {response}");
    wharf.send_raw(nested(125).as_bytes());
    assert_eq!(
        wharf.response(&json!(5)),
        json!({"jsonrpc": "2.0", "id": 5, "error": {"code": -32700,
            "message": "Parse error: recursion limit exceeded at line 1 column 220"}})
    );
    wharf.send_raw(
        br#"{"jsonrpc":"2.0","id":"n","method":"tools/call","params":{"name":"echo_echo","arguments":{"text":1e400}}}"#,
    );
    assert_eq!(
        wharf.response(&json!("n")),
        json!({"jsonrpc": "2.0", "id": "n", "error": {"code": -32700,
            "message": "Parse error: number out of range at line 1 column 102"}})
    );
    // Cut short after the id: the id was read.
    wharf.send_raw(br#"{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"#);
    let response = wharf.response(&json!(6));
    assert_eq!(error_of(&response)["code"], -32700);
    // Too long: the id is read from the start of the line.
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"echo_echo","arguments":{{"text":"{}"}}}}}}"#,
        "a".repeat(200_000)
    );
    wharf.send_raw(long.as_bytes());
    assert_eq!(
        wharf.response(&json!(7)),
        json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32600,
            "message": "Invalid Request: message longer than 100000 bytes"}})
    );
    // No id to read: the answer has none (MCP: omitted, not null).
    for line in [
        &br#"{"jsonrpc":"2.0","method":"tools/list","params":{"n":1e400}}"#[..],
        br#"{"jsonrpc":"2.0","id":8,"result":{"n":1e400}}"#,
        br#"{"jsonrpc":"2.0","id":{"a":1e400},"method":"tools/list"}"#,
        b"not json at all",
    ] {
        wharf.send_raw(line);
        let error = wharf.next_matching(|m| m.get("error").is_some());
        assert_eq!(error.get("id"), None, "{error}");
        assert_eq!(error["error"]["code"], -32700, "{error}");
    }
    still_serving(&mut wharf, 9);
}

fn initialize_line(id: Value, version: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": "wharf-e2e", "version": "0"}}})
}

#[test]
fn a_second_initialize_is_refused_and_the_era_stays() {
    let mut wharf = Wharf::start(&["echo"], &[]);
    assert_eq!(
        wharf.initialize("2025-11-25")["protocolVersion"],
        "2025-11-25"
    );
    let refused = |id: Value| {
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32600, "message":
            "Invalid Request: this connection is already initialized; \
             initialize may be sent only once per connection"}})
    };
    for (id, version) in [(2, "2025-11-25"), (3, "2026-07-28"), (4, "2025-06-18")] {
        wharf.send(initialize_line(json!(id), version));
        assert_eq!(wharf.response(&json!(id)), refused(json!(id)));
        // Still the 2025-11-25 session: ping is answered.
        let pong = wharf.request(json!(id * 10), "ping", json!({}));
        assert_eq!(pong, json!({"jsonrpc": "2.0", "id": id * 10, "result": {}}));
    }
    let tools = wharf.request(json!(5), "tools/list", json!({}));
    assert!(result_of(&tools)["tools"].is_array(), "{tools}");
}

#[test]
fn initialize_after_stateless_requests_is_refused() {
    let mut wharf = Wharf::start(&["echo"], &[]);
    still_serving(&mut wharf, 1);
    wharf.send(initialize_line(json!(2), "2025-11-25"));
    assert_eq!(
        wharf.response(&json!(2)),
        json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32022,
            "message": "Unsupported protocol version: this connection serves protocol 2026-07-28 \
                        (requests carry their version in _meta), which has no initialize",
            "data": {"supported": ["2026-07-28"], "requested": "2025-11-25"}}})
    );
    // Still stateless: a request without _meta is refused, one with it served.
    let bare = wharf.request(json!(3), "tools/list", json!({}));
    assert_eq!(error_of(&bare)["code"], -32602, "{bare}");
    let ping = wharf.request(json!(4), "ping", json!({}));
    assert_eq!(error_of(&ping)["code"], -32602, "{ping}");
    still_serving(&mut wharf, 5);
    // An initialize that claims 2026-07-28 in its _meta is a removed method.
    let mut claimed = initialize_line(json!(6), "2026-07-28");
    claimed["params"]["_meta"] = meta();
    wharf.send(claimed);
    assert_eq!(
        wharf.response(&json!(6)),
        json!({"jsonrpc": "2.0", "id": 6, "error": {"code": -32601,
            "message": "Method not found: initialize does not exist in protocol 2026-07-28"}})
    );
}

#[test]
fn pipelined_initializes_are_answered_in_order() {
    let mut wharf = Wharf::start(&["echo"], &[]);
    let mut both = initialize_line(json!(1), "2025-11-25").to_string();
    both.push('\n');
    both.push_str(&initialize_line(json!(2), "2025-06-18").to_string());
    wharf.send_raw(both.as_bytes());
    let first = wharf.response(&json!(1));
    assert_eq!(result_of(&first)["protocolVersion"], "2025-11-25");
    assert_eq!(error_of(&wharf.response(&json!(2)))["code"], -32600);
    wharf.notify("notifications/initialized", json!({}));
    let pong = wharf.request(json!(3), "ping", json!({}));
    assert_eq!(pong, json!({"jsonrpc": "2.0", "id": 3, "result": {}}));
}
