//! Arithmetic tools with structured output: a Wharf example plugin.
//!
//! It shows [`Tool::structured`]: each tool returns a typed value whose JSON Schema
//! becomes the tool's output schema, and the SDK sends it as structured content plus a
//! JSON text rendering. Failures the model can fix (dividing by zero, a malformed
//! expression) are is-error results with a clear message, not hard errors.

mod expr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use wharf_sdk::{Tool, ToolError, ToolOutput, Toolbox};

/// Two operands.
#[derive(Deserialize, JsonSchema)]
struct Operands {
    /// The first operand.
    a: f64,
    /// The second operand.
    b: f64,
}

/// The result of an arithmetic operation.
#[derive(Serialize, JsonSchema)]
struct Outcome {
    /// The result.
    result: f64,
}

/// Arguments of `evaluate`.
#[derive(Deserialize, JsonSchema)]
struct ExpressionArgs {
    /// An arithmetic expression: numbers, `+ - * / ^`, unary minus and parentheses,
    /// for example `-(1.5 + 2) * 3 ^ 2`.
    expression: String,
}

/// The value of an expression.
#[derive(Serialize, JsonSchema)]
struct Evaluation {
    /// The expression, as given.
    expression: String,
    /// Its value.
    value: f64,
}

/// `a op b`, or an is-error result when the answer is not a finite number.
fn arithmetic(a: f64, b: f64, op: fn(f64, f64) -> f64) -> Result<Outcome, ToolError> {
    let result = op(a, b);
    if !result.is_finite() {
        return Err(ToolOutput::error("the result is too large to represent").into());
    }
    Ok(Outcome { result })
}

fn divide(args: Operands) -> Result<Outcome, ToolError> {
    if args.b == 0.0 {
        return Err(ToolOutput::error("cannot divide by zero: `b` must not be 0").into());
    }
    arithmetic(args.a, args.b, |a, b| a / b)
}

fn evaluate(args: ExpressionArgs) -> Result<Evaluation, ToolError> {
    match expr::evaluate(&args.expression) {
        Ok(value) => Ok(Evaluation {
            expression: args.expression,
            value,
        }),
        Err(error) => {
            Err(ToolOutput::error(format!("cannot evaluate `{}`: {error}", args.expression)).into())
        }
    }
}

/// A pure arithmetic tool: no side effects, same answer every time.
fn pure(tool: Tool) -> Tool {
    tool.read_only().idempotent().open_world(false)
}

fn toolbox() -> Toolbox {
    Toolbox::new()
        .with(pure(
            Tool::structured("add", |x: Operands| arithmetic(x.a, x.b, |a, b| a + b))
                .title("Add")
                .description("Adds b to a."),
        ))
        .with(pure(
            Tool::structured("subtract", |x: Operands| arithmetic(x.a, x.b, |a, b| a - b))
                .title("Subtract")
                .description("Subtracts b from a."),
        ))
        .with(pure(
            Tool::structured("multiply", |x: Operands| arithmetic(x.a, x.b, |a, b| a * b))
                .title("Multiply")
                .description("Multiplies a by b."),
        ))
        .with(pure(
            Tool::structured("divide", divide)
                .title("Divide")
                .description("Divides a by b; b must not be 0."),
        ))
        .with(pure(
            Tool::structured("evaluate", evaluate)
                .title("Evaluate")
                .description(
                    "Evaluates an arithmetic expression with + - * / ^ (power, \
                     right-associative), unary minus and parentheses.",
                ),
        ))
}

wharf_sdk::export_plugin!(toolbox);

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn call(name: &str, arguments: serde_json::Value) -> Result<ToolOutput, ToolError> {
        toolbox().call(name, &arguments.to_string())
    }

    #[test]
    fn operations() {
        for (name, expected) in [
            ("add", 8.0),
            ("subtract", 4.0),
            ("multiply", 12.0),
            ("divide", 3.0),
        ] {
            let output = call(name, json!({"a": 6, "b": 2})).unwrap();
            assert_eq!(
                output.structured_content(),
                Some(&json!({"result": expected})),
                "{name}"
            );
            assert!(!output.is_error());
        }
    }

    #[test]
    fn division_by_zero_is_an_error_result() {
        assert_eq!(
            call("divide", json!({"a": 1, "b": 0})),
            Err(ToolOutput::error("cannot divide by zero: `b` must not be 0").into())
        );
    }

    #[test]
    fn overflow_is_an_error_result() {
        assert_eq!(
            call("multiply", json!({"a": 1e200, "b": 1e200})),
            Err(ToolOutput::error("the result is too large to represent").into())
        );
    }

    #[test]
    fn evaluates_expressions() {
        let output = call("evaluate", json!({"expression": "-(1.5 + 2) * 2 ^ 2"})).unwrap();
        assert_eq!(
            output.structured_content(),
            Some(&json!({"expression": "-(1.5 + 2) * 2 ^ 2", "value": -14.0}))
        );
        assert_eq!(
            call("evaluate", json!({"expression": "1 + * 2"})),
            Err(ToolOutput::error(
                "cannot evaluate `1 + * 2`: expected a number or `(`, found `*` at column 5"
            )
            .into())
        );
    }

    #[test]
    fn schemas() {
        let toolbox = toolbox();
        let add = toolbox.get("add").unwrap();
        assert_eq!(add.input_schema()["required"], json!(["a", "b"]));
        let output = add.output_schema().unwrap();
        assert_eq!(output["type"], "object");
        assert_eq!(output["properties"]["result"]["type"], "number");
        let evaluate = toolbox.get("evaluate").unwrap().output_schema().unwrap();
        assert_eq!(evaluate["required"], json!(["expression", "value"]));
    }

    #[test]
    fn missing_operand_is_invalid_arguments() {
        assert_eq!(
            call("add", json!({"a": 1})),
            Err(ToolError::invalid_arguments(
                "missing field `b` at line 1 column 7"
            ))
        );
    }
}
