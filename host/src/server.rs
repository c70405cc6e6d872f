//! The MCP server: answers protocol requests from the registry's current tools.
//!
//! rmcp does the protocol (eras, `_meta` validation, version negotiation,
//! `resultType`, cancellation); this is our `ServerHandler`, which maps requests to
//! the registry and the runtime and maps the runtime's outcomes back to MCP.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock,
    DiscoverResult, Implementation, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ProtocolVersion, Resource, ServerCapabilities, ServerConfig,
    SubscriptionFilter, Tool, ToolAnnotations,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::metrics::{CallOutcome, Metrics};
use crate::registry::{ExposedTool, Registry};
use crate::runtime::{CallContext, CallEvent, CallFailure, CallOutput, ContentItem};

/// The protocol revisions Wharf serves, newest first.
pub const SUPPORTED_VERSIONS: &[ProtocolVersion] = &[
    ProtocolVersion::V_2026_07_28,
    ProtocolVersion::V_2025_11_25,
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_03_26,
    ProtocolVersion::V_2024_11_05,
];

/// How often a legacy session's notification task checks that the session lives.
const SESSION_CHECK: Duration = Duration::from_secs(30);

/// How long clients may cache `server/discover`.
const DISCOVER_TTL: Duration = Duration::from_secs(3600);

/// Settings of the MCP server that do not concern plugins.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Most tools in one `tools/list` page.
    pub page_size: usize,
    /// How long clients may cache list results (`ttlMs`).
    pub list_ttl: Duration,
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self {
            page_size: 100,
            list_ttl: Duration::from_secs(10),
        }
    }
}

/// Wharf's MCP request handler; cheap to clone, one per connection.
#[derive(Clone)]
pub struct WharfServer {
    registry: Arc<Registry>,
    options: Arc<ServerOptions>,
    metrics: Arc<Metrics>,
}

impl WharfServer {
    pub fn new(registry: Arc<Registry>, options: ServerOptions) -> Self {
        Self {
            registry,
            options: Arc::new(options),
            metrics: Arc::default(),
        }
    }

    /// Records every tool call (count, errors, latency) in `metrics`.
    pub fn with_metrics(mut self, metrics: Arc<Metrics>) -> Self {
        self.metrics = metrics;
        self
    }
}

impl ServerHandler for WharfServer {
    fn get_info(&self) -> ServerConfig {
        let mut info = Implementation::new("wharf", env!("CARGO_PKG_VERSION"));
        info.title = Some("Wharf".into());
        info.description = Some("WebAssembly components served as MCP tools".into());
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(info)
        .with_instructions(
            "Tools come from WebAssembly plugins; each tool is named <plugin>_<tool>.",
        )
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(SUPPORTED_VERSIONS)
    }

    async fn discover(
        &self,
        _context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, McpError> {
        // Capabilities and identity are fixed for the life of the process and hold
        // nothing user-specific, so clients may cache and share them.
        let mut result =
            DiscoverResult::from_server_info(SUPPORTED_VERSIONS.to_vec(), self.get_info());
        result.ttl_ms = DISCOVER_TTL.as_millis() as u64;
        result.cache_scope = CacheScope::Public;
        Ok(result)
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // Only the tool list changes here; rmcp intersects this with the request
        // and the advertised capabilities before acknowledging.
        let mut accepted = SubscriptionFilter::new();
        accepted.tools_list_changed = requested.tools_list_changed.filter(|&wanted| wanted);
        Some(accepted)
    }

    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), McpError> {
        if subscription.accepted().tools_list_changed != Some(true) {
            subscription.cancelled().await;
            return Ok(());
        }
        let mut listing = self.registry.watch_listing();
        listing.mark_unchanged();
        loop {
            tokio::select! {
                _ = subscription.cancelled() => return Ok(()),
                changed = listing.changed() => {
                    if changed.is_err() {
                        return Ok(());
                    }
                    if let Err(error) = subscription.sink().notify_tool_list_changed().await {
                        tracing::debug!("listen stream closed: {error}");
                        return Ok(());
                    }
                }
            }
        }
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // A legacy client: it learns of changes from unsolicited list_changed
        // notifications for as long as its session lasts.
        let mut listing = self.registry.watch_listing();
        listing.mark_unchanged();
        let peer = context.peer;
        tokio::spawn(async move {
            // rmcp has no "closed" future; a slow poll ends the task for a session
            // that went away while nothing changed.
            let mut check = tokio::time::interval(SESSION_CHECK);
            loop {
                tokio::select! {
                    changed = listing.changed() => {
                        if changed.is_err()
                            || peer.is_transport_closed()
                            || peer.notify_tool_list_changed().await.is_err()
                        {
                            break;
                        }
                    }
                    _ = check.tick() => {
                        if peer.is_transport_closed() {
                            break;
                        }
                    }
                }
            }
        });
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let set = self.registry.snapshot();
        let after = match request.and_then(|r| r.cursor) {
            None => None,
            Some(cursor) => Some(decode_cursor(&cursor)?),
        };
        let (page, more) = set.page(after.as_deref(), self.options.page_size);
        let mut result = ListToolsResult::with_all_items(page.iter().map(mcp_tool).collect())
            .with_ttl_ms(self.options.list_ttl.as_millis() as u64)
            .with_cache_scope(CacheScope::Public);
        if more && let Some(last) = page.last() {
            result.next_cursor = Some(encode_cursor(last.name()));
        }
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let set = self.registry.snapshot();
        let Some(tool) = set.get(&request.name) else {
            return Err(unknown_tool(&request.name));
        };
        // Dropped unfinished if the request is abandoned: counted as an error.
        let timer = self.metrics.start_call(tool.name());
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        if let Err(problems) = tool.check_arguments(&arguments) {
            timer.finish(CallOutcome::Error);
            return Ok(tool_error(format!(
                "Invalid arguments for tool `{}`: {problems}",
                tool.name()
            ))
            .into());
        }

        let (events_tx, events_rx) = mpsc::unbounded_channel();
        let forwarder = context
            .meta
            .get_progress_token()
            .map(|token| tokio::spawn(forward_progress(events_rx, token, context.peer.clone())));
        let call = CallContext {
            cancel: context.ct.clone(),
            events: Some(events_tx),
        };
        let outcome = tool
            .plugin()
            .call(&tool.spec().name, &arguments.to_string(), call)
            .await;
        if let Some(forwarder) = forwarder {
            // The sender is gone with the call context, so this ends once every
            // progress report has been sent, before the result goes out.
            let _ = forwarder.await;
        }
        let failed = !matches!(&outcome, Ok(output) if !output.is_error);
        timer.finish(if failed {
            CallOutcome::Error
        } else {
            CallOutcome::Success
        });
        match outcome {
            Ok(output) => Ok(mcp_result(output).into()),
            Err(CallFailure::UnknownTool(_)) => Err(unknown_tool(&request.name)),
            Err(failure) => {
                tracing::warn!(tool = tool.name(), "call failed: {failure}");
                Ok(tool_error(format!("Tool `{}` failed: {failure}", tool.name())).into())
            }
        }
    }
}

/// Sends a call's progress reports to the client as `notifications/progress`,
/// dropping any that do not increase, as the protocol requires.
async fn forward_progress(
    mut events: mpsc::UnboundedReceiver<CallEvent>,
    token: rmcp::model::ProgressToken,
    peer: rmcp::Peer<RoleServer>,
) {
    let mut last = f64::NEG_INFINITY;
    while let Some(event) = events.recv().await {
        let CallEvent::Progress {
            progress,
            total,
            message,
        } = event
        else {
            continue;
        };
        if !progress.is_finite() || progress <= last {
            continue;
        }
        last = progress;
        let mut param = ProgressNotificationParam::new(token.clone(), progress);
        param.total = total.filter(|t| t.is_finite());
        param.message = message;
        if peer.notify_progress(param).await.is_err() {
            break;
        }
    }
}

fn unknown_tool(name: &str) -> McpError {
    McpError::invalid_params(
        format!("Unknown tool: {name}"),
        Some(json!({ "name": name })),
    )
}

fn tool_error(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

/// The MCP description of an exposed tool.
fn mcp_tool(tool: &ExposedTool) -> Tool {
    let spec = tool.spec();
    let mut out = Tool::new_with_raw(
        tool.name().to_string(),
        spec.description.clone().map(Cow::Owned),
        Arc::new(spec.input_schema.clone()),
    );
    out.title = spec.title.clone();
    out.output_schema = spec.output_schema.clone().map(Arc::new);
    out.annotations = spec.hints.as_ref().map(|h| {
        ToolAnnotations::from_raw(
            h.title.clone(),
            h.read_only,
            h.destructive,
            h.idempotent,
            h.open_world,
        )
    });
    out
}

/// The MCP result of a call that ran to completion.
fn mcp_result(output: CallOutput) -> CallToolResult {
    let b64 = |data: &[u8]| base64::engine::general_purpose::STANDARD.encode(data);
    let mut content: Vec<ContentBlock> = output
        .content
        .into_iter()
        .map(|item| match item {
            ContentItem::Text(text) => ContentBlock::text(text),
            ContentItem::Image { data, mime_type } => ContentBlock::image(b64(&data), mime_type),
            ContentItem::Audio { data, mime_type } => ContentBlock::audio(b64(&data), mime_type),
            ContentItem::ResourceLink {
                uri,
                name,
                title,
                description,
                mime_type,
                size,
            } => {
                let mut link = Resource::new(uri, name);
                link.title = title;
                link.description = description;
                link.mime_type = mime_type;
                link.size = size;
                ContentBlock::resource_link(link)
            }
        })
        .collect();
    // MCP asks servers that return structured content to mirror it as text, for
    // clients that only read `content`.
    if content.is_empty()
        && let Some(structured) = &output.structured
    {
        content.push(ContentBlock::text(structured.to_string()));
    }
    let mut result = CallToolResult::success(content);
    result.structured_content = output.structured;
    result.is_error = Some(output.is_error);
    result
}

/// Cursors name the last tool of the previous page, so paging survives reloads.
fn encode_cursor(last: &str) -> String {
    URL_SAFE_NO_PAD.encode(last)
}

fn decode_cursor(cursor: &str) -> Result<String, McpError> {
    URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .filter(|name| !name.is_empty())
        .ok_or_else(|| {
            McpError::invalid_params(
                format!("Invalid cursor: {cursor}"),
                Some(json!({ "cursor": cursor })),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_reject_garbage() {
        let cursor = encode_cursor("calc_add");
        assert_eq!(decode_cursor(&cursor).unwrap(), "calc_add");
        let error = decode_cursor("not base64!").unwrap_err();
        assert_eq!(error.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        assert_eq!(error.message, "Invalid cursor: not base64!");
        assert!(decode_cursor("").is_err());
    }

    #[test]
    fn structured_output_is_mirrored_as_text() {
        let result = mcp_result(CallOutput {
            content: vec![],
            structured: Some(json!({"result": 3})),
            is_error: false,
        });
        assert_eq!(result.content.len(), 1);
        assert_eq!(result.content[0].as_text().unwrap().text, r#"{"result":3}"#);
        assert_eq!(result.structured_content, Some(json!({"result": 3})));
        assert_eq!(result.is_error, Some(false));
    }

    #[test]
    fn binary_content_is_base64() {
        let result = mcp_result(CallOutput {
            content: vec![ContentItem::Image {
                data: vec![1, 2, 3],
                mime_type: "image/png".into(),
            }],
            structured: None,
            is_error: false,
        });
        let value = serde_json::to_value(&result.content[0]).unwrap();
        assert_eq!(value["type"], "image");
        assert_eq!(value["data"], "AQID");
        assert_eq!(value["mimeType"], "image/png");
    }
}
