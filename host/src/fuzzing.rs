//! Entry points for the fuzz targets in `fuzz/` (`cargo xtask fuzz`): not an
//! API, hidden from the docs, and free to change with the targets.
//!
//! The targets drive the code that reads untrusted input. Most of it is public
//! already; what is not (the plain-component converter, a seal
//! with a fixed key) is re-exported or wrapped here, so the rest of the crate
//! keeps its visibility. Asynchronous entry points run on one current-thread
//! runtime per fuzzing thread.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use rmcp::transport::Transport;
use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;
use tower_service::Service;
use wasmtime::component::Val;

pub use crate::client_input::seal::{Binding, Carried, StateRejected, StateSeal};
pub use crate::docs::{PackageDocs, TypeDocs, custom_sections, with_section};
pub use crate::http::{HttpOptions, OriginPolicy};
pub use crate::manifest::{
    Manifest, ManifestError, Resolved, parse as parse_manifest, resolve as resolve_manifest,
};
pub use crate::runtime::plain::ConvertError;
use crate::runtime::plain::convert::Budget;
pub use crate::runtime::plain::schema::{input_schema, output_schema, type_schema};
pub use crate::runtime::plain::shape::{Case, Field, Named, Signature, WitType};
pub use crate::runtime::{CallLimits, Ceilings};
pub use crate::stdio::well_formed_request;
pub use rmcp::model::ClientJsonRpcMessage;

use crate::metrics::Metrics;
use crate::protocol::SUPPORTED_VERSIONS;
use crate::registry::{Registry, ToolSet};
use crate::server::{ServerOptions, WharfServer};
use crate::stdio::LineTransport;

/// Runs `future` to completion on this thread's fuzzing runtime.
pub fn block_on<F: Future>(future: F) -> F::Output {
    thread_local! {
        static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a current-thread runtime");
    }
    RUNTIME.with(|runtime| runtime.block_on(future))
}

/// What the stdio transport made of an input stream.
#[derive(Debug)]
pub struct StdioOutcome {
    /// The messages handed on to rmcp, in order.
    pub handed: Vec<ClientJsonRpcMessage>,
    /// Everything the transport wrote back itself (its error replies).
    pub written: Vec<u8>,
}

/// Feeds `input` to the stdio transport (lines of at most `max_line_bytes`)
/// and collects what it hands on and what it answers itself.
pub fn screen_stdio(input: &[u8], max_line_bytes: usize) -> StdioOutcome {
    block_on(async {
        let (writer, mut reader) = tokio::io::duplex(64 << 10);
        let read_back = tokio::spawn(async move {
            let mut written = Vec::new();
            let _ = reader.read_to_end(&mut written).await;
            written
        });
        let mut transport = LineTransport::new(
            std::io::Cursor::new(input.to_vec()),
            writer,
            max_line_bytes,
            SUPPORTED_VERSIONS,
        );
        let mut handed = Vec::new();
        while let Some(message) = Transport::<rmcp::RoleServer>::receive(&mut transport).await {
            handed.push(message);
        }
        // Dropping the transport ends its writer task, which closes the pipe.
        drop(transport);
        let written = read_back.await.expect("the read-back task");
        StdioOutcome { handed, written }
    })
}

/// Wharf's HTTP router in process, serving no plugins: what one request gets.
pub struct HttpHarness {
    server: WharfServer,
    options: HttpOptions,
}

impl HttpHarness {
    pub fn new(options: HttpOptions) -> Self {
        let registry = Arc::new(Registry::new(ToolSet::new(Vec::new())));
        Self {
            server: WharfServer::new(registry, ServerOptions::default()),
            options,
        }
    }

    /// The response to `request` (the body read for at most `read_for`), from a fresh router whose sessions and streams end after.
    pub fn answer(&self, request: Request, read_for: Duration) -> (Response<()>, Vec<u8>) {
        block_on(async {
            let streams = CancellationToken::new();
            let server = self.server.clone();
            let mut router = crate::http::router(
                move || server.for_session(),
                Arc::new(Metrics::default()),
                &self.options,
                streams.clone(),
            );
            let response = match router.call(request).await {
                Ok(response) => response,
                Err(never) => match never {},
            };
            let (parts, body) = response.into_parts();
            let body = tokio::time::timeout(read_for, axum::body::to_bytes(body, 1 << 22))
                .await
                .ok()
                .and_then(Result::ok)
                .map(|bytes| bytes.to_vec())
                .unwrap_or_default();
            streams.cancel();
            (Response::from_parts(parts, ()), body)
        })
    }
}

/// An empty request body, for building requests in a target.
pub fn body(bytes: Vec<u8>) -> Body {
    Body::from(bytes)
}

/// The host-memory budget of one conversion: the default per-call memory
/// limit, as a call with no manifest gets.
const CONVERSION_BUDGET: usize = 256 << 20;

/// The arguments of `sig` from a JSON object, as a call converts them.
pub fn params_from_json(
    sig: &Signature,
    args: &serde_json::Value,
) -> Result<Vec<Val>, ConvertError> {
    crate::runtime::plain::convert::params_from_json(sig, args, &mut Budget::new(CONVERSION_BUDGET))
}

/// One value of type `ty` from JSON, as a call converts an argument.
pub fn from_json(ty: &WitType, value: &serde_json::Value) -> Result<Val, ConvertError> {
    crate::runtime::plain::convert::from_json(ty, value, "", &mut Budget::new(CONVERSION_BUDGET))
}

/// A component value of type `ty` as JSON, as a call converts its result.
pub fn to_json(ty: &WitType, val: &Val) -> Result<serde_json::Value, ConvertError> {
    crate::runtime::plain::convert::to_json(ty, val)
}

/// A seal with a fixed key (the server's is random), so a crash reproduces.
pub fn seal_with_key(key: &[u8; 32]) -> StateSeal {
    StateSeal::with_key(key, crate::client_input::seal::STATE_TTL)
}
