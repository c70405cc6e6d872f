//! A plain component's arguments at their edges: numbers one past each type's
//! range (refused, never clamped or made infinite), results JSON cannot carry,
//! and lists whose conversion would cost the host more than the plugin's
//! memory limit (refused with -32602, over stdio and HTTP alike).

use serde_json::{Value, json};

use crate::harness::*;
use crate::http_client::post;

/// The `widths` arguments with `h` (an s64) as written.
fn widths_line(id: i64, h: &str) -> Vec<u8> {
    let params = modern(json!({"name": "shapes_kinds.widths", "arguments": {
        "a": 0, "b": 0, "c": 0, "d": 0, "e": 0, "f": 0, "g": 0, "h": "H"}}));
    let line = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    line.to_string().replace(r#""H""#, h).into_bytes()
}

#[test]
fn numbers_out_of_range_are_refused_not_changed() {
    let mut wharf = Wharf::start(&["shapes"], &[]);
    wharf.send_raw(&widths_line(2, "-9223372036854775809"));
    let result = result_of(&wharf.response(&json!(2))).clone();
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(
        first_text(&result),
        "Tool `shapes_kinds.widths` failed: invalid arguments: at /h: -9.223372036854776e+18 \
         is not an exact s64: beyond ±9007199254740992 (2^53) an integer must be written in \
         plain digits, from -9223372036854775808 to 9223372036854775807"
    );
    // The end of the range itself is taken exactly.
    wharf.send_raw(&widths_line(3, "-9223372036854775808"));
    let result = result_of(&wharf.response(&json!(3))).clone();
    assert_eq!(result["structuredContent"]["result"][7], json!(i64::MIN));

    let result = call(
        &mut wharf,
        4,
        "shapes_kinds.floats",
        json!({"a": 1e308, "b": 0}),
    );
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(
        first_text(&result),
        "Invalid arguments for tool `shapes_kinds.floats`: at /a: 1e+308 is greater than the \
         maximum of 3.4028234663852886e+38"
    );
}

#[test]
fn a_result_json_cannot_carry_fails_the_call_with_a_reason() {
    let mut wharf = Wharf::start(&["shapes"], &[]);
    let result = call(
        &mut wharf,
        2,
        "shapes_kinds.area",
        json!({"s": {"circle": 1e200}}),
    );
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(
        first_text(&result),
        "Tool `shapes_kinds.area` failed: the component returned inf as f64, which JSON \
         cannot carry"
    );
}

/// 200,000 items of an s64 list: about 8 MB of host values, over a 4 MiB
/// memory limit.
fn big_sum() -> Value {
    json!({"name": "shapes_kinds.sum", "arguments": {"xs": vec![1; 200_000]}})
}

const TOO_LARGE: &str = "arguments too large: converted for the plugin they would take more \
                         than 4194304 bytes of host memory (its memory limit); send less";

#[test]
fn arguments_over_the_budget_are_refused_over_stdio() {
    let mut wharf = Wharf::start(&["shapes"], &["--memory-mib", "4"]);
    let response = wharf.modern(2, "tools/call", big_sum());
    assert_eq!(
        error_of(&response),
        &json!({"code": -32602, "message": TOO_LARGE, "data": {"limit": 4194304}})
    );
    // Under the budget the same tool answers.
    let result = call(
        &mut wharf,
        3,
        "shapes_kinds.sum",
        json!({"xs": vec![1; 1000]}),
    );
    assert_eq!(result["structuredContent"], json!({"result": 1000}));
}

#[test]
fn arguments_over_the_budget_are_refused_over_http() {
    let (_wharf, addr) = serve_http(&["shapes"], &["--memory-mib", "4"]);
    let body =
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": modern(big_sum())});
    let headers = [
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "shapes_kinds.sum"),
    ];
    let response = post(addr, &headers, &body);
    assert_eq!(response.status, 200);
    let answer = response.json();
    assert_eq!(
        error_of(&answer),
        &json!({"code": -32602, "message": TOO_LARGE, "data": {"limit": 4194304}})
    );
}

/// A `sum` of `n` ones.
fn sum_of_ones(n: usize) -> Value {
    json!({"name": "shapes_kinds.sum", "arguments": {"xs": vec![1; n]}})
}

const TOO_MANY_VALUES: &str = "Invalid Request: the message holds more than 40 JSON values \
                               (--max-json-values); send bulk data as one string";

/// Defect 5: the values a message holds are counted before it is parsed, so
/// no parse of small numbers can make the host allocate past the limit.
#[test]
fn a_message_with_too_many_values_is_refused_before_it_is_parsed_over_stdio() {
    let mut wharf = Wharf::start(&["shapes"], &["--max-json-values", "40"]);
    // 10 ones, the envelope and `_meta`: under the limit.
    let result = call(
        &mut wharf,
        2,
        "shapes_kinds.sum",
        json!({"xs": vec![1; 10]}),
    );
    assert_eq!(result["structuredContent"], json!({"result": 10}));
    let response = wharf.modern(3, "tools/call", sum_of_ones(40));
    assert_eq!(
        error_of(&response),
        &json!({"code": -32600, "message": TOO_MANY_VALUES})
    );
}

#[test]
fn a_message_with_too_many_values_is_refused_before_it_is_parsed_over_http() {
    let (_wharf, addr) = serve_http(&["shapes"], &["--max-json-values", "40"]);
    let body = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
        "params": modern(sum_of_ones(40))});
    let headers = [
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "shapes_kinds.sum"),
    ];
    let response = post(addr, &headers, &body);
    assert_eq!(response.status, 413);
    assert_eq!(
        response.json(),
        json!({"jsonrpc": "2.0", "id": 8, "error": {"code": -32600, "message": TOO_MANY_VALUES}})
    );
}
