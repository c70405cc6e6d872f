//! Clients of the HTTP server: request channels in both eras, and the
//! streams that watch for list changes (`subscriptions/listen` POSTs and a
//! legacy session's GET stream).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use wharf_wire::http::{Connection, EventStream};

use crate::ledger::Ledger;
use crate::listeners::Listener;
use crate::stdio::PATIENCE;
use crate::workload::{Answer, Channel, Era, params_in};

/// One keep-alive connection (reopened after a failure), in one era.
pub struct HttpChannel {
    addr: SocketAddr,
    era: Era,
    label: &'static str,
    connection: Option<Connection>,
    ledger: Arc<Ledger>,
    next_id: u64,
}

impl HttpChannel {
    /// A channel whose ids start at `first_id` (so that no two share one).
    pub fn new(
        addr: SocketAddr,
        era: Era,
        label: &'static str,
        ledger: Arc<Ledger>,
        first_id: u64,
    ) -> Self {
        Self {
            addr,
            era,
            label,
            connection: None,
            ledger,
            next_id: first_id,
        }
    }

    async fn connected(&mut self) -> Result<&mut Connection> {
        if self.connection.is_none() {
            let mut connection = Connection::open(self.addr).await?;
            if self.era == Era::Legacy {
                connection.handshake().await?;
            }
            self.connection = Some(connection);
        }
        Ok(self.connection.as_mut().expect("connected"))
    }
}

impl Channel for HttpChannel {
    fn era(&self) -> Era {
        self.era
    }

    fn label(&self) -> &'static str {
        self.label
    }

    async fn request(&mut self, method: &str, name: &str, params: Value) -> Option<Answer> {
        self.next_id += 1;
        let id = self.next_id;
        let token = params["_meta"].get("progressToken").cloned();
        let body = serde_json::to_vec(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        )
        .expect("serialisable");
        self.ledger.sent(self.label);
        let reply = async {
            let connection = self.connected().await?;
            connection.request(&body, method, name).await
        };
        let reply = match tokio::time::timeout(PATIENCE, reply).await {
            Ok(Ok(reply)) => reply,
            outcome => {
                self.connection = None;
                let why = match outcome {
                    Ok(Err(error)) => format!("{error:#}"),
                    _ => format!("no answer within {PATIENCE:?}"),
                };
                self.ledger
                    .unanswered(self.label, format!("id {id} ({method} {name}): {why}"));
                return None;
            }
        };
        let messages = match reply.messages() {
            Ok(messages) => messages,
            Err(error) => {
                let body = String::from_utf8_lossy(&reply.body);
                let detail = format!("id {id}: HTTP {}: {error:#}: {body}", reply.status);
                self.ledger.unanswered(self.label, detail);
                return None;
            }
        };
        let mut answers = Vec::new();
        let mut progress = Vec::new();
        for message in messages {
            if message.get("method").is_none() {
                if message["id"] == id {
                    answers.push(message);
                } else {
                    let detail = format!("id {id} was answered with another id: {message}");
                    self.ledger.doubled(self.label, detail);
                }
            } else if message["method"] == "notifications/progress" {
                if Some(&message["params"]["progressToken"]) == token.as_ref() {
                    progress.push(message["params"]["progress"].as_f64().unwrap_or(-1.0));
                } else {
                    self.ledger.stray_progress(self.label, &message);
                }
            }
        }
        let mut answers = answers.into_iter();
        let Some(message) = answers.next() else {
            let detail = format!(
                "id {id}: HTTP {} without a response: {}",
                reply.status,
                String::from_utf8_lossy(&reply.body)
            );
            self.ledger.unanswered(self.label, detail);
            return None;
        };
        self.ledger.answered(self.label);
        for extra in answers {
            self.ledger
                .doubled(self.label, format!("id {id} answered again: {extra}"));
        }
        if reply.status != 200 {
            // An answer, but in an HTTP error: the verdict will say so.
            let detail = format!("id {id}: HTTP {}: {message}", reply.status);
            self.ledger.failure(self.label, "HTTP status", detail);
        }
        Some(Answer { message, progress })
    }
}

/// A stream that counts `tools/list_changed` for `listener` until the soak
/// ends (`stopping`); a stream that ends before is a failure.
pub struct Watch {
    pub listener: Arc<Listener>,
    pub ledger: Arc<Ledger>,
    pub stopping: Arc<AtomicBool>,
}

impl Watch {
    /// Opens a `subscriptions/listen` stream (id `subscription`) and counts
    /// on it in a task; returns once it is acknowledged.
    pub async fn listen(self, addr: SocketAddr, subscription: &str) -> Result<()> {
        let body = serde_json::to_vec(&json!({
            "jsonrpc": "2.0", "id": subscription, "method": "subscriptions/listen",
            "params": params_in(Era::Modern,
                                json!({"notifications": {"toolsListChanged": true}}),
                                json!({})),
        }))?;
        let connection = Connection::open(addr).await?;
        let (status, mut stream) = connection
            .open_stream(&body, "subscriptions/listen", "")
            .await?;
        if status != 200 {
            bail!("subscriptions/listen: HTTP {status}");
        }
        let ack = stream.next_event().await?.context("no acknowledgement")?;
        if ack["method"] != "notifications/subscriptions/acknowledged" {
            bail!("subscriptions/listen began with {ack}");
        }
        let subscription = json!(subscription);
        tokio::task::spawn_local(self.count(stream, move |message| {
            message["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == subscription
        }));
        Ok(())
    }

    /// Opens a legacy session and its GET stream, and counts on it in a task.
    pub async fn session_stream(self, addr: SocketAddr) -> Result<()> {
        let mut connection = Connection::open(addr).await?;
        connection.handshake().await?;
        let (status, stream) = connection.open_get_stream().await?;
        if status != 200 {
            bail!("the session's GET stream: HTTP {status}");
        }
        tokio::task::spawn_local(self.count(stream, |_| true));
        Ok(())
    }

    /// Counts the list changes `ours` accepts until the stream ends.
    async fn count(self, mut stream: EventStream, ours: impl Fn(&Value) -> bool) {
        let name = self.listener.name;
        let ended = loop {
            match stream.next_event().await {
                Ok(Some(message)) if message["method"] == "notifications/tools/list_changed" => {
                    if ours(&message) {
                        self.listener.saw();
                    } else {
                        let detail = format!("another subscription's: {message}");
                        self.ledger.failure(name, "list_changed", detail);
                    }
                }
                Ok(Some(_)) => {}
                Ok(None) => break "the stream ended".to_string(),
                Err(error) => break format!("{error:#}"),
            }
        };
        self.listener.closed();
        if !self.stopping.load(Ordering::Relaxed) {
            self.ledger.failure(name, "stream", ended);
        }
    }
}
