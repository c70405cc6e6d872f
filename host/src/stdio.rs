//! The stdio transport: newline-delimited JSON-RPC on stdin and stdout.
//!
//! rmcp's own line codec drops malformed JSON without a reply and stops serving
//! for good on a stray client response or on a notification before the first
//! request (rmcp gap, see docs/protocol.md). This transport frames and screens every line
//! itself: malformed lines get `-32700`/`-32600`/`-32602` replies, responses and
//! early notifications are dropped with a log line, and only well-formed client
//! messages reach rmcp. Everything written to stdout goes through one writer task,
//! so lines never interleave.

use rmcp::RoleServer;
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, ErrorData, GetMeta, ProtocolVersion, RequestId,
    ServerJsonRpcMessage,
};
use rmcp::transport::Transport;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use crate::server::{REMOVED_IN_STATELESS, removed_method_message};
use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

mod busy_poll;
mod well_formed;

pub use busy_poll::{BusyPoll, DEFAULT_BUSY_POLL_US};

/// Largest accepted message; a longer line is discarded and answered with `-32600`.
pub const DEFAULT_MAX_LINE_BYTES: usize = 16 << 20;

/// Methods rmcp knows; a request for one whose params do not fit gets `-32602`.
const KNOWN_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "subscriptions/listen",
    "completion/complete",
    "logging/setLevel",
];

/// The request a line holds, if it is a plainly well-formed one for a method
/// rmcp knows: what the screen hands rmcp for a usual request (anything else
/// takes the full screen, which answers errors itself). For the overhead
/// benchmark.
#[doc(hidden)]
pub fn well_formed_request(line: &[u8]) -> Option<ClientJsonRpcMessage> {
    well_formed::request(line, KNOWN_METHODS)
}

/// A screened JSON-RPC stream over any reader and writer (stdin/stdout in
/// production, pipes in tests).
pub struct LineTransport<R> {
    reader: LineReader<R>,
    out: mpsc::UnboundedSender<Vec<u8>>,
    /// Ids of requests Wharf sent to a legacy client (elicitation, sampling,
    /// roots) and awaits; only responses to these reach rmcp.
    awaited: Arc<Mutex<HashSet<RequestId>>>,
    /// Whether rmcp has left its pre-lifecycle loop, where a notification is fatal.
    started: bool,
    supported: &'static [ProtocolVersion],
}

impl<R: AsyncBufRead + Unpin + Send + 'static> LineTransport<R> {
    /// Starts the writer task on `writer` and reads messages from `reader`.
    pub fn new<W: AsyncWrite + Unpin + Send + 'static>(
        reader: R,
        writer: W,
        max_line_bytes: usize,
        supported: &'static [ProtocolVersion],
    ) -> Self {
        let (out, rx) = mpsc::unbounded_channel();
        tokio::spawn(write_lines(writer, rx));
        Self {
            reader: LineReader::new(reader, max_line_bytes),
            out,
            awaited: Arc::default(),
            started: false,
            supported,
        }
    }

    fn reply(&self, message: ServerJsonRpcMessage) {
        if let Ok(mut line) = serde_json::to_vec(&message) {
            line.push(b'\n');
            let _ = self.out.send(line);
        }
    }

    /// Decides what to do with one line: pass it to rmcp, answer it, or drop it.
    fn screen(&mut self, line: &[u8]) -> Option<ClientJsonRpcMessage> {
        match classify(line) {
            Screened::Blank => None,
            Screened::Reply(id, error) => {
                tracing::debug!(code = error.code.0, "rejected a message: {}", error.message);
                self.reply(ServerJsonRpcMessage::error(error, id));
                None
            }
            Screened::Drop(why) => {
                tracing::warn!("ignored a message: {why}");
                None
            }
            Screened::Response(id, message) => {
                if self.awaited.lock().expect("awaited lock").remove(&id) {
                    return Some(*message);
                }
                tracing::warn!("ignored a message: a response (id {id}) to no request of Wharf's");
                None
            }
            Screened::Message(message) => {
                let message = *message;
                if let ClientJsonRpcMessage::Request(request) = &message
                    && REMOVED_IN_STATELESS.contains(&request.request.method())
                    && claims_stateless_era(&request.request)
                {
                    // rmcp would still answer these (ping even before the
                    // lifecycle starts).
                    self.reply(ServerJsonRpcMessage::error(
                        ErrorData::new(
                            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                            removed_method_message(request.request.method()),
                            None,
                        ),
                        Some(request.id.clone()),
                    ));
                    return None;
                }
                if !self.started {
                    match &message {
                        ClientJsonRpcMessage::Request(request) => {
                            self.started = starts_lifecycle(&request.request, self.supported);
                        }
                        _ => {
                            tracing::debug!("ignored a message before the first request");
                            return None;
                        }
                    }
                }
                Some(message)
            }
        }
    }
}

impl<R: AsyncBufRead + Unpin + Send + 'static> Transport<RoleServer> for LineTransport<R> {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let ServerJsonRpcMessage::Request(request) = &item {
            self.awaited
                .lock()
                .expect("awaited lock")
                .insert(request.id.clone());
        }
        // Serialised and queued now, so messages keep the order rmcp sent them in.
        let queued = serde_json::to_vec(&item)
            .map_err(std::io::Error::other)
            .and_then(|mut line| {
                line.push(b'\n');
                self.out
                    .send(line)
                    .map_err(|_| std::io::Error::from(std::io::ErrorKind::BrokenPipe))
            });
        std::future::ready(queued)
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            match self.reader.next_line().await {
                Ok(Some(Line::Complete(line))) => {
                    if let Some(message) = self.screen(&line) {
                        return Some(message);
                    }
                }
                Ok(Some(Line::TooLong)) => self.reply(ServerJsonRpcMessage::error(
                    ErrorData::invalid_request(
                        format!(
                            "Invalid Request: message longer than {} bytes",
                            self.reader.max
                        ),
                        None,
                    ),
                    None,
                )),
                Ok(None) => return None,
                Err(error) => {
                    tracing::error!("reading stdin failed: {error}");
                    return None;
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// Mirrors rmcp's pre-lifecycle rule: the first `initialize`, or the first request
/// other than `ping`/`server/discover` with complete `_meta` and a supported
/// version, starts the main loop. Until then a notification would end the server.
fn starts_lifecycle(request: &ClientRequest, supported: &[ProtocolVersion]) -> bool {
    match request {
        ClientRequest::InitializeRequest(_) => true,
        ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_) => false,
        other => {
            let meta = other.get_meta();
            meta.missing_required_keys(&ProtocolVersion::V_2026_07_28)
                .is_empty()
                && meta
                    .protocol_version()
                    .is_some_and(|version| supported.contains(&version))
        }
    }
}

/// Whether a request's `_meta` names the stateless revision or a later one.
fn claims_stateless_era(request: &ClientRequest) -> bool {
    request
        .get_meta()
        .protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// The verdict on one input line.
enum Screened {
    Blank,
    Message(Box<ClientJsonRpcMessage>),
    Reply(Option<RequestId>, ErrorData),
    Drop(String),
    /// A well-formed response, passed on only if Wharf awaits it.
    Response(RequestId, Box<ClientJsonRpcMessage>),
}

fn classify(line: &[u8]) -> Screened {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Screened::Blank;
    }
    if let Some(message) = well_formed::request(line, KNOWN_METHODS) {
        return Screened::Message(Box::new(message));
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(error) => {
            return Screened::Reply(
                None,
                ErrorData::parse_error(format!("Parse error: {error}"), None),
            );
        }
    };
    let Value::Object(object) = &value else {
        let why = if value.is_array() {
            "Invalid Request: batches are not supported; send one message per line"
        } else {
            "Invalid Request: a message must be a JSON object"
        };
        return Screened::Reply(None, ErrorData::invalid_request(why, None));
    };
    let id = match object.get("id") {
        None => None,
        Some(raw) => match serde_json::from_value::<RequestId>(raw.clone()) {
            Ok(id) if !raw.is_null() => Some(id),
            _ => {
                return Screened::Reply(
                    None,
                    ErrorData::invalid_request(
                        "Invalid Request: `id` must be a string or an integer",
                        None,
                    ),
                );
            }
        },
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Screened::Reply(
            id,
            ErrorData::invalid_request("Invalid Request: `jsonrpc` must be \"2.0\"", None),
        );
    }
    let method = match object.get("method") {
        Some(Value::String(method)) => method.clone(),
        Some(_) => {
            return Screened::Reply(
                id,
                ErrorData::invalid_request("Invalid Request: `method` must be a string", None),
            );
        }
        None if object.contains_key("result") || object.contains_key("error") => {
            let parsed = serde_json::from_value::<ClientJsonRpcMessage>(value.clone());
            return match (id, parsed) {
                (Some(id), Ok(message)) => Screened::Response(id, Box::new(message)),
                (id, _) => Screened::Drop(format!(
                    "a malformed response (id {})",
                    id.map(|id| id.to_string()).unwrap_or_else(|| "none".into())
                )),
            };
        }
        None => {
            return Screened::Reply(
                id,
                ErrorData::invalid_request("Invalid Request: `method` is missing", None),
            );
        }
    };
    if let Some(params) = object.get("params")
        && !params.is_object()
    {
        return match id {
            Some(id) => Screened::Reply(
                Some(id),
                ErrorData::invalid_params("Invalid params: `params` must be an object", None),
            ),
            None => Screened::Drop(format!("notification {method} with non-object params")),
        };
    }
    let params = object.get("params").cloned();
    match serde_json::from_value::<ClientJsonRpcMessage>(value) {
        // rmcp files a known method whose params do not fit under "custom request",
        // which would answer "method not found"; it is a params problem.
        Ok(ClientJsonRpcMessage::Request(request))
            if matches!(request.request, ClientRequest::CustomRequest(_))
                && KNOWN_METHODS.contains(&method.as_str()) =>
        {
            Screened::Reply(
                Some(request.id),
                ErrorData::invalid_params(
                    format!(
                        "Invalid params for {method}: {}",
                        params_problem(&method, params)
                    ),
                    None,
                ),
            )
        }
        Ok(message) => Screened::Message(Box::new(message)),
        Err(error) => match id {
            None => Screened::Drop(format!("notification {method} is malformed: {error}")),
            Some(id) if KNOWN_METHODS.contains(&method.as_str()) => Screened::Reply(
                Some(id),
                ErrorData::invalid_params(format!("Invalid params for {method}: {error}"), None),
            ),
            Some(id) => Screened::Reply(
                Some(id),
                ErrorData::invalid_request(format!("Invalid Request: {error}"), None),
            ),
        },
    }
}

/// Why `params` do not fit `method`, in serde's words where we can tell.
fn params_problem(method: &str, params: Option<Value>) -> String {
    use rmcp::model::{
        CallToolRequestParams, CompleteRequestParams, GetPromptRequestParams,
        InitializeRequestParams, PaginatedRequestParams, ReadResourceRequestParams,
        SubscriptionsListenRequestParams,
    };
    fn check<T: serde::de::DeserializeOwned>(params: Option<Value>) -> Option<String> {
        serde_json::from_value::<T>(params.unwrap_or(Value::Null))
            .err()
            .map(|e| e.to_string())
    }
    let problem = match method {
        "tools/call" => check::<CallToolRequestParams>(params),
        "initialize" => check::<InitializeRequestParams>(params),
        "resources/read" => check::<ReadResourceRequestParams>(params),
        "prompts/get" => check::<GetPromptRequestParams>(params),
        "completion/complete" => check::<CompleteRequestParams>(params),
        "subscriptions/listen" => check::<SubscriptionsListenRequestParams>(params),
        "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list" => {
            check::<PaginatedRequestParams>(params)
        }
        _ => None,
    };
    problem.unwrap_or_else(|| "they do not match the method's schema".to_string())
}

/// One line read from the input.
enum Line {
    Complete(Vec<u8>),
    TooLong,
}

/// Reads `\n`-terminated lines with a length cap, without requiring UTF-8 (bad
/// bytes must reach the parser so they can be answered).
struct LineReader<R> {
    inner: R,
    max: usize,
    pending: Vec<u8>,
    discarding: bool,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    fn new(inner: R, max: usize) -> Self {
        Self {
            inner,
            max,
            pending: Vec::new(),
            discarding: false,
        }
    }

    async fn next_line(&mut self) -> std::io::Result<Option<Line>> {
        loop {
            let buf = self.inner.fill_buf().await?;
            if buf.is_empty() {
                // End of input: a last line without a newline still counts.
                if self.discarding {
                    self.discarding = false;
                    return Ok(Some(Line::TooLong));
                }
                if self.pending.is_empty() {
                    return Ok(None);
                }
                return Ok(Some(Line::Complete(std::mem::take(&mut self.pending))));
            }
            let (chunk, newline) = match buf.iter().position(|&b| b == b'\n') {
                Some(at) => (&buf[..at], true),
                None => (buf, false),
            };
            let used = chunk.len() + usize::from(newline);
            if !self.discarding {
                if self.pending.len() + chunk.len() > self.max {
                    self.discarding = true;
                    self.pending = Vec::new();
                } else {
                    self.pending.extend_from_slice(chunk);
                }
            }
            self.inner.consume(used);
            if newline {
                if std::mem::take(&mut self.discarding) {
                    return Ok(Some(Line::TooLong));
                }
                let mut line = std::mem::take(&mut self.pending);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(Some(Line::Complete(line)));
            }
        }
    }
}

/// Writes queued lines in order, flushing after each burst.
async fn write_lines<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut lines: mpsc::UnboundedReceiver<Vec<u8>>,
) {
    while let Some(line) = lines.recv().await {
        if writer.write_all(&line).await.is_err() {
            return;
        }
        while let Ok(line) = lines.try_recv() {
            if writer.write_all(&line).await.is_err() {
                return;
            }
        }
        if writer.flush().await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(line: &str) -> (Option<RequestId>, i32, String) {
        match classify(line.as_bytes()) {
            Screened::Reply(id, error) => (id, error.code.0, error.message.into_owned()),
            _ => panic!("expected a reply for {line}"),
        }
    }

    #[test]
    fn malformed_json_is_a_parse_error() {
        let (id, code, message) = reply("{not json");
        assert_eq!((id, code), (None, -32700));
        assert!(message.starts_with("Parse error: "), "{message}");
        assert_eq!(reply("\u{1}").1, -32700);
        assert!(matches!(classify(b"\xff\xfe{}"), Screened::Reply(None, e) if e.code.0 == -32700));
    }

    #[test]
    fn shapes_that_are_not_requests_are_invalid() {
        assert_eq!(reply("[]").1, -32600);
        assert_eq!(reply("42").1, -32600);
        assert_eq!(
            reply(r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#),
            (
                Some(RequestId::Number(1)),
                -32600,
                "Invalid Request: `jsonrpc` must be \"2.0\"".into()
            )
        );
        assert_eq!(reply(r#"{"jsonrpc":"2.0","id":1}"#).1, -32600);
        assert_eq!(
            reply(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#).1,
            -32600
        );
        assert_eq!(
            reply(r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#).1,
            -32600
        );
        assert_eq!(reply(r#"{"jsonrpc":"2.0","id":2,"method":7}"#).1, -32600);
    }

    #[test]
    fn bad_params_of_a_known_method_are_invalid_params() {
        let (id, code, message) =
            reply(r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":5}}"#);
        assert_eq!((id, code), (Some(RequestId::String("a".into())), -32602));
        assert_eq!(
            message,
            "Invalid params for tools/call: invalid type: integer `5`, expected a string"
        );
        let (_, code, message) =
            reply(r#"{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"arguments":"x"}}"#);
        assert_eq!(code, -32602);
        assert!(
            message.starts_with("Invalid params for tools/call: "),
            "{message}"
        );
        let (_, code, message) =
            reply(r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":[1]}"#);
        assert_eq!(
            (code, message.as_str()),
            (-32602, "Invalid params: `params` must be an object")
        );
    }

    #[test]
    fn responses_are_screened_and_requests_pass() {
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":6,"result":{}}"#),
            Screened::Response(RequestId::Number(6), _)
        ));
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","result":{}}"#),
            Screened::Drop(why) if why == "a malformed response (id none)"
        ));
        assert!(matches!(classify(b"   "), Screened::Blank));
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#),
            Screened::Message(m) if matches!(*m, ClientJsonRpcMessage::Request(_))
        ));
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":1,"method":"no/such"}"#),
            Screened::Message(m) if matches!(*m, ClientJsonRpcMessage::Request(_))
        ));
    }

    #[tokio::test]
    async fn only_responses_to_wharfs_own_requests_reach_rmcp() {
        let mut transport = LineTransport::new(
            &b""[..],
            tokio::io::sink(),
            1024,
            &[ProtocolVersion::V_2025_11_25],
        );
        let response = br#"{"jsonrpc":"2.0","id":6,"result":{"action":"decline"}}"#;
        assert!(transport.screen(response).is_none(), "not awaited: dropped");
        transport
            .awaited
            .lock()
            .unwrap()
            .insert(RequestId::Number(6));
        assert!(matches!(
            transport.screen(response),
            Some(ClientJsonRpcMessage::Response(_))
        ));
        assert!(transport.screen(response).is_none(), "answered once only");
    }

    #[tokio::test]
    async fn long_lines_are_discarded_whole() {
        let input: &[u8] = b"12345678901\n{}\nlast";
        let mut reader = LineReader::new(input, 8);
        assert!(matches!(
            reader.next_line().await.unwrap(),
            Some(Line::TooLong)
        ));
        assert!(matches!(reader.next_line().await.unwrap(), Some(Line::Complete(l)) if l == b"{}"));
        assert!(
            matches!(reader.next_line().await.unwrap(), Some(Line::Complete(l)) if l == b"last")
        );
        assert!(reader.next_line().await.unwrap().is_none());
    }
}
