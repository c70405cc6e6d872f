//! Checking a tool's arguments against its input schema, before the guest runs.
//!
//! Kept apart from the listing: this is the one place where JSON Schema
//! validation happens and where its error messages are worded, for a model
//! that reads them to fix its call.

use jsonschema::ValidationError;
use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

/// A tool's input schema, compiled once when the set is built.
pub(super) struct ArgumentSchema(jsonschema::Validator);

/// Builds the JSON Schema meta-validator (draft 2020-12, MCP's default) on a
/// thread of its own. Compiling a tool's schema first checks it against the
/// meta-schema, whose validator is built once per process, on first use:
/// about a millisecond, a sixth of a small server's start-up. Started early,
/// it is built while the engines are made and the folder is read; a schema
/// compiled before it is done waits for it, never builds it twice.
pub fn prepare_schema_checks() {
    let started = std::thread::Builder::new()
        .name("wharf-schemas".into())
        .spawn(|| jsonschema::meta::is_valid(&serde_json::json!({ "type": "object" })));
    if let Err(error) = started {
        tracing::debug!("meta-validator built on first use instead: {error}");
    }
}

impl ArgumentSchema {
    /// Compiles `schema`; fails if it is not a valid JSON Schema.
    pub(super) fn compile(schema: &Value) -> Result<Self, ValidationError<'static>> {
        jsonschema::validator_for(schema).map(Self)
    }

    /// Checks `arguments`; the error lists every violation with the JSON
    /// pointer of the offending value.
    pub(super) fn check(&self, arguments: &Value) -> Result<(), String> {
        let problems: Vec<String> = self
            .0
            .iter_errors(arguments)
            .map(|error| violation(&error))
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        }
    }
}

/// One schema violation as text, with the JSON pointer of the offending value.
///
/// A failed `oneOf`/`anyOf` (a variant, a result, an option) says only that no
/// alternative matched; when one alternative got further into the value than
/// all the others, its own problem is added, so a model sees which field to fix.
fn violation(error: &ValidationError<'_>) -> String {
    let path = error.instance_path().to_string();
    let mut text = if path.is_empty() {
        error.to_string()
    } else {
        format!("at {path}: {error}")
    };
    if let ValidationErrorKind::OneOfNotValid { context } | ValidationErrorKind::AnyOf { context } =
        error.kind()
        && let Some(hint) = closest_alternative(context, depth(&path))
    {
        text.push_str(&format!(" (closest alternative: {hint})"));
    }
    text
}

/// The problems of the one alternative whose errors lie deepest in the value,
/// if exactly one does and it got past the value the alternatives are about.
fn closest_alternative(
    alternatives: &[Vec<ValidationError<'static>>],
    base: usize,
) -> Option<String> {
    let depths: Vec<usize> = alternatives
        .iter()
        .map(|errors| {
            errors
                .iter()
                .map(|e| depth(&e.instance_path().to_string()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let deepest = *depths.iter().max()?;
    if deepest <= base || depths.iter().filter(|d| **d == deepest).count() != 1 {
        return None;
    }
    let index = depths.iter().position(|d| *d == deepest)?;
    let problems: Vec<String> = alternatives[index].iter().map(violation).collect();
    Some(problems.join("; "))
}

/// How many reference tokens a JSON pointer has.
fn depth(pointer: &str) -> usize {
    pointer.matches('/').count()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn problems(schema: Value, value: Value) -> Vec<String> {
        let validator = jsonschema::validator_for(&schema).unwrap();
        validator
            .iter_errors(&value)
            .map(|e| violation(&e))
            .collect()
    }

    #[test]
    fn a_failed_one_of_names_the_closest_alternative() {
        let variant = json!({"type": "object", "properties": {"s": {"oneOf": [
            {"type": "object", "properties": {"circle": {"type": "number"}}, "required": ["circle"], "additionalProperties": false},
            {"type": "object", "properties": {"empty": {"type": "null"}}, "required": ["empty"], "additionalProperties": false},
            {"type": "string", "enum": ["empty"]}
        ]}}});
        assert_eq!(
            problems(variant.clone(), json!({"s": {"circle": "x"}})),
            [
                r#"at /s: {"circle":"x"} is not valid under any of the schemas listed in the 'oneOf' keyword (closest alternative: at /s/circle: "x" is not of type "number")"#
            ]
        );
        // No alternative got further than the others: no guess.
        assert_eq!(
            problems(variant, json!({"s": {"square": 1}})),
            [
                r#"at /s: {"square":1} is not valid under any of the schemas listed in the 'oneOf' keyword"#
            ]
        );
    }
}
