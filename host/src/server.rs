//! The MCP server: answers protocol requests from the registry's current tools.
//!
//! rmcp does the protocol (eras, `_meta` validation, version negotiation,
//! `resultType`, cancellation); this is our `ServerHandler`, which maps requests to
//! the registry and the runtime and maps the runtime's outcomes back to MCP.
//!
//! The handler below only dispatches; each protocol area has its own file, as
//! rmcp splits its own handlers:
//! - `discovery`: `server/discover` and the server's identity;
//! - `listen`: `subscriptions/listen` and a legacy session's list_changed;
//!   `listen_tasks`: the `notifications/tasks` of a listen stream;
//! - `tools`, `prompts`, `resources`, `completion`, `logging`;
//! - `tasks` (`tasks/get`, `tasks/update`, `tasks/cancel` and the live side
//!   of each task) and `task_call` (a `tools/call` that becomes a task);
//! - shared by them: `call_context` (the context a plugin runs a request
//!   in), `round` (the multi round-trip round of a request that may ask the
//!   client for input), `pages` (one page of any listing), `convert`
//!   (runtime values in MCP form) and `events` (progress and logs).

use std::borrow::Cow;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestParams,
    CompleteResult, DiscoverResult, GetPromptRequestParams, GetPromptResponse, GetTaskParams,
    GetTaskResult, InitializeRequestParams, InitializeResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ServerConfig,
    SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams, UpdateTaskParams,
};
#[allow(deprecated)] // Logging is deprecated (SEP-2577) but still part of both eras.
use rmcp::model::{LoggingLevel, SetLevelRequestParams};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};

mod call_audit;
mod call_context;
mod caller;
mod completion;
mod convert;
mod discovery;
mod events;
mod listen;
mod listen_tasks;
mod logging;
mod pages;
mod prompts;
mod resources;
mod round;
mod task_call;
mod tasks;
mod tools;

pub use convert::mcp_result;
pub use events::PROGRESS_INTERVAL;

use crate::audit::AuditLog;
use crate::client_input::StateSeal;
use crate::metrics::Metrics;
use crate::protocol::SUPPORTED_VERSIONS;
use crate::registry::{
    ExposedPrompt, ExposedResource, ExposedTemplate, ExposedTool, Registry, ToolSet,
};
use crate::resource_watch::ResourceWatch;
use crate::telemetry::request_span::record_protocol_version;
use crate::telemetry::{request_span, traced};
use resources::Subscriptions;

/// How often a legacy session's notification task checks that the session lives.
pub(crate) const SESSION_CHECK: Duration = Duration::from_secs(30);

/// Settings of the MCP server that do not concern plugins.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Most tools in one `tools/list` page.
    pub page_size: usize,
    /// How long clients may cache list results (`ttlMs`).
    pub list_ttl: Duration,
    /// How long a task's record lives after its creation (`--task-ttl-secs`).
    pub task_ttl: Duration,
    /// Most unexpired tasks at once (`--max-tasks`).
    pub max_tasks: usize,
    /// The prefix of every task id (`--session-route`), so that a load
    /// balancer routes `Mcp-Name` to the replica running the task.
    pub task_route: Option<String>,
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self {
            page_size: 100,
            list_ttl: Duration::from_secs(10),
            task_ttl: crate::tasks::DEFAULT_TASK_TTL,
            max_tasks: crate::tasks::DEFAULT_MAX_TASKS,
            task_route: None,
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
    /// Signs 2026-07-28 `requestState` values (a random key per process, or
    /// one shared by replicas: [`WharfServer::with_state_seal`]).
    seal: Arc<StateSeal>,
    /// Where each tool call is recorded (`--audit-log`), if anywhere.
    audit: Option<Arc<AuditLog>>,
    /// The tasks of every session and connection.
    tasks: Arc<tasks::Tasks>,
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
            tasks: Arc::new(tasks::Tasks::new(
                options.task_ttl,
                options.max_tasks,
                options.task_route.clone(),
            )),
            watch: ResourceWatch::new(registry.clone()),
            registry,
            options: Arc::new(options),
            metrics: Arc::default(),
            session: Arc::default(),
            seal: Arc::new(StateSeal::random()),
            audit: None,
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

    /// Seals `requestState` values with `seal`, so that a retry may land on
    /// any replica holding the same key.
    pub fn with_state_seal(mut self, seal: StateSeal) -> Self {
        self.seal = Arc::new(seal);
        self
    }

    /// Records every tool call (count, errors, latency) in `metrics`.
    pub fn with_metrics(mut self, metrics: Arc<Metrics>) -> Self {
        self.metrics = metrics;
        self
    }

    /// Writes a line per tool call to `audit`.
    pub fn with_audit(mut self, audit: Arc<AuditLog>) -> Self {
        self.audit = Some(audit);
        self
    }

    /// Which tasks exist, for the transports' handling of a listen
    /// request's `taskIds` ([`crate::task_subscriptions`]).
    pub fn task_directory(&self) -> Arc<dyn crate::task_subscriptions::TaskDirectory> {
        self.tasks.clone()
    }

    fn list_ttl_ms(&self) -> u64 {
        self.options.list_ttl.as_millis() as u64
    }
}

impl ServerHandler for WharfServer {
    fn get_info(&self) -> ServerConfig {
        discovery::server_config()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(SUPPORTED_VERSIONS)
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, McpError> {
        traced(request_span("server/discover", None, &context), async {
            let declared = context
                .client_capabilities()
                .is_some_and(|capabilities| capabilities.supports_tasks());
            Ok(discovery::discover(
                self.registry.snapshot().digest(),
                declared,
            ))
        })
        .await
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        traced(request_span("initialize", None, &context), async {
            context.peer.set_peer_info(request.clone());
            let result = self.negotiate_initialize(&request)?;
            record_protocol_version(result.protocol_version.as_str());
            Ok(discovery::for_client(
                result,
                request.capabilities.supports_tasks(),
            ))
        })
        .await
    }

    async fn ping(&self, context: RequestContext<RoleServer>) -> Result<(), McpError> {
        traced(request_span("ping", None, &context), async { Ok(()) }).await
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        traced(request_span("tasks/get", None, &context), async {
            self.tasks.get(&request.task_id, tasks::owner_of(&context))
        })
        .await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        traced(request_span("tasks/update", None, &context), async {
            self.tasks.update(
                &request.task_id,
                tasks::owner_of(&context),
                &request.input_responses,
            )
        })
        .await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        traced(request_span("tasks/cancel", None, &context), async {
            self.tasks
                .cancel(&request.task_id, tasks::owner_of(&context))
        })
        .await
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(listen::accepted_filter(self, requested))
    }

    /// Its span lasts as long as the subscription's stream.
    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), McpError> {
        let span = request_span("subscriptions/listen", None, subscription.request_context());
        traced(span, listen::listen(self, subscription)).await
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        listen::notify_legacy_session(self, context.peer);
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        traced(request_span("tools/list", None, &context), async {
            // A caller with a token sees only the tools its scopes allow; such a
            // page is the caller's own, not cacheable by others.
            let caller = caller::caller_of(&context);
            let mut page: ListToolsResult = self.list_page(
                request,
                ToolSet::page,
                ExposedTool::name,
                convert::mcp_tool,
                |_, tool| caller::may_use(caller.as_ref(), tool.scopes()),
            )?;
            if caller.is_some() {
                page.cache_scope = Some(rmcp::model::CacheScope::Private);
            }
            Ok(page)
        })
        .await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let span = request_span("tools/call", Some(&request.name), &context);
        traced(span, tools::call(self, request, context)).await
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        traced(request_span("prompts/list", None, &context), async {
            let caller = caller::caller_of(&context);
            let mut page: ListPromptsResult = self.list_page(
                request,
                ToolSet::prompt_page,
                ExposedPrompt::name,
                convert::mcp_prompt,
                |set, prompt| {
                    caller::may_use(caller.as_ref(), set.plugin_scopes(prompt.plugin().name()))
                },
            )?;
            if caller.is_some() {
                page.cache_scope = Some(rmcp::model::CacheScope::Private);
            }
            Ok(page)
        })
        .await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let span = request_span("prompts/get", Some(&request.name), &context);
        traced(span, prompts::get(self, request, context)).await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        traced(request_span("resources/list", None, &context), async {
            let caller = caller::caller_of(&context);
            let mut page: ListResourcesResult = self.list_page(
                request,
                ToolSet::resource_page,
                ExposedResource::uri,
                convert::mcp_resource,
                |set, resource| {
                    caller::may_use(caller.as_ref(), set.plugin_scopes(resource.plugin().name()))
                },
            )?;
            if caller.is_some() {
                page.cache_scope = Some(rmcp::model::CacheScope::Private);
            }
            Ok(page)
        })
        .await
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        traced(
            request_span("resources/templates/list", None, &context),
            async {
                let caller = caller::caller_of(&context);
                let mut page: ListResourceTemplatesResult = self.list_page(
                    request,
                    ToolSet::template_page,
                    |template: &ExposedTemplate| template.template().as_str(),
                    convert::mcp_template,
                    |set, template| {
                        caller::may_use(
                            caller.as_ref(),
                            set.plugin_scopes(template.plugin().name()),
                        )
                    },
                )?;
                if caller.is_some() {
                    page.cache_scope = Some(rmcp::model::CacheScope::Private);
                }
                Ok(page)
            },
        )
        .await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let span = request_span("resources/read", Some(&request.uri), &context);
        traced(span, resources::read(self, request, context)).await
    }

    #[allow(deprecated)] // legacy only; 2026-07-28 clients use listen
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let span = request_span("resources/subscribe", Some(&request.uri), &context);
        traced(span, async {
            resources::subscribe(self, request.uri, context.peer)
        })
        .await
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let span = request_span("resources/unsubscribe", Some(&request.uri), &context);
        traced(span, async {
            resources::unsubscribe(self, &request.uri);
            Ok(())
        })
        .await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let span = request_span("completion/complete", None, &context);
        traced(span, completion::complete(self, request, &context)).await
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        traced(request_span("logging/setLevel", None, &context), async {
            logging::set_level(self, request.level);
            Ok(())
        })
        .await
    }
}
