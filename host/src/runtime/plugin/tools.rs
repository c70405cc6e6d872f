//! The tools of a plugin: listed when a `wharf:plugin` component loads, and
//! called, each call in a fresh instance; a plain component's function is
//! called with arguments converted from JSON and its result converted back.

use std::sync::Arc;

use serde_json::Value;
use wasmtime::Store;
use wasmtime::component::{ComponentExportIndex, Func, Instance, Val};

use super::Plugin;
use super::invoke::{Export, Request, TimeLimit};
use crate::runtime::bindings::exports::wharf::plugin::tools::ToolError;
use crate::runtime::code::Exports;
use crate::runtime::failure::{CallFailure, LoadError};
use crate::runtime::plain::{self, shape::Signature};
use crate::runtime::state::{CallContext, HostState};
use crate::runtime::types::{CallOutput, SpecError, ToolSpec};

/// A call of a plain component's function: where the function is, and its
/// arguments already converted.
struct PlainCall<'a> {
    tool: &'a str,
    export: ComponentExportIndex,
    signature: Arc<Signature>,
    params: Vec<Val>,
    results: Vec<Val>,
}

impl Export for PlainCall<'_> {
    type Bound = (Func, Arc<Signature>, Vec<Val>, Vec<Val>);

    fn bind(
        self,
        store: &mut Store<HostState>,
        instance: &Instance,
    ) -> wasmtime::Result<Self::Bound> {
        let tool = self.tool;
        let func = instance
            .get_func(store, self.export)
            .ok_or_else(|| wasmtime::Error::msg(format!("the export of `{tool}` is gone")))?;
        Ok((func, self.signature, self.params, self.results))
    }
}

impl Plugin {
    /// Calls `tool` with `arguments` (a JSON object) in a fresh instance.
    ///
    /// A `wharf:plugin` component gets them as JSON text; a plain component's
    /// are converted straight from the value (no text, no second parse), within
    /// a host-memory budget of the plugin's memory limit.
    ///
    /// Refused at once if this plugin or the whole server is at its concurrency
    /// limit. A result larger than the output limit, or any HTTP request to a host
    /// outside the allow-list, turns the call into a failure.
    pub async fn call(
        &self,
        tool: &str,
        arguments: &Value,
        ctx: CallContext,
    ) -> Result<CallOutput, CallFailure> {
        let output = match self.kind() {
            super::PluginKind::Wharf => self.call_wharf(tool, arguments, ctx).await?,
            super::PluginKind::Plain => self.call_plain(tool, arguments, ctx).await?,
        };
        self.check_output_size(output.size_bytes())?;
        Ok(output)
    }

    /// Runs `call-tool` of a `wharf:plugin` component.
    async fn call_wharf(
        &self,
        tool: &str,
        arguments: &Value,
        ctx: CallContext,
    ) -> Result<CallOutput, CallFailure> {
        // The bindings take the `json` type alias (`String`) by reference.
        let (owned_tool, arguments) = (tool.to_owned(), arguments.to_string());
        let outcome = self
            .invoke(
                Request::Call(TimeLimit::Clock),
                ctx,
                |exports| match exports {
                    Exports::Wharf(wharf) => Ok(wharf.tools.clone()),
                    Exports::Plain(_) => Err(CallFailure::UnknownTool(tool.to_string())),
                },
                move |store, tools| {
                    Box::pin(
                        async move { tools.call_call_tool(store, &owned_tool, &arguments).await },
                    )
                },
            )
            .await?;
        match outcome {
            Ok(result) => Ok(CallOutput::from_wit(result)),
            Err(ToolError::UnknownTool(name)) => Err(CallFailure::UnknownTool(name)),
            Err(ToolError::InvalidArguments(why)) => Err(CallFailure::InvalidArguments(why)),
            Err(ToolError::Failed(why)) => Err(CallFailure::Failed(why)),
        }
    }

    /// Calls an exported function of a plain component with converted arguments.
    async fn call_plain(
        &self,
        tool: &str,
        arguments: &Value,
        ctx: CallContext,
    ) -> Result<CallOutput, CallFailure> {
        let budget = self.limits().memory_bytes;
        let (results, signature) = self
            .invoke(
                Request::Call(TimeLimit::Fixed),
                ctx,
                |exports| {
                    let Exports::Plain(plain) = exports else {
                        return Err(CallFailure::UnknownTool(tool.to_string()));
                    };
                    let found = plain
                        .tools
                        .iter()
                        .find(|t| t.spec.name == tool)
                        .ok_or_else(|| CallFailure::UnknownTool(tool.to_string()))?;
                    // Converted before any instance exists: bad arguments cost nothing.
                    let params = plain::arguments(&found.signature, arguments, budget)?;
                    let results = plain::result_slots(&found.signature);
                    Ok(PlainCall {
                        tool,
                        export: found.export,
                        signature: found.signature.clone(),
                        params,
                        results,
                    })
                },
                |store, (func, signature, params, mut results)| {
                    Box::pin(async move {
                        func.call_async(store, &params, &mut results).await?;
                        Ok((results, signature))
                    })
                },
            )
            .await?;
        plain::output(&signature, &results)
    }

    /// The tools a `wharf:plugin` component lists, less those whose
    /// description is invalid or whose name it lists twice (each with a
    /// warning).
    pub(super) async fn listed_tools(&self) -> Result<Vec<ToolSpec>, LoadError> {
        let listed = self.list_tools().await.map_err(LoadError::ListTools)?;
        let mut tools: Vec<ToolSpec> = Vec::with_capacity(listed.len());
        for (tool_name, spec) in listed {
            match spec {
                Err(error) => {
                    tracing::warn!(plugin = %self.name(), tool = %tool_name, "tool left out: {error}")
                }
                Ok(spec) if tools.iter().any(|t| t.name == spec.name) => {
                    tracing::warn!(plugin = %self.name(), tool = %spec.name, "tool left out: its name is listed twice")
                }
                Ok(spec) => tools.push(spec),
            }
        }
        Ok(tools)
    }

    /// Asks a fresh instance for its tool list, with each description parsed.
    async fn list_tools(&self) -> Result<Vec<(String, Result<ToolSpec, SpecError>)>, CallFailure> {
        if !matches!(self.code.load().exports, Exports::Wharf(_)) {
            return Ok(Vec::new());
        }
        let tools = self
            .invoke(
                Request::Listing,
                CallContext::default(),
                |exports| match exports {
                    Exports::Wharf(wharf) => Ok(wharf.tools.clone()),
                    Exports::Plain(_) => Err(CallFailure::Setup("its tools export is gone".into())),
                },
                |store, tools| Box::pin(async move { tools.call_list_tools(store).await }),
            )
            .await?;
        Ok(tools
            .into_iter()
            .map(|tool| (tool.name.clone(), ToolSpec::from_wit(tool)))
            .collect())
    }
}
