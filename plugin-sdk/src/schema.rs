//! JSON Schemas of tool arguments and structured results, generated with schemars.

use std::any::TypeId;

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Value, json};

/// The schema of a tool that takes no arguments (`()`): an object with no properties.
pub(crate) fn no_arguments() -> Value {
    json!({"type": "object", "properties": {}, "additionalProperties": false})
}

/// Whether `A` is `()`, the argument type of a tool that takes no arguments.
pub(crate) fn is_unit<A: 'static>() -> bool {
    TypeId::of::<A>() == TypeId::of::<()>()
}

/// The JSON Schema (2020-12) of the arguments `A`, as Wharf wants it: `()` becomes an
/// empty object, and a root without a `type` (an enum of objects, say) gets
/// `"type": "object"`, which MCP requires of every input schema.
pub(crate) fn input_schema<A: JsonSchema + 'static>() -> Value {
    if is_unit::<A>() {
        return no_arguments();
    }
    let schema = SchemaSettings::draft2020_12()
        .for_deserialize()
        .into_generator()
        .into_root_schema_for::<A>();
    object_root(schema.to_value())
}

/// The JSON Schema (2020-12) of the structured result `T`, describing what `T`
/// serializes to.
pub(crate) fn output_schema<T: JsonSchema>() -> Value {
    let schema = SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>();
    object_root(schema.to_value())
}

/// Adds `"type": "object"` to a root schema that states no type.
fn object_root(mut schema: Value) -> Value {
    if let Some(root) = schema.as_object_mut()
        && !root.contains_key("type")
    {
        root.insert("type".into(), "object".into());
    }
    schema
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    use super::*;

    /// Arguments of a test tool.
    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Args {
        /// The text to use.
        text: String,
        /// How often.
        #[serde(default)]
        times: Option<u32>,
    }

    #[derive(Serialize, JsonSchema)]
    #[allow(dead_code)]
    struct Sum {
        /// The sum.
        result: f64,
    }

    #[derive(Deserialize, JsonSchema)]
    #[serde(tag = "shape", rename_all = "lowercase")]
    #[allow(dead_code)]
    enum Shape {
        Circle { radius: f64 },
        Square { side: f64 },
    }

    #[test]
    fn struct_arguments_are_an_object_with_descriptions() {
        let schema = input_schema::<Args>();
        assert_eq!(
            schema["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["description"], "Arguments of a test tool.");
        assert_eq!(
            schema["properties"]["text"],
            json!({"type": "string", "description": "The text to use."})
        );
        assert_eq!(schema["properties"]["times"]["description"], "How often.");
        assert_eq!(schema["required"], json!(["text"]));
    }

    #[test]
    fn unit_means_no_arguments() {
        assert_eq!(
            input_schema::<()>(),
            json!({"type": "object", "properties": {}, "additionalProperties": false})
        );
    }

    #[test]
    fn untyped_root_becomes_an_object() {
        let schema = input_schema::<Shape>();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["oneOf"].as_array().map(Vec::len), Some(2));
    }

    #[test]
    fn output_schema_describes_the_result() {
        let schema = output_schema::<Sum>();
        assert_eq!(schema["type"], "object");
        assert_eq!(
            schema["properties"]["result"],
            json!({"type": "number", "format": "double", "description": "The sum."})
        );
        assert_eq!(schema["required"], json!(["result"]));
    }
}
