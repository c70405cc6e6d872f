//! The stdio transport: newline-delimited JSON-RPC on stdin and stdout.
//!
//! rmcp's own line codec drops malformed JSON without a reply and stops serving
//! for good on a stray client response or on a notification before the first
//! request (rmcp gap, see docs/protocol.md). This transport frames and screens every line
//! itself: malformed lines get `-32700`/`-32600`/`-32602` replies, responses and
//! early notifications are dropped with a log line, and only well-formed client
//! messages reach rmcp. Everything written to stdout goes through one writer task,
//! so lines never interleave. Requests are screened against the connection too:
//! an id already in flight or a late `initialize` is refused here, because
//! rmcp would lose an answer or change the connection's era.
//!
//! Here is [`LineTransport`], rmcp's [`Transport`] over a reader and a writer;
//! the rooms beside it:
//! - `lines`: framing, reading lines with a length cap and writing answers;
//! - `screen`: the verdict on each line (reply, drop, or hand to rmcp);
//! - `in_flight`: the ids of requests rmcp is serving (no duplicates);
//! - `lifecycle`: how the connection started (`initialize` or stateless);
//! - `busy_poll`: polling stdin for a moment before the stdio thread sleeps;
//! - `task_ids`: a listen request's `taskIds`, carried past rmcp.

use rmcp::RoleServer;
use rmcp::model::{
    ClientJsonRpcMessage, ErrorData, ProtocolVersion, RequestId, ServerJsonRpcMessage,
};
use rmcp::transport::Transport;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufRead, AsyncWrite};

use crate::task_subscriptions::TaskDirectory;

mod busy_poll;
mod in_flight;
mod lifecycle;
mod lines;
mod screen;
mod task_ids;

pub use busy_poll::{BusyPoll, DEFAULT_BUSY_POLL_US};
pub use lines::DEFAULT_MAX_LINE_BYTES;
pub use screen::well_formed_request;

use in_flight::InFlight;
use lifecycle::Lifecycle;
use lines::{Line, LineReader, LineWriter};

/// A screened JSON-RPC stream over any reader and writer (stdin/stdout in
/// production, pipes in tests).
pub struct LineTransport<R> {
    reader: LineReader<R>,
    out: LineWriter,
    /// Ids of requests Wharf sent to a legacy client (elicitation, sampling,
    /// roots) and awaits; only responses to these reach rmcp.
    awaited: Arc<Mutex<HashSet<RequestId>>>,
    /// Ids of the client's requests that rmcp serves and has not answered.
    in_flight: InFlight,
    /// The lifecycle rmcp's main loop runs, once it has left its pre-lifecycle
    /// loop (where a notification is fatal).
    lifecycle: Option<Lifecycle>,
    supported: &'static [ProtocolVersion],
    /// The most JSON values a line may hold (see [`crate::json_values`]).
    max_json_values: usize,
    /// Which tasks exist, for listen requests naming `taskIds`; without it
    /// their task ids are ignored.
    task_directory: Option<Arc<dyn TaskDirectory>>,
    /// The task ids granted to listen requests not acknowledged yet.
    task_acks: HashMap<RequestId, Vec<String>>,
}

impl<R: AsyncBufRead + Unpin + Send + 'static> LineTransport<R> {
    /// Starts the writer task on `writer` and reads messages from `reader`.
    pub fn new<W: AsyncWrite + Unpin + Send + 'static>(
        reader: R,
        writer: W,
        max_line_bytes: usize,
        supported: &'static [ProtocolVersion],
    ) -> Self {
        Self {
            reader: LineReader::new(reader, max_line_bytes),
            out: LineWriter::spawn(writer),
            awaited: Arc::default(),
            in_flight: InFlight::default(),
            lifecycle: None,
            supported,
            max_json_values: crate::json_values::DEFAULT_MAX_JSON_VALUES,
            task_directory: None,
            task_acks: HashMap::new(),
        }
    }

    /// Serves a listen request's `taskIds` with the tasks `directory` holds.
    pub fn with_task_directory(mut self, directory: Arc<dyn TaskDirectory>) -> Self {
        self.task_directory = Some(directory);
        self
    }

    /// Refuses lines holding more than `limit` JSON values (-32600).
    pub fn with_max_json_values(mut self, limit: usize) -> Self {
        self.max_json_values = limit;
        self
    }
}

impl<R> LineTransport<R> {
    /// Queues an answer of Wharf's own (an error for a screened line); one
    /// that cannot be written is dropped.
    fn reply(&self, message: ServerJsonRpcMessage) {
        let _ = self.out.queue(&message);
    }
}

impl<R: AsyncBufRead + Unpin + Send + 'static> Transport<RoleServer> for LineTransport<R> {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        match &item {
            ServerJsonRpcMessage::Request(request) => {
                self.awaited
                    .lock()
                    .expect("awaited lock")
                    .insert(request.id.clone());
            }
            // Every answer rmcp gives passes here; the id is free again.
            ServerJsonRpcMessage::Response(response) => self.in_flight.end(&response.id),
            ServerJsonRpcMessage::Error(error) => {
                if let Some(id) = &error.id {
                    self.in_flight.end(id);
                }
            }
            ServerJsonRpcMessage::Notification(_) => {
                if let Some(acknowledgement) = self.acknowledgement(&item) {
                    return std::future::ready(self.out.queue(&acknowledgement));
                }
            }
        }
        // Serialised and queued now, so messages keep the order rmcp sent them in.
        std::future::ready(self.out.queue(&item))
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            match self.reader.next_line().await {
                Ok(Some(Line::Complete(line))) => {
                    if let Some(message) = self.screen(&line) {
                        return Some(message);
                    }
                }
                Ok(Some(Line::TooLong { start })) => self.reply(ServerJsonRpcMessage::error(
                    ErrorData::invalid_request(
                        format!(
                            "Invalid Request: message longer than {} bytes",
                            self.reader.max
                        ),
                        None,
                    ),
                    crate::jsonrpc_id::recover(&start),
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
