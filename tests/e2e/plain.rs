//! Plain components (no Wharf SDK, no `wharf:plugin`): each exported function is
//! a tool, with schemas derived from its WIT types and descriptions from the
//! embedded WIT docs. `shapes` covers every WIT shape; `units` is the example.

use std::process::Command;

use serde_json::{Value, json};

use crate::harness::*;

const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

fn tools(wharf: &mut Wharf) -> Vec<Value> {
    let response = wharf.modern(1, "tools/list", json!({}));
    result_of(&response)["tools"].as_array().unwrap().clone()
}

fn tool<'a>(tools: &'a [Value], name: &str) -> &'a Value {
    tools
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}

#[test]
fn every_usable_function_is_listed_and_resource_functions_are_not() {
    let mut wharf = Wharf::start(&["shapes"], &[]);
    let tools = tools(&mut wharf);
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "shapes_greet",
            "shapes_kinds.area",
            "shapes_kinds.color-name",
            "shapes_kinds.divide",
            "shapes_kinds.echo-shape",
            "shapes_kinds.enumerate",
            "shapes_kinds.floats",
            "shapes_kinds.maybe-double",
            "shapes_kinds.next-char",
            "shapes_kinds.sum",
            "shapes_kinds.toggle-exec",
            "shapes_kinds.translate",
            "shapes_kinds.unwrap-or",
            "shapes_kinds.widths",
            "shapes_ping",
            "shapes_touch",
        ]
    );
    let log = wharf.stderr();
    for skipped in [
        "[constructor]counter",
        "[method]counter.inc",
        "make-counter",
    ] {
        assert!(
            log.contains(&format!("function=wharf-test:shapes/kinds@0.1.0#{skipped}")),
            "{skipped} not reported in:\n{log}"
        );
    }
    assert!(
        log.contains(
            "function is not offered as a tool: its result uses a resource type \
             (own/borrow handles cannot be passed as JSON)"
        ),
        "{log}"
    );
}

#[test]
fn schemas_and_descriptions_come_from_the_wit() {
    let mut wharf = Wharf::start(&["shapes"], &[]);
    let tools = tools(&mut wharf);
    let point = json!({
        "type": "object",
        "description": "A point on the plane.",
        "properties": {
            "x": {"type": "integer", "minimum": i32::MIN, "maximum": i32::MAX, "description": "Horizontal position."},
            "y": {"type": "integer", "minimum": i32::MIN, "maximum": i32::MAX, "description": "Vertical position."},
            "label": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "An optional name."}
        },
        "required": ["x", "y"],
        "additionalProperties": false
    });
    let translate = tool(&tools, "shapes_kinds.translate");
    assert_eq!(translate["description"], "Moves a point by (dx, dy).");
    assert_eq!(
        translate["inputSchema"],
        json!({
            "$schema": DIALECT,
            "type": "object",
            "properties": {
                "p": point,
                "dx": {"type": "integer", "minimum": i32::MIN, "maximum": i32::MAX},
                "dy": {"type": "integer", "minimum": i32::MIN, "maximum": i32::MAX}
            },
            "required": ["p", "dx", "dy"],
            "additionalProperties": false
        })
    );
    assert_eq!(
        translate["outputSchema"],
        json!({
            "$schema": DIALECT,
            "type": "object",
            "properties": {"result": point},
            "required": ["result"],
            "additionalProperties": false
        })
    );

    let toggle = tool(&tools, "shapes_kinds.toggle-exec");
    assert_eq!(
        toggle["inputSchema"]["properties"]["p"],
        json!({
            "type": "array",
            "description": "File permissions.",
            "items": {"type": "string", "enum": ["read", "write", "exec"]},
            "uniqueItems": true
        })
    );
    let widths = tool(&tools, "shapes_kinds.widths");
    assert_eq!(
        widths["outputSchema"]["properties"]["result"]["prefixItems"][6],
        json!({"type": "integer", "minimum": 0, "maximum": u64::MAX})
    );
    let divide = tool(&tools, "shapes_kinds.divide");
    assert_eq!(
        divide["outputSchema"]["properties"]["result"],
        json!({"type": "integer", "minimum": i32::MIN, "maximum": i32::MAX}),
        "a result<T, E> is described by T"
    );
    let next = tool(&tools, "shapes_kinds.next-char");
    assert_eq!(
        next["inputSchema"]["properties"]["c"],
        json!({"type": "string", "minLength": 1, "maxLength": 1})
    );
    let area = tool(&tools, "shapes_kinds.area");
    assert_eq!(
        area["inputSchema"]["properties"]["s"]["oneOf"][3],
        json!({"type": "string", "enum": ["empty"]})
    );
    assert_eq!(
        area["inputSchema"]["properties"]["s"]["oneOf"][0]["description"],
        "A circle with this radius."
    );
    // No doc comment: the WIT signature is the description.
    let ping = tool(&tools, "shapes_ping");
    assert_eq!(ping["description"], "ping() -> string");
    assert_eq!(
        ping["inputSchema"],
        json!({"$schema": DIALECT, "type": "object", "properties": {}, "additionalProperties": false})
    );
    let touch = tool(&tools, "shapes_touch");
    assert_eq!(touch["description"], "Does nothing, successfully.");
    assert!(touch.get("outputSchema").is_none(), "{touch}");
    assert_eq!(
        tool(&tools, "shapes_greet")["description"],
        "Greets someone by name."
    );
}

/// Calls `tool` and returns (text, structuredContent).
fn ok_call(wharf: &mut Wharf, id: i64, tool: &str, arguments: Value) -> (String, Value) {
    let result = call(wharf, id, tool, arguments);
    assert_eq!(result["isError"], false, "{result}");
    (
        first_text(&result).to_string(),
        result["structuredContent"].clone(),
    )
}

#[test]
fn calls_of_every_shape() {
    let mut wharf = Wharf::start(&["shapes"], &[]);
    let w = &mut wharf;
    assert_eq!(
        ok_call(w, 2, "shapes_greet", json!({"name": "Ada"})),
        ("Hello, Ada!".into(), json!({"result": "Hello, Ada!"}))
    );
    assert_eq!(
        ok_call(w, 3, "shapes_ping", json!({})),
        ("pong".into(), json!({"result": "pong"}))
    );
    let touched = call(w, 4, "shapes_touch", json!({"name": "x"}));
    assert_eq!(first_text(&touched), "ok");
    assert!(touched.get("structuredContent").is_none(), "{touched}");
    assert_eq!(
        ok_call(
            w,
            5,
            "shapes_kinds.translate",
            json!({"p": {"x": 1, "y": 2}, "dx": 3, "dy": -4})
        ),
        (
            r#"{"label":null,"x":4,"y":-2}"#.into(),
            json!({"result": {"x": 4, "y": -2, "label": null}})
        )
    );
    assert_eq!(
        ok_call(
            w,
            6,
            "shapes_kinds.translate",
            json!({"p": {"x": 0, "y": 0, "label": "o"}, "dx": 1, "dy": 1})
        )
        .1,
        json!({"result": {"x": 1, "y": 1, "label": "o"}})
    );
    assert_eq!(
        ok_call(
            w,
            7,
            "shapes_kinds.area",
            json!({"s": {"rect": [2.0, 3.5]}})
        )
        .1,
        json!({"result": 7.0})
    );
    assert_eq!(
        ok_call(w, 8, "shapes_kinds.area", json!({"s": "empty"})).1,
        json!({"result": 0.0})
    );
    assert_eq!(
        ok_call(
            w,
            9,
            "shapes_kinds.echo-shape",
            json!({"s": {"empty": null}})
        )
        .1,
        json!({"result": {"empty": null}})
    );
    assert_eq!(
        ok_call(
            w,
            10,
            "shapes_kinds.echo-shape",
            json!({"s": {"circle": 1.5}})
        )
        .1,
        json!({"result": {"circle": 1.5}})
    );
    assert_eq!(
        ok_call(w, 11, "shapes_kinds.color-name", json!({"c": "green"})),
        ("green".into(), json!({"result": "green"}))
    );
    assert_eq!(
        ok_call(
            w,
            12,
            "shapes_kinds.toggle-exec",
            json!({"p": ["write", "read"]})
        )
        .1,
        json!({"result": ["read", "write", "exec"]})
    );
    let extremes = json!({"a": 255, "b": -128, "c": 65535, "d": -32768, "e": 4294967295u32,
        "f": i32::MIN, "g": u64::MAX, "h": i64::MIN});
    assert_eq!(
        ok_call(w, 13, "shapes_kinds.widths", extremes).1,
        json!({"result": [255, -128, 65535, -32768, 4294967295u32, i32::MIN, u64::MAX, i64::MIN]})
    );
    assert_eq!(
        ok_call(w, 14, "shapes_kinds.floats", json!({"a": 0.5, "b": -2.25})).1,
        json!({"result": [0.5, -2.25]})
    );
    assert_eq!(
        ok_call(w, 15, "shapes_kinds.maybe-double", json!({"x": 21})).1,
        json!({"result": 42})
    );
    assert_eq!(
        ok_call(w, 16, "shapes_kinds.maybe-double", json!({})),
        ("null".into(), json!({"result": null}))
    );
    assert_eq!(
        ok_call(w, 17, "shapes_kinds.maybe-double", json!({"x": null})).1,
        json!({"result": null})
    );
    assert_eq!(
        ok_call(w, 18, "shapes_kinds.divide", json!({"a": 7, "b": 2})),
        ("3".into(), json!({"result": 3}))
    );
    assert_eq!(
        ok_call(
            w,
            19,
            "shapes_kinds.unwrap-or",
            json!({"r": {"ok": 5}, "fallback": 9})
        )
        .1,
        json!({"result": 5})
    );
    assert_eq!(
        ok_call(
            w,
            20,
            "shapes_kinds.unwrap-or",
            json!({"r": {"err": "no"}, "fallback": 9})
        )
        .1,
        json!({"result": 9})
    );
    assert_eq!(
        ok_call(w, 21, "shapes_kinds.next-char", json!({"c": "a"})).1,
        json!({"result": "b"})
    );
    assert_eq!(
        ok_call(w, 22, "shapes_kinds.next-char", json!({"c": "é"})).1,
        json!({"result": "ê"})
    );
    assert_eq!(
        ok_call(w, 23, "shapes_kinds.sum", json!({"xs": [1, -2, 40]})).1,
        json!({"result": 39})
    );
    assert_eq!(
        ok_call(w, 24, "shapes_kinds.enumerate", json!({"xs": ["a", "b"]})),
        (
            r#"[[0,"a"],[1,"b"]]"#.into(),
            json!({"result": [[0, "a"], [1, "b"]]})
        )
    );
}

#[test]
fn plain_calls_get_the_same_limits() {
    // Enough fuel to start an instance, not to add up 20000 numbers.
    let mut wharf = Wharf::start(&["shapes"], &["--fuel", "20000"]);
    let result = call(
        &mut wharf,
        2,
        "shapes_kinds.sum",
        json!({"xs": vec![1; 20_000]}),
    );
    assert_eq!(
        first_text(&result),
        "Tool `shapes_kinds.sum` failed: the plugin used up its fuel limit of 20000 units and was stopped"
    );
    assert_eq!(result["isError"], true);
    assert_eq!(
        ok_call(&mut wharf, 3, "shapes_kinds.sum", json!({"xs": [1, 2]})).1,
        json!({"result": 3})
    );

    // Too little to start at all: refused when loading, like any plugin.
    let shapes = plugin_file("shapes");
    let out = wharf_cmd(&["call", shapes.to_str().unwrap(), "ping", "--fuel", "1"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains(
            "starting an instance failed: the plugin used up its fuel limit of 1 units and was stopped"
        ),
        "{stderr}"
    );
}

#[test]
fn result_err_is_a_tool_error() {
    let mut wharf = Wharf::start(&["shapes"], &[]);
    let result = call(
        &mut wharf,
        2,
        "shapes_kinds.divide",
        json!({"a": 1, "b": 0}),
    );
    assert_eq!(
        result,
        json!({
            "content": [{"type": "text", "text": "cannot divide 1 by 0"}],
            "isError": true,
            "resultType": "complete"
        })
    );
}

#[test]
fn invalid_arguments_are_refused_with_exact_errors() {
    let mut wharf = Wharf::start(&["shapes"], &[]);
    let cases = [
        (
            "shapes_kinds.translate",
            json!({"p": {"x": "1", "y": 2}, "dx": 1, "dy": 1}),
            r#"at /p/x: "1" is not of type "integer""#,
        ),
        (
            "shapes_kinds.translate",
            json!({"p": {"x": 1}, "dx": 1, "dy": 1}),
            r#"at /p: "y" is a required property"#,
        ),
        (
            "shapes_kinds.translate",
            json!({"p": {"x": 1, "y": 2, "z": 3}, "dx": 1, "dy": 1}),
            "at /p: Additional properties are not allowed ('z' was unexpected)",
        ),
        (
            "shapes_kinds.divide",
            json!({"a": 1, "b": 2, "c": 3}),
            "Additional properties are not allowed ('c' was unexpected)",
        ),
        (
            "shapes_kinds.divide",
            json!({"a": 1}),
            r#""b" is a required property"#,
        ),
        (
            "shapes_kinds.widths",
            json!({"a": 256, "b": 0, "c": 0, "d": 0, "e": 0, "f": 0, "g": 0, "h": 0}),
            "at /a: 256 is greater than the maximum of 255",
        ),
        (
            "shapes_kinds.widths",
            json!({"a": 0, "b": 0, "c": 0, "d": 0, "e": -1, "f": 0, "g": 0, "h": 0}),
            "at /e: -1 is less than the minimum of 0",
        ),
        (
            "shapes_kinds.color-name",
            json!({"c": "purple"}),
            r#"at /c: "purple" is not one of "red", "green" or "blue""#,
        ),
        (
            "shapes_kinds.toggle-exec",
            json!({"p": ["read", "read"]}),
            r#"at /p: ["read","read"] has non-unique elements"#,
        ),
        (
            "shapes_kinds.next-char",
            json!({"c": "ab"}),
            r#"at /c: "ab" is longer than 1 character"#,
        ),
        (
            "shapes_kinds.area",
            json!({"s": {"circle": "x"}}),
            r#"at /s: {"circle":"x"} is not valid under any of the schemas listed in the 'oneOf' keyword (closest alternative: at /s/circle: "x" is not of type "number")"#,
        ),
        (
            "shapes_kinds.area",
            json!({"s": "circle"}),
            r#"at /s: "circle" is not valid under any of the schemas listed in the 'oneOf' keyword"#,
        ),
    ];
    for (i, (tool, arguments, expected)) in cases.into_iter().enumerate() {
        let result = call(&mut wharf, 10 + i as i64, tool, arguments);
        assert_eq!(result["isError"], true, "{result}");
        assert_eq!(
            first_text(&result),
            format!("Invalid arguments for tool `{tool}`: {expected}")
        );
    }
}

#[test]
fn the_units_example_converts() {
    let mut wharf = Wharf::start(&["units"], &[]);
    let tools = tools(&mut wharf);
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["units_convert", "units_units"]);
    assert!(
        tool(&tools, "units_convert")["description"]
            .as_str()
            .unwrap()
            .starts_with("Converts a quantity to another unit of the same dimension")
    );
    let (_, converted) = ok_call(
        &mut wharf,
        2,
        "units_convert",
        json!({"quantity": {"value": 3, "unit": "mile"}, "target": "kilometer"}),
    );
    assert_eq!(
        converted,
        json!({"result": {"value": 4.828032, "unit": "kilometer"}})
    );
    let (_, celsius) = ok_call(
        &mut wharf,
        3,
        "units_convert",
        json!({"quantity": {"value": 212, "unit": "fahrenheit"}, "target": "celsius"}),
    );
    assert_eq!(
        celsius,
        json!({"result": {"value": 100.0, "unit": "celsius"}})
    );
    let refused = call(
        &mut wharf,
        4,
        "units_convert",
        json!({"quantity": {"value": 1, "unit": "gram"}, "target": "inch"}),
    );
    assert_eq!(refused["isError"], true);
    assert_eq!(
        first_text(&refused),
        "cannot convert gram (a mass) to inch (a length)"
    );
    let (_, masses) = ok_call(&mut wharf, 5, "units_units", json!({"dimension": "mass"}));
    assert_eq!(
        masses,
        json!({"result": ["kilogram", "gram", "pound", "ounce"]})
    );
}

fn wharf_cmd(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_wharf"))
        .args(args)
        .env("WHARF_CACHE_DIR", cache_dir())
        .env("WHARF_LOG", "error")
        .output()
        .expect("run wharf")
}

#[test]
fn inspect_describes_a_component() {
    let shapes = plugin_file("shapes");
    let out = wharf_cmd(&["inspect", "--json", shapes.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["plugin"], "shapes");
    assert_eq!(report["kind"], "plain component");
    assert_eq!(report["tools"].as_array().unwrap().len(), 16);
    assert_eq!(report["tools"][0]["name"], "shapes_greet");
    assert_eq!(report["tools"][0]["description"], "Greets someone by name.");
    assert_eq!(
        report["skipped"],
        json!([
            {"function": "wharf-test:shapes/kinds@0.1.0#[constructor]counter",
             "reason": "it belongs to a resource (constructors, methods and static functions of resources are not tools)"},
            {"function": "wharf-test:shapes/kinds@0.1.0#[method]counter.inc",
             "reason": "it belongs to a resource (constructors, methods and static functions of resources are not tools)"},
            {"function": "wharf-test:shapes/kinds@0.1.0#make-counter",
             "reason": "its result uses a resource type (own/borrow handles cannot be passed as JSON)"}
        ])
    );
    // Rust's wasm32-wasip2 standard library imports the environment.
    assert_eq!(
        report["permissions"],
        json!([{"capability": "env", "granted_by": "[env]", "imports": ["wasi:cli/environment@0.2.6"]}])
    );
    assert_eq!(report["manifest"], Value::Null);

    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("grants.toml");
    std::fs::write(
        &manifest,
        "[http]\nallow = [\"api.example.com\"]\n[env]\nset = { LANG = \"C\" }\n",
    )
    .unwrap();
    let out = wharf_cmd(&[
        "inspect",
        shapes.to_str().unwrap(),
        "--manifest",
        manifest.to_str().unwrap(),
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("plugin: shapes\nkind: plain component\n\ntools (16):\n"),
        "{text}"
    );
    assert!(
        text.contains("\n  http: api.example.com\n  env: LANG\n"),
        "{text}"
    );
    assert!(
        text.contains("skipped functions (3):\n  wharf-test:shapes/kinds@0.1.0#[constructor]counter: it belongs to a resource"),
        "{text}"
    );

    let echo = plugin_file("echo");
    let out = wharf_cmd(&["inspect", "--json", echo.to_str().unwrap()]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["kind"], "wharf plugin");
    assert_eq!(report["tools"][0]["name"], "echo_echo");
}

#[test]
fn call_runs_one_tool() {
    let shapes = plugin_file("shapes");
    let path = shapes.to_str().unwrap();
    let out = wharf_cmd(&["call", path, "kinds.sum", "--args", r#"{"xs": [1, 2]}"#]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "3\n{\n  \"result\": 3\n}\n"
    );
    // With the plugin prefix too.
    let out = wharf_cmd(&["call", path, "shapes_greet", "--args", r#"{"name": "Bo"}"#]);
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .starts_with("Hello, Bo!\n")
    );

    let out = wharf_cmd(&[
        "call",
        path,
        "kinds.divide",
        "--args",
        r#"{"a": 1, "b": 0}"#,
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "cannot divide 1 by 0\n"
    );
    assert!(out.stdout.is_empty());

    let out = wharf_cmd(&["call", path, "kinds.next-char", "--args", r#"{"c": "ab"}"#]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "Invalid arguments for tool `shapes_kinds.next-char`: at /c: \"ab\" is longer than 1 character\n"
    );

    let out = wharf_cmd(&["call", path, "nope"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("the plugin `shapes` has no tool `nope`; it has: shapes_greet, "),
    );
}

#[test]
fn a_component_without_usable_functions_does_not_load() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.wasm");
    // `(component)`: the component header and nothing else.
    std::fs::write(&empty, b"\0asm\x0d\x00\x01\x00").unwrap();
    let out = wharf_cmd(&["inspect", empty.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains(&format!(
            "{}: it exports neither `wharf:plugin/tools` nor any function usable as a tool",
            empty.display()
        )),
        "{stderr}"
    );
}

/// The embedded docs must not break tools that decode components (wasm-tools,
/// jco): wit-component's decoder applies `package-docs` strictly.
#[test]
fn embedded_docs_keep_components_decodable() {
    use wit_parser::decoding::{DecodedWasm, decode};
    use wit_parser::{WorldItem, WorldKey};

    for (plugin, function, docs) in [
        ("shapes", "greet", "Greets someone by name."),
        (
            "units",
            "units",
            "The units Wharf's converter knows, optionally only those of one dimension.",
        ),
    ] {
        let bytes = std::fs::read(plugin_file(plugin)).unwrap();
        let decoded = decode(&bytes).unwrap_or_else(|e| panic!("{plugin}: {e:#}"));
        let DecodedWasm::Component(resolve, world) = decoded else {
            panic!("{plugin} is not a component");
        };
        let key = WorldKey::Name(function.into());
        let Some(WorldItem::Function(f)) = resolve.worlds[world].exports.get(&key) else {
            panic!("{plugin} exports no {function}");
        };
        assert_eq!(f.docs.contents.as_deref(), Some(docs), "{plugin}");
    }
}
