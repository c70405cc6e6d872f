//! One tool: its name, descriptions, schemas and the closure that runs it.

use std::borrow::Cow;
use std::fmt;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::bindings::wharf::plugin::types as wit;
use crate::error::ToolError;
use crate::output::ToolOutput;
use crate::schema;

/// A text that is usually a literal: borrowed for free, owned when it must be.
type Text = Cow<'static, str>;

/// Runs a tool on its arguments as JSON text.
type Handler = Box<dyn Fn(&str) -> Result<ToolOutput, ToolError>>;

/// One tool of a plugin: a name, a closure taking typed arguments, and what clients
/// are told about it.
///
/// The argument type `A` derives [`serde::Deserialize`] and [`schemars::JsonSchema`];
/// its schema (doc comments become descriptions) is the tool's input schema, and
/// arguments that do not deserialize into it become [`ToolError::InvalidArguments`]
/// naming the offending field. A tool without arguments takes `()`.
///
/// Making a `Tool` is cheap: schemas are only generated when Wharf lists the tools.
pub struct Tool {
    name: Text,
    title: Option<Text>,
    description: Option<Text>,
    hints: Hints,
    input_schema: fn() -> Value,
    /// Arguments mirrored in `Mcp-Param-*` headers: property and header name.
    header_params: Vec<(Text, Text)>,
    output_schema: Option<fn() -> Value>,
    handler: Handler,
}

/// The MCP behaviour hints of a tool; `None` leaves the MCP default.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Hints {
    read_only: Option<bool>,
    destructive: Option<bool>,
    idempotent: Option<bool>,
    open_world: Option<bool>,
}

impl Tool {
    /// A tool called `name` (1 to 64 characters of `A-Z a-z 0-9 _ - .`) that runs
    /// `handler` on its arguments and returns whatever [`ToolOutput`] it makes.
    pub fn new<A, F>(name: impl Into<Cow<'static, str>>, handler: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + 'static,
        F: Fn(A) -> Result<ToolOutput, ToolError> + 'static,
    {
        Self {
            name: name.into(),
            title: None,
            description: None,
            hints: Hints::default(),
            input_schema: schema::input_schema::<A>,
            header_params: Vec::new(),
            output_schema: None,
            handler: Box::new(move |arguments| handler(parse_arguments::<A>(arguments)?)),
        }
    }

    /// A tool with structured output: `handler` returns a value of type `T`, whose
    /// schema becomes the tool's output schema, and the SDK returns it as structured
    /// content plus a JSON text rendering (see [`ToolOutput::structured`]).
    ///
    /// `T` must serialize to a JSON object (a struct or a map). To answer with an
    /// is-error result instead of a `T`, return `Err(ToolOutput::error("...").into())`.
    pub fn structured<A, T, F>(name: impl Into<Cow<'static, str>>, handler: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + 'static,
        T: Serialize + JsonSchema,
        F: Fn(A) -> Result<T, ToolError> + 'static,
    {
        Self {
            output_schema: Some(schema::output_schema::<T>),
            ..Self::new(name, move |arguments: A| {
                ToolOutput::structured(&handler(arguments)?)
            })
        }
    }

    /// A tool whose input schema is written by hand, for JSON Schema that no Rust
    /// type produces (`if`/`then`/`else`, `$anchor`, ...). `handler` gets the
    /// arguments as JSON; Wharf has already checked them against `input_schema`.
    pub fn with_input_schema<F>(
        name: impl Into<Cow<'static, str>>,
        input_schema: fn() -> Value,
        handler: F,
    ) -> Self
    where
        F: Fn(Value) -> Result<ToolOutput, ToolError> + 'static,
    {
        Self {
            input_schema,
            ..Self::new(name, move |arguments: Value| handler(arguments))
        }
    }

    /// Declares `T`'s schema as the output schema, for a tool made with
    /// [`new`](Self::new) that returns structured content (with
    /// [`ToolOutput::with_structured`]) next to other items, such as links.
    pub fn with_output_schema<T: JsonSchema>(mut self) -> Self {
        self.output_schema = Some(schema::output_schema::<T>);
        self
    }

    /// Asks clients to repeat the argument `property` (a top-level `string`,
    /// `integer` or `boolean` field; not an `Option`, whose schema type is
    /// `["string", "null"]`: use `#[serde(default)]`) in the HTTP header `Mcp-Param-{header}`
    /// (`x-mcp-header`, SEP-2243), so that a gateway can route the call by it
    /// without reading the body; Wharf refuses a call whose header and body
    /// disagree. `header` is an HTTP token (letters, digits, `-`, ...), unique
    /// among the tool's without regard to case; Wharf leaves out, with a
    /// warning, a tool whose annotations break these rules. Never mark a
    /// secret: headers are logged by proxies.
    ///
    /// The same can be said on the field itself, with schemars:
    /// `#[schemars(extend("x-mcp-header" = "Region"))]`.
    pub fn header_param(
        mut self,
        property: impl Into<Cow<'static, str>>,
        header: impl Into<Cow<'static, str>>,
    ) -> Self {
        self.header_params.push((property.into(), header.into()));
        self
    }

    /// Sets the short human-readable name shown by clients.
    pub fn title(mut self, title: impl Into<Cow<'static, str>>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets what the tool does, written for a language model deciding whether to call it.
    pub fn description(mut self, description: impl Into<Cow<'static, str>>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Hints that the tool does not modify its environment.
    pub fn read_only(mut self) -> Self {
        self.hints.read_only = Some(true);
        self
    }

    /// Hints whether the tool may perform destructive updates (MCP default: true).
    pub fn destructive(mut self, destructive: bool) -> Self {
        self.hints.destructive = Some(destructive);
        self
    }

    /// Hints that calling the tool again with the same arguments has no further effect.
    pub fn idempotent(mut self) -> Self {
        self.hints.idempotent = Some(true);
        self
    }

    /// Hints whether the tool talks to an open world of external entities
    /// (MCP default: true).
    pub fn open_world(mut self, open_world: bool) -> Self {
        self.hints.open_world = Some(open_world);
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The JSON Schema of the arguments (generated on each call of this
    /// method), with the [`header_param`](Self::header_param)s marked.
    pub fn input_schema(&self) -> Value {
        let mut schema = (self.input_schema)();
        for (property, header) in &self.header_params {
            if let Some(property) = schema
                .get_mut("properties")
                .and_then(|properties| properties.get_mut(property.as_ref()))
                .and_then(Value::as_object_mut)
            {
                property.insert("x-mcp-header".into(), header.as_ref().into());
            }
        }
        schema
    }

    /// The JSON Schema of the structured content, for a [`structured`](Self::structured)
    /// tool (generated on each call of this method).
    pub fn output_schema(&self) -> Option<Value> {
        self.output_schema.map(|schema| schema())
    }

    /// Runs the tool on `arguments`, a JSON object as text. Empty text or `null` count
    /// as `{}`.
    pub fn call(&self, arguments: &str) -> Result<ToolOutput, ToolError> {
        (self.handler)(arguments)
    }

    /// The WIT `tool` record that describes this tool to Wharf.
    pub(crate) fn to_wit(&self) -> wit::Tool {
        let hints = self.hints;
        let annotations = (hints != Hints::default()).then_some(wit::ToolAnnotations {
            title: None,
            read_only_hint: hints.read_only,
            destructive_hint: hints.destructive,
            idempotent_hint: hints.idempotent,
            open_world_hint: hints.open_world,
        });
        wit::Tool {
            name: self.name.to_string(),
            title: self.title.as_deref().map(str::to_owned),
            description: self.description.as_deref().map(str::to_owned),
            input_schema: self.input_schema().to_string(),
            output_schema: self.output_schema().map(|schema| schema.to_string()),
            annotations,
        }
    }
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name)
            .field("title", &self.title)
            .field("description", &self.description)
            .field("hints", &self.hints)
            .field("structured", &self.output_schema.is_some())
            .finish_non_exhaustive()
    }
}

/// Deserializes the arguments `A` from JSON text, or says which field is wrong.
fn parse_arguments<A: DeserializeOwned + 'static>(arguments: &str) -> Result<A, ToolError> {
    let arguments = match arguments.trim() {
        "" | "null" => "{}",
        trimmed => trimmed,
    };
    if !arguments.starts_with('{') {
        return Err(ToolError::invalid_arguments(format!(
            "the arguments must be a JSON object, not `{arguments}`"
        )));
    }
    if schema::is_unit::<A>() {
        return parse_no_arguments(arguments);
    }
    let mut deserializer = serde_json::Deserializer::from_str(arguments);
    let value = serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
        let known = error
            .path()
            .iter()
            .any(|segment| !matches!(segment, serde_path_to_error::Segment::Unknown));
        let path = error.path().to_string();
        let inner = error.into_inner();
        if known {
            ToolError::invalid_arguments(format!("`{path}`: {inner}"))
        } else {
            ToolError::invalid_arguments(inner.to_string())
        }
    })?;
    deserializer
        .end()
        .map_err(|error| ToolError::invalid_arguments(error.to_string()))?;
    Ok(value)
}

/// The arguments of a tool that takes none (`()`): an empty object.
fn parse_no_arguments<A: DeserializeOwned>(arguments: &str) -> Result<A, ToolError> {
    let object: serde_json::Map<String, Value> = serde_json::from_str(arguments)
        .map_err(|error| ToolError::invalid_arguments(error.to_string()))?;
    if let Some(name) = object.keys().next() {
        return Err(ToolError::invalid_arguments(format!(
            "this tool takes no arguments, but got `{name}`"
        )));
    }
    serde_json::from_value(Value::Null)
        .map_err(|error| ToolError::invalid_arguments(error.to_string()))
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    /// Arguments of `greet`.
    #[derive(Deserialize, JsonSchema)]
    struct Greeting {
        /// Who to greet.
        name: String,
        /// How many times.
        #[serde(default = "one")]
        times: u32,
        /// Optional details.
        #[serde(default)]
        options: Options,
    }

    #[derive(Deserialize, JsonSchema, Default)]
    struct Options {
        /// Shout the greeting.
        #[serde(default)]
        loud: bool,
    }

    fn one() -> u32 {
        1
    }

    #[derive(Serialize, JsonSchema)]
    struct Sum {
        result: f64,
    }

    fn greet() -> Tool {
        Tool::new("greet", |g: Greeting| {
            let text = format!("hello {}", g.name).repeat(g.times as usize);
            Ok(ToolOutput::text(if g.options.loud {
                text.to_uppercase()
            } else {
                text
            }))
        })
        .title("Greet")
        .description("Greets someone.")
        .read_only()
    }

    fn invalid(message: &str) -> Result<ToolOutput, ToolError> {
        Err(ToolError::InvalidArguments(message.into()))
    }

    #[test]
    fn calls_with_typed_arguments() {
        let output = greet().call(r#"{"name":"Ann","times":2}"#).unwrap();
        assert_eq!(output.text_summary(), "hello Annhello Ann");
        let output = greet()
            .call(r#"{"name":"Bo","options":{"loud":true}}"#)
            .unwrap();
        assert_eq!(output.text_summary(), "HELLO BO");
    }

    #[test]
    fn argument_errors_name_the_field() {
        assert_eq!(
            greet().call("{}"),
            invalid("missing field `name` at line 1 column 2")
        );
        assert_eq!(
            greet().call(r#"{"name":"Ann","times":"two"}"#),
            invalid("`times`: invalid type: string \"two\", expected u32 at line 1 column 27")
        );
        assert_eq!(
            greet().call(r#"{"name":"Ann","options":{"loud":1}}"#),
            invalid(
                "`options.loud`: invalid type: integer `1`, expected a boolean at line 1 column 33"
            )
        );
        assert_eq!(
            greet().call(r#"{"name":"Ann"} x"#),
            invalid("trailing characters at line 1 column 16")
        );
        assert_eq!(
            greet().call("[1]"),
            invalid("the arguments must be a JSON object, not `[1]`")
        );
        assert_eq!(
            greet().call("{"),
            invalid("EOF while parsing an object at line 1 column 1")
        );
    }

    #[test]
    fn unit_takes_no_arguments() {
        let tool = Tool::new("ping", |()| Ok(ToolOutput::text("pong")));
        for empty in ["", "null", "{}", " { } "] {
            assert_eq!(tool.call(empty).unwrap().text_summary(), "pong");
        }
        assert_eq!(
            tool.call(r#"{"x":1}"#),
            invalid("this tool takes no arguments, but got `x`")
        );
        assert_eq!(
            tool.input_schema(),
            json!({"type": "object", "properties": {}, "additionalProperties": false})
        );
        assert_eq!(tool.output_schema(), None);
    }

    #[test]
    fn structured_tools_return_json_and_have_an_output_schema() {
        let tool = Tool::structured("add", |(a, b): (f64, f64)| Ok(Sum { result: a + b }));
        let output = tool.call("[1, 2]");
        assert!(output.is_err(), "tuples are not objects");

        #[derive(Deserialize, JsonSchema)]
        struct Pair {
            a: f64,
            b: f64,
        }
        let tool = Tool::structured("add", |p: Pair| {
            if p.b.is_nan() {
                return Err(ToolOutput::error("b is not a number").into());
            }
            Ok(Sum { result: p.a + p.b })
        });
        let output = tool.call(r#"{"a":1,"b":2.5}"#).unwrap();
        assert_eq!(output.structured_content(), Some(&json!({"result": 3.5})));
        assert_eq!(output.text_summary(), r#"{"result":3.5}"#);
        assert_eq!(tool.output_schema().unwrap()["type"], "object");
        assert_eq!(tool.input_schema()["required"], json!(["a", "b"]));
    }

    #[test]
    fn describes_itself_in_wit() {
        let described = greet().to_wit();
        assert_eq!(described.name, "greet");
        assert_eq!(described.title.as_deref(), Some("Greet"));
        assert_eq!(described.description.as_deref(), Some("Greets someone."));
        assert_eq!(described.output_schema, None);
        let schema: Value = serde_json::from_str(&described.input_schema).unwrap();
        assert_eq!(schema["properties"]["name"]["description"], "Who to greet.");
        assert_eq!(schema["properties"]["times"]["default"], 1);
        assert_eq!(
            described.annotations,
            Some(wit::ToolAnnotations {
                title: None,
                read_only_hint: Some(true),
                destructive_hint: None,
                idempotent_hint: None,
                open_world_hint: None,
            })
        );
        let plain = Tool::new("ping", |()| Ok(ToolOutput::new())).to_wit();
        assert_eq!(plain.annotations, None);
        assert_eq!(plain.title, None);
    }

    /// Arguments of `route`: the region rides in a header too.
    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Routed {
        #[schemars(extend("x-mcp-header" = "Region"))]
        region: String,
        tenant: String,
        count: Option<u32>,
    }

    #[test]
    fn header_params_mark_their_properties() {
        let tool = Tool::new("route", |_: Routed| Ok(ToolOutput::text("ok")))
            .header_param("tenant", "Tenant")
            .header_param("absent", "Nowhere");
        let schema = tool.input_schema();
        assert_eq!(schema["properties"]["region"]["x-mcp-header"], "Region");
        assert_eq!(schema["properties"]["tenant"]["x-mcp-header"], "Tenant");
        assert_eq!(schema["properties"]["count"].get("x-mcp-header"), None);
        assert_eq!(schema["properties"].get("absent"), None);
        let listed: Value = serde_json::from_str(&tool.to_wit().input_schema).unwrap();
        assert_eq!(listed["properties"]["tenant"]["x-mcp-header"], "Tenant");
    }
}
