//! A `wharf serve` process driven over its stdin and stdout by many client
//! tasks at once: requests are pipelined, and one reader task routes each
//! line to the request waiting for it.
//!
//! Strategy: the peer owns the pipe's writing end behind an async mutex (a
//! line is written whole) and a table of pending requests behind a plain
//! mutex; the reader task, the only one reading stdout, removes a request's
//! entry when its answer comes and sends it the answer. An answer whose id
//! is no longer (or never was) pending is counted as doubled; ids still
//! pending when the server closes are counted as unanswered.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::oneshot;

use crate::ledger::Ledger;
use crate::listeners::Listener;
use crate::workload::{Answer, Channel, Era, params_in};

/// How long a request may wait for its answer before the client moves on
/// (the answer is still expected: it is counted when it comes, or counted
/// unanswered when the server closes).
pub const PATIENCE: Duration = Duration::from_secs(120);

/// The id of the stdio `subscriptions/listen` request.
const LISTEN_ID: &str = "soak-listen";

/// A request waiting for its answer.
struct Pending {
    answer: oneshot::Sender<Answer>,
    /// Its progress token, if it has one.
    token: Option<String>,
}

#[derive(Default)]
struct Table {
    pending: HashMap<u64, Pending>,
    answered: HashSet<u64>,
    /// Progress values by token, for requests still pending.
    progress: HashMap<String, Vec<f64>>,
    /// The listen stream was acknowledged.
    acknowledged: bool,
    /// The server closed its stdout: nothing more will be answered.
    closed: bool,
    /// The soak closed stdin: the server is expected to close stdout.
    closing: bool,
}

/// One server over stdio, in one era.
pub struct StdioPeer {
    label: &'static str,
    era: Era,
    stdin: tokio::sync::Mutex<Option<ChildStdin>>,
    table: Mutex<Table>,
    next_id: AtomicU64,
    ledger: Arc<Ledger>,
    listener: Arc<Listener>,
}

impl StdioPeer {
    /// Starts the reader of `stdout`; notifications go to `listener`.
    pub fn new(
        label: &'static str,
        era: Era,
        stdin: ChildStdin,
        stdout: ChildStdout,
        ledger: Arc<Ledger>,
        listener: Arc<Listener>,
    ) -> Arc<Self> {
        let peer = Arc::new(Self {
            label,
            era,
            stdin: tokio::sync::Mutex::new(Some(stdin)),
            table: Mutex::default(),
            next_id: AtomicU64::new(1),
            ledger,
            listener,
        });
        let reader = peer.clone();
        tokio::task::spawn_local(async move {
            let mut lines = BufReader::new(stdout).lines();
            loop {
                match lines.next_line().await {
                    Ok(Some(line)) => reader.route(&line),
                    Ok(None) => break,
                    Err(error) => {
                        reader
                            .ledger
                            .failure(reader.label, "stdout", error.to_string());
                        break;
                    }
                }
            }
            reader.listener.closed();
            let closing = {
                let mut table = reader.table.lock().expect("table");
                table.closed = true;
                table.closing
            };
            if !closing {
                let detail = "the server closed its stdout".to_string();
                reader.ledger.failure(reader.label, "stdout", detail);
            }
            reader.count_unanswered();
        });
        peer
    }

    /// Opens the session: `initialize` (legacy) or a `subscriptions/listen`
    /// stream (2026-07-28), and waits until it is in place.
    pub async fn open(self: &Arc<Self>) -> Result<()> {
        match self.era {
            Era::Legacy => {
                let params = json!({
                    "protocolVersion": wharf_wire::LEGACY,
                    "capabilities": {},
                    "clientInfo": {"name": "wharf-soak", "version": "0"}
                });
                let answer = self
                    .channel()
                    .request("initialize", "", params)
                    .await
                    .context("no answer to initialize")?;
                if answer.message.get("result").is_none() {
                    bail!("initialize: {}", answer.message);
                }
                self.write(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                    .await?;
            }
            Era::Modern => {
                let params = params_in(
                    Era::Modern,
                    json!({"notifications": {"toolsListChanged": true}}),
                    json!({}),
                );
                self.write(&json!({"jsonrpc": "2.0", "id": LISTEN_ID,
                                   "method": "subscriptions/listen", "params": params}))
                    .await?;
                let deadline = tokio::time::Instant::now() + PATIENCE;
                while !self.table.lock().expect("table").acknowledged {
                    if tokio::time::Instant::now() > deadline {
                        bail!("the listen stream was never acknowledged");
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
        }
        Ok(())
    }

    /// A handle for one client task.
    pub fn channel(self: &Arc<Self>) -> StdioChannel {
        StdioChannel { peer: self.clone() }
    }

    /// Closes stdin: the server then exits, and its reader counts any
    /// request still waiting as unanswered.
    pub async fn close(&self) {
        self.table.lock().expect("table").closing = true;
        drop(self.stdin.lock().await.take());
    }

    /// Counts the requests still waiting as unanswered.
    fn count_unanswered(&self) {
        let mut table = self.table.lock().expect("table");
        let mut ids: Vec<u64> = table.pending.drain().map(|(id, _)| id).collect();
        ids.sort_unstable();
        for id in ids {
            self.ledger.unanswered(self.label, format!("id {id}"));
        }
    }

    async fn write(&self, message: &Value) -> Result<()> {
        let mut line = serde_json::to_vec(message)?;
        line.push(b'\n');
        let mut stdin = self.stdin.lock().await;
        let stdin = stdin.as_mut().context("stdin is closed")?;
        stdin.write_all(&line).await?;
        stdin.flush().await?;
        Ok(())
    }

    /// Handles one line from the server.
    fn route(&self, line: &str) {
        let message: Value = match serde_json::from_str(line) {
            Ok(message) => message,
            Err(error) => {
                self.ledger
                    .failure(self.label, "non-JSON line", format!("{error}: {line}"));
                return;
            }
        };
        match message.get("method").and_then(Value::as_str) {
            Some("notifications/tools/list_changed") => {
                let tag = &message["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"];
                match self.era {
                    Era::Modern if tag != LISTEN_ID => self.ledger.failure(
                        self.label,
                        "list_changed for another subscription",
                        line.to_string(),
                    ),
                    _ => self.listener.saw(),
                }
            }
            Some("notifications/subscriptions/acknowledged") => {
                self.table.lock().expect("table").acknowledged = true;
            }
            Some("notifications/progress") => self.progress(&message),
            Some(method) if message.get("id").is_some() => {
                self.ledger
                    .failure(self.label, "unexpected server request", method.to_string())
            }
            // Logs, prompts and resources list_changed.
            Some(_) => {}
            None => self.answer(message),
        }
    }

    fn progress(&self, message: &Value) {
        let token = token_key(&message["params"]["progressToken"]);
        let mut table = self.table.lock().expect("table");
        match table.progress.get_mut(&token) {
            Some(values) => values.push(message["params"]["progress"].as_f64().unwrap_or(-1.0)),
            None => {
                drop(table);
                self.ledger.stray_progress(self.label, message);
            }
        }
    }

    fn answer(&self, message: Value) {
        if message["id"] == LISTEN_ID {
            return;
        }
        let Some(id) = message["id"].as_u64() else {
            self.ledger
                .doubled(self.label, format!("an answer to no request: {message}"));
            return;
        };
        let mut table = self.table.lock().expect("table");
        let Some(pending) = table.pending.remove(&id) else {
            let detail = if table.answered.contains(&id) {
                format!("id {id} answered again: {message}")
            } else {
                format!("id {id} was never asked: {message}")
            };
            drop(table);
            self.ledger.doubled(self.label, detail);
            return;
        };
        table.answered.insert(id);
        let progress = pending
            .token
            .and_then(|token| table.progress.remove(&token))
            .unwrap_or_default();
        drop(table);
        self.ledger.answered(self.label);
        // The client may have given up waiting; the answer still counts.
        let _ = pending.answer.send(Answer { message, progress });
    }
}

/// A progress token as a map key (a string or a number).
fn token_key(token: &Value) -> String {
    match token {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// One client task's use of a [`StdioPeer`].
pub struct StdioChannel {
    peer: Arc<StdioPeer>,
}

impl Channel for StdioChannel {
    fn era(&self) -> Era {
        self.peer.era
    }

    fn label(&self) -> &'static str {
        self.peer.label
    }

    async fn request(&mut self, method: &str, _name: &str, params: Value) -> Option<Answer> {
        let peer = &self.peer;
        let id = peer.next_id.fetch_add(1, Ordering::Relaxed);
        let token = params["_meta"].get("progressToken").map(token_key);
        let (tx, rx) = oneshot::channel();
        peer.ledger.sent(peer.label);
        {
            let mut table = peer.table.lock().expect("table");
            if table.closed {
                drop(table);
                let detail = format!("id {id}: the server closed its stdout");
                peer.ledger.unanswered(peer.label, detail);
                return None;
            }
            if let Some(token) = &token {
                table.progress.insert(token.clone(), Vec::new());
            }
            table.pending.insert(id, Pending { answer: tx, token });
        }
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        if let Err(error) = peer.write(&request).await {
            if peer
                .table
                .lock()
                .expect("table")
                .pending
                .remove(&id)
                .is_some()
            {
                let detail = format!("id {id} could not be written: {error:#}");
                peer.ledger.unanswered(peer.label, detail);
            }
            return None;
        }
        match tokio::time::timeout(PATIENCE, rx).await {
            Ok(Ok(answer)) => Some(answer),
            // The reader ended: the server closed its stdout.
            Ok(Err(_)) => None,
            Err(_) => {
                peer.ledger.failure(
                    peer.label,
                    "late",
                    format!("id {id} ({method}) not answered within {PATIENCE:?}"),
                );
                None
            }
        }
    }
}
