//! The MCP server: answers protocol requests from the registry's current tools.
//!
//! rmcp does the protocol (eras, `_meta` validation, version negotiation,
//! `resultType`, cancellation); this is our `ServerHandler`, which maps requests to
//! the registry and the runtime and maps the runtime's outcomes back to MCP.

use std::borrow::Cow;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams,
    CompleteResult, CompletionInfo, ContentBlock, DiscoverResult, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, JsonObject, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    Prompt, PromptArgument, PromptMessage, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, Reference, Resource, ResourceContents, ServerCapabilities, ServerConfig,
    SubscribeRequestParams, SubscriptionFilter, Tool, ToolAnnotations, UnsubscribeRequestParams,
};
#[allow(deprecated)] // Logging is deprecated (SEP-2577) but still part of both eras.
use rmcp::model::{LoggingLevel, SetLevelRequestParams};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::task::{JoinHandle, JoinSet};

mod events;
mod resources;

pub use events::PROGRESS_INTERVAL;
use events::{EventRoute, forward_events};
use resources::{Subscriptions, expose_links};

use crate::client_input::{Binding, CallInput, Conclusion, StateSeal, arguments_value};
use crate::metrics::{CallOutcome, Metrics};
use crate::registry::{ExposedPrompt, ExposedTool, ListingVersions, Registry, ToolSet};
use crate::resource_watch::ResourceWatch;
use crate::runtime::{
    CallContext, CallFailure, CallOutput, ContentItem, RenderedPrompt, ResourceBody, Role,
};

// The protocol facts lived here first; kept reachable at their old paths.
pub use crate::protocol::{REMOVED_IN_STATELESS, SUPPORTED_VERSIONS, removed_method_message};

/// How often a legacy session's notification task checks that the session lives.
pub(crate) const SESSION_CHECK: Duration = Duration::from_secs(30);

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

/// Wharf's MCP request handler; cheap to clone. Each connection or legacy
/// session gets its own through [`WharfServer::for_session`].
#[derive(Clone)]
pub struct WharfServer {
    registry: Arc<Registry>,
    options: Arc<ServerOptions>,
    metrics: Arc<Metrics>,
    watch: Arc<ResourceWatch>,
    session: Arc<SessionState>,
    /// Signs 2026-07-28 `requestState` values (one random key per process).
    seal: Arc<StateSeal>,
}

/// What a legacy session set for itself.
#[derive(Debug, Default)]
struct SessionState {
    /// The `logging/setLevel` level; `None` until the client sets one, and then
    /// no plugin log reaches the client.
    #[allow(deprecated)]
    log_level: Mutex<Option<LoggingLevel>>,
    /// Its `resources/subscribe`s.
    subscriptions: Subscriptions,
}

impl WharfServer {
    pub fn new(registry: Arc<Registry>, options: ServerOptions) -> Self {
        Self {
            watch: ResourceWatch::new(registry.clone()),
            registry,
            options: Arc::new(options),
            metrics: Arc::default(),
            session: Arc::default(),
            seal: Arc::new(StateSeal::random()),
        }
    }

    /// A handler for a new connection or session: shares the tools, options,
    /// metrics and resource watches, but not what the previous session set (its
    /// log level, its subscriptions).
    pub fn for_session(&self) -> Self {
        Self {
            session: Arc::default(),
            ..self.clone()
        }
    }

    /// The least severe plugin log level this request wants to see: the
    /// request's own `logLevel` (2026-07-28), else the session's (legacy).
    #[allow(deprecated)]
    fn wanted_log_level(&self, context: &RequestContext<RoleServer>) -> Option<LoggingLevel> {
        context
            .meta
            .log_level()
            .or_else(|| *self.session.log_level.lock().expect("log level lock"))
    }

    fn list_ttl_ms(&self) -> u64 {
        self.options.list_ttl.as_millis() as u64
    }

    /// One page of a listing, from the request's cursor: its items in MCP form,
    /// and the next page's cursor (naming this page's last item) if more follow.
    fn list_page<T, M>(
        &self,
        request: Option<PaginatedRequestParams>,
        page: impl for<'a> Fn(&'a ToolSet, Option<&str>, usize) -> (&'a [T], bool),
        key: impl Fn(&T) -> &str,
        map: impl Fn(&T) -> M,
    ) -> Result<(Vec<M>, Option<String>), McpError> {
        let set = self.registry.snapshot();
        let after = after_cursor(request)?;
        let (items, more) = page(&set, after.as_deref(), self.options.page_size);
        let next = items
            .last()
            .filter(|_| more)
            .map(|last| encode_cursor(key(last)));
        Ok((items.iter().map(map).collect(), next))
    }

    /// The context a plugin runs a request in: the request's cancellation, and
    /// its progress reports and logs forwarded to the client (until the
    /// returned task ends, which it does once the call context is dropped).
    ///
    /// The forwarder would drop every event of a request that asked for
    /// neither progress nor logs (the usual case): its task and channel, a
    /// spawn and a cross-thread wake-up per call, are skipped then. Plugin logs
    /// still reach Wharf's own log from the runtime.
    fn call_context(
        &self,
        context: &RequestContext<RoleServer>,
        plugin: &str,
    ) -> (CallContext, Option<JoinHandle<()>>) {
        let route = EventRoute {
            progress_token: context.meta.get_progress_token(),
            log_level: self.wanted_log_level(context),
            logger: plugin.to_string(),
        };
        let (events, forwarder) = if route.progress_token.is_none() && route.log_level.is_none() {
            (None, None)
        } else {
            let (events_tx, events_rx) = mpsc::unbounded_channel();
            let forwarder = tokio::spawn(forward_events(events_rx, route, context.peer.clone()));
            (Some(events_tx), Some(forwarder))
        };
        let call = CallContext {
            cancel: context.ct.clone(),
            events,
            input: None,
        };
        (call, forwarder)
    }

    /// Records every tool call (count, errors, latency) in `metrics`.
    pub fn with_metrics(mut self, metrics: Arc<Metrics>) -> Self {
        self.metrics = metrics;
        self
    }
}

impl ServerHandler for WharfServer {
    #[allow(deprecated)] // logging: deprecated (SEP-2577), still in both eras
    fn get_info(&self) -> ServerConfig {
        let mut info = Implementation::new("wharf", env!("CARGO_PKG_VERSION"));
        info.title = Some("Wharf".into());
        info.description = Some("WebAssembly components served as MCP tools".into());
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_resources()
                .enable_resources_list_changed()
                .enable_resources_subscribe()
                .enable_prompts()
                .enable_prompts_list_changed()
                .enable_completions()
                .enable_logging()
                .build(),
        )
        .with_server_info(info)
        .with_instructions(
            "Tools, prompts and resources come from WebAssembly plugins; each tool and \
             prompt is named <plugin>_<name>, and each resource URI is <plugin>+<uri>.",
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
        // Every list changes here, and resources Wharf can resolve now may be
        // watched; rmcp intersects this with the request and the advertised
        // capabilities before acknowledging.
        let set = self.registry.snapshot();
        let mut accepted = SubscriptionFilter::new();
        accepted.tools_list_changed = requested.tools_list_changed.filter(|&wanted| wanted);
        accepted.prompts_list_changed = requested.prompts_list_changed.filter(|&wanted| wanted);
        accepted.resources_list_changed = requested.resources_list_changed.filter(|&wanted| wanted);
        accepted.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
            uris.iter()
                .filter(|uri| set.resolve_resource(uri).is_some())
                .cloned()
                .collect()
        });
        Some(accepted)
    }

    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), McpError> {
        let accepted = subscription.accepted();
        let wants_tools = accepted.tools_list_changed == Some(true);
        let wants_prompts = accepted.prompts_list_changed == Some(true);
        let wants_resources = accepted.resources_list_changed == Some(true);
        let uris = accepted.resource_subscriptions.clone().unwrap_or_default();
        if !wants_tools && !wants_prompts && !wants_resources && uris.is_empty() {
            subscription.cancelled().await;
            return Ok(());
        }
        // Each watched URI's changes, merged into one channel; the forwarders
        // (and with them the watches) end with the stream.
        let (updated_tx, mut updated) = mpsc::channel::<String>(16);
        let mut forwarders = JoinSet::new();
        for uri in uris {
            let mut changes = self.watch.watch(&uri);
            let updated_tx = updated_tx.clone();
            forwarders.spawn(async move {
                while changes.changed().await.is_ok() {
                    if updated_tx.send(uri.clone()).await.is_err() {
                        return;
                    }
                }
            });
        }
        drop(updated_tx);
        let mut listing = self.registry.watch_listing();
        let mut seen = *listing.borrow_and_update();
        loop {
            let sink = subscription.sink();
            let sent = tokio::select! {
                _ = subscription.cancelled() => return Ok(()),
                Some(uri) = updated.recv() => sink.notify_resource_updated(uri).await,
                changed = listing.changed() => {
                    if changed.is_err() {
                        return Ok(());
                    }
                    let now = *listing.borrow_and_update();
                    let mut sent = Ok(());
                    if wants_tools && now.tools != seen.tools {
                        sent = sink.notify_tool_list_changed().await;
                    }
                    if sent.is_ok() && wants_prompts && now.prompts != seen.prompts {
                        sent = sink.notify_prompt_list_changed().await;
                    }
                    if sent.is_ok() && wants_resources && now.resources != seen.resources {
                        sent = sink.notify_resource_list_changed().await;
                    }
                    seen = now;
                    sent
                }
            };
            if let Err(error) = sent {
                tracing::debug!("listen stream closed: {error}");
                return Ok(());
            }
        }
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // A legacy client: it learns of changes from unsolicited list_changed
        // notifications for as long as its session lasts.
        let mut listing = self.registry.watch_listing();
        let mut seen = *listing.borrow_and_update();
        let peer = context.peer;
        tokio::spawn(async move {
            // rmcp has no "closed" future; a slow poll ends the task for a session
            // that went away while nothing changed.
            let mut check = tokio::time::interval(SESSION_CHECK);
            loop {
                tokio::select! {
                    changed = listing.changed() => {
                        if changed.is_err() || peer.is_transport_closed() {
                            break;
                        }
                        let now = *listing.borrow_and_update();
                        if notify_legacy(&peer, seen, now).await.is_err() {
                            break;
                        }
                        seen = now;
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
        let (tools, next) = self.list_page(request, ToolSet::page, ExposedTool::name, mcp_tool)?;
        let mut result = ListToolsResult::with_all_items(tools)
            .with_ttl_ms(self.list_ttl_ms())
            .with_cache_scope(CacheScope::Public);
        result.next_cursor = next;
        Ok(result)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        self.resource_page(request)
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        self.template_page(request)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let binding = Binding {
            method: "resources/read",
            name: &request.uri,
            arguments: &Value::Null,
        };
        let input = CallInput::begin(
            &self.seal,
            binding,
            request.input_responses.as_ref(),
            request.request_state.as_deref(),
            &context,
        )?;
        let outcome = self
            .read(&request.uri, &context, Some(input.broker()))
            .await;
        match input.conclude(binding, outcome.is_err()) {
            Conclusion::Proceed => Ok(outcome?.into()),
            Conclusion::InputRequired(result) => Ok(result.into()),
            Conclusion::Error(error) => Err(error),
            Conclusion::Failed(why) => Err(McpError::internal_error(
                format!("Reading `{}` failed: {why}", request.uri),
                Some(json!({ "uri": request.uri })),
            )),
        }
    }

    #[allow(deprecated)] // legacy only; 2026-07-28 clients use listen
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.subscribe_session(request.uri, context)
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.unsubscribe_session(&request.uri);
        Ok(())
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let (prompts, next) = self.list_page(
            request,
            ToolSet::prompt_page,
            ExposedPrompt::name,
            mcp_prompt,
        )?;
        let mut result = ListPromptsResult::with_all_items(prompts)
            .with_ttl_ms(self.list_ttl_ms())
            .with_cache_scope(CacheScope::Public);
        result.next_cursor = next;
        Ok(result)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let set = self.registry.snapshot();
        let Some(prompt) = set.get_prompt(&request.name) else {
            return Err(unknown_prompt(&request.name));
        };
        let arguments = string_arguments(request.arguments.as_ref())?;
        prompt
            .spec()
            .check_arguments(arguments.iter().map(|(name, _)| name.as_str()))
            .map_err(|why| McpError::invalid_params(why, Some(json!({"name": request.name}))))?;
        let bound = arguments_value(request.arguments.as_ref());
        let binding = Binding {
            method: "prompts/get",
            name: &request.name,
            arguments: &bound,
        };
        let input = CallInput::begin(
            &self.seal,
            binding,
            request.input_responses.as_ref(),
            request.request_state.as_deref(),
            &context,
        )?;
        let (mut call, forwarder) = self.call_context(&context, prompt.plugin().name());
        call.input = Some(input.broker());
        let outcome = prompt
            .plugin()
            .get_prompt(&prompt.spec().name, &arguments, call)
            .await;
        if let Some(forwarder) = forwarder {
            let _ = forwarder.await;
        }
        match input.conclude(binding, outcome.is_err()) {
            Conclusion::Proceed => {}
            Conclusion::InputRequired(result) => return Ok(result.into()),
            Conclusion::Error(error) => return Err(error),
            Conclusion::Failed(why) => {
                return Err(prompt_failure(prompt, CallFailure::Failed(why)));
            }
        }
        let mut rendered = outcome.map_err(|failure| prompt_failure(prompt, failure))?;
        for (_, content) in &mut rendered.messages {
            expose_links(&set, prompt.plugin().name(), std::slice::from_mut(content));
        }
        Ok(mcp_prompt_result(rendered).into())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let mut chosen: Vec<(String, String)> = request
            .context
            .and_then(|c| c.arguments)
            .map(|arguments| arguments.into_iter().collect())
            .unwrap_or_default();
        chosen.sort();
        let prompt_ref = match &request.r#ref {
            Reference::Prompt(prompt) => prompt,
            Reference::Resource(template) => {
                return self
                    .complete_template(
                        &template.uri,
                        &request.argument.name,
                        &request.argument.value,
                        &chosen,
                        &context,
                    )
                    .await;
            }
            _ => {
                return Err(McpError::invalid_params(
                    "Unsupported completion reference",
                    None,
                ));
            }
        };
        let set = self.registry.snapshot();
        let Some(prompt) = set.get_prompt(&prompt_ref.name) else {
            return Err(unknown_prompt(&prompt_ref.name));
        };
        let argument = &request.argument.name;
        if !prompt.spec().arguments.iter().any(|a| a.name == *argument) {
            return Err(McpError::invalid_params(
                format!("prompt `{}` has no argument `{argument}`", prompt.name()),
                Some(json!({"name": prompt.name(), "argument": argument})),
            ));
        }
        let (call, _) = self.call_context(&context, prompt.plugin().name());
        let values = prompt
            .plugin()
            .complete_prompt_argument(
                &prompt.spec().name,
                argument,
                &request.argument.value,
                &chosen,
                call,
            )
            .await
            .map_err(|failure| prompt_failure(prompt, failure))?;
        completion(values)
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        *self.session.log_level.lock().expect("log level lock") = Some(request.level);
        Ok(())
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

        let binding = Binding {
            method: "tools/call",
            name: &request.name,
            arguments: &arguments,
        };
        let input = match CallInput::begin(
            &self.seal,
            binding,
            request.input_responses.as_ref(),
            request.request_state.as_deref(),
            &context,
        ) {
            Ok(input) => input,
            Err(error) => {
                timer.finish(CallOutcome::Error);
                return Err(error);
            }
        };
        let (mut call, forwarder) = self.call_context(&context, tool.plugin().name());
        call.input = Some(input.broker());
        let mut outcome = tool
            .plugin()
            .call(&tool.spec().name, &arguments.to_string(), call)
            .await;
        // The sender is gone with the call context, so this ends once every
        // report has been sent, before the result goes out.
        if let Some(forwarder) = forwarder {
            let _ = forwarder.await;
        }
        match input.conclude(binding, outcome.is_err()) {
            Conclusion::Proceed => {}
            Conclusion::InputRequired(result) => {
                timer.finish(CallOutcome::Success);
                return Ok(result.into());
            }
            Conclusion::Error(error) => {
                timer.finish(CallOutcome::Error);
                return Err(error);
            }
            Conclusion::Failed(why) => outcome = Err(CallFailure::Failed(why)),
        }
        let failed = !matches!(&outcome, Ok(output) if !output.is_error);
        timer.finish(if failed {
            CallOutcome::Error
        } else {
            CallOutcome::Success
        });
        match outcome {
            Ok(mut output) => {
                expose_links(&set, tool.plugin().name(), &mut output.content);
                Ok(mcp_result(output).into())
            }
            Err(CallFailure::UnknownTool(_)) => Err(unknown_tool(&request.name)),
            Err(failure) => {
                tracing::warn!(tool = tool.name(), "call failed: {failure}");
                Ok(tool_error(format!("Tool `{}` failed: {failure}", tool.name())).into())
            }
        }
    }
}

/// A completion result: the first 100 values, and how many there were.
fn completion(mut values: Vec<String>) -> Result<CompleteResult, McpError> {
    let total = values.len();
    values.truncate(CompletionInfo::MAX_VALUES);
    let more = total > values.len();
    let completion = CompletionInfo::with_pagination(values, Some(total as u32), more)
        .map_err(|why| McpError::internal_error(why, None))?;
    Ok(CompleteResult::new(completion))
}

/// The name a cursor points after, if the request carries one.
fn after_cursor(request: Option<PaginatedRequestParams>) -> Result<Option<String>, McpError> {
    request
        .and_then(|r| r.cursor)
        .map(|cursor| decode_cursor(&cursor))
        .transpose()
}

/// Tells a legacy session which listings moved from `seen` to `now`.
async fn notify_legacy(
    peer: &rmcp::Peer<RoleServer>,
    seen: ListingVersions,
    now: ListingVersions,
) -> Result<(), rmcp::ServiceError> {
    if now.tools != seen.tools {
        peer.notify_tool_list_changed().await?;
    }
    if now.prompts != seen.prompts {
        peer.notify_prompt_list_changed().await?;
    }
    if now.resources != seen.resources {
        peer.notify_resource_list_changed().await?;
    }
    Ok(())
}

/// Prompt arguments are strings; anything else is refused, naming the argument.
fn string_arguments(arguments: Option<&JsonObject>) -> Result<Vec<(String, String)>, McpError> {
    let mut pairs = Vec::new();
    for (name, value) in arguments.into_iter().flatten() {
        let Value::String(value) = value else {
            return Err(McpError::invalid_params(
                format!("prompt argument `{name}` must be a string, not {value}"),
                Some(json!({ "argument": name })),
            ));
        };
        pairs.push((name.clone(), value.clone()));
    }
    Ok(pairs)
}

/// A prompt request that the plugin could not serve: bad arguments are the
/// client's to fix (-32602); anything else is an internal error naming why.
fn prompt_failure(prompt: &ExposedPrompt, failure: CallFailure) -> McpError {
    match failure {
        CallFailure::UnknownPrompt(_) => unknown_prompt(prompt.name()),
        CallFailure::InvalidArguments(why) => McpError::invalid_params(
            format!("Invalid arguments for prompt `{}`: {why}", prompt.name()),
            Some(json!({ "name": prompt.name() })),
        ),
        failure => {
            tracing::warn!(prompt = prompt.name(), "prompt failed: {failure}");
            McpError::internal_error(
                format!("Prompt `{}` failed: {failure}", prompt.name()),
                None,
            )
        }
    }
}

/// The MCP description of an exposed prompt.
fn mcp_prompt(prompt: &ExposedPrompt) -> Prompt {
    let spec = prompt.spec();
    let arguments = spec
        .arguments
        .iter()
        .map(|a| {
            let mut argument = PromptArgument::new(&a.name).with_required(a.required);
            argument.title = a.title.clone();
            argument.description = a.description.clone();
            argument
        })
        .collect::<Vec<_>>();
    let mut out = Prompt::new(
        prompt.name(),
        spec.description.clone(),
        (!arguments.is_empty()).then_some(arguments),
    );
    out.title = spec.title.clone();
    out
}

fn mcp_prompt_result(rendered: RenderedPrompt) -> GetPromptResult {
    let messages = rendered
        .messages
        .into_iter()
        .map(|(role, content)| {
            let role = match role {
                Role::User => rmcp::model::Role::User,
                Role::Assistant => rmcp::model::Role::Assistant,
            };
            PromptMessage::new(role, mcp_content(content))
        })
        .collect();
    let mut result = GetPromptResult::new(messages);
    result.description = rendered.description;
    result
}

fn unknown_prompt(name: &str) -> McpError {
    McpError::invalid_params(
        format!("Unknown prompt: {name}"),
        Some(json!({ "name": name })),
    )
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

/// Binary data as MCP carries it.
fn base64(data: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(data)
}

/// One content item as MCP content; binary data is base64-encoded.
fn mcp_content(item: ContentItem) -> ContentBlock {
    let b64 = base64;
    match item {
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
        ContentItem::EmbeddedResource {
            uri,
            mime_type,
            body,
        } => ContentBlock::resource(match body {
            ResourceBody::Text(text) => ResourceContents::TextResourceContents {
                uri,
                mime_type,
                text,
                meta: None,
            },
            ResourceBody::Blob(data) => ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob: b64(&data),
                meta: None,
            },
        }),
    }
}

/// The MCP result of a call that ran to completion. Public so that the
/// overhead benchmark (`host/benches/overhead.rs`) can time this step alone.
pub fn mcp_result(output: CallOutput) -> CallToolResult {
    let mut content: Vec<ContentBlock> = output.content.into_iter().map(mcp_content).collect();
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
    fn embedded_resources_carry_text_or_base64() {
        let result = mcp_result(CallOutput {
            content: vec![
                ContentItem::EmbeddedResource {
                    uri: "test://a".into(),
                    mime_type: Some("text/plain".into()),
                    body: ResourceBody::Text("hi".into()),
                },
                ContentItem::EmbeddedResource {
                    uri: "test://b".into(),
                    mime_type: None,
                    body: ResourceBody::Blob(vec![1, 2, 3]),
                },
            ],
            structured: None,
            is_error: false,
        });
        let value = serde_json::to_value(&result.content).unwrap();
        assert_eq!(
            value,
            json!([
                {"type": "resource", "resource": {"uri": "test://a", "mimeType": "text/plain", "text": "hi"}},
                {"type": "resource", "resource": {"uri": "test://b", "blob": "AQID"}}
            ])
        );
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
