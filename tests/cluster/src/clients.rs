//! The clients, all through nginx: 2026-07-28 callers, legacy sessions,
//! `subscriptions/listen` watchers and an `input_required` round trip. Each
//! counts into the [`Ledger`]; every operation has a deadline, and one that
//! passes it counts as hung.

use std::cell::{Cell, RefCell};
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use wharf_wire::http::{Connection, Reply};

use crate::nginx::UPSTREAM_HEADER;

/// How long one operation may take before it counts as hung. Calls are
/// instant and a replica's drain is a fraction of this.
pub const HANG: Duration = Duration::from_secs(15);
/// The echo tool every caller calls.
const ECHO: &str = "echo_echo";
/// The conformance fixture's two-question tool (tests/plugins/conformance).
const MULTI_ROUND: &str = "conformance_test_input_required_result_multi_round";

/// A request that did not succeed.
#[derive(Debug, Clone)]
pub struct Failure {
    pub what: &'static str,
    pub started: Instant,
    pub ended: Instant,
    /// The replicas nginx tried (its `$upstream_addr`), when a response came.
    pub upstream: Option<String>,
    pub detail: String,
}

/// What the clients counted.
#[derive(Default)]
pub struct Ledger {
    pub modern_ok: Cell<u64>,
    pub legacy_ok: Cell<u64>,
    /// Legacy sessions opened again after a 404 (their replica was gone).
    pub reinitialized: Cell<u64>,
    pub failures: RefCell<Vec<Failure>>,
    pub hung: RefCell<Vec<String>>,
    /// Set by the run before it changes the plugin folder.
    pub changed_at: Cell<Option<Instant>>,
    pub stop: Cell<bool>,
}

impl Ledger {
    fn fail(&self, what: &'static str, started: Instant, upstream: Option<String>, detail: String) {
        self.failures.borrow_mut().push(Failure {
            what,
            started,
            ended: Instant::now(),
            upstream,
            detail,
        });
    }
}

/// One listen client's story.
#[derive(Default)]
pub struct Watcher {
    /// Streams that ended (or failed) and were opened again.
    pub reconnects: Cell<u64>,
    /// Opening a stream failed (and was tried again).
    pub failed_opens: Cell<u64>,
    /// A `tools/list_changed` arrived after the plugin change.
    pub saw_change: Cell<bool>,
}

/// `params` with the 2026-07-28 `_meta`, declaring `capabilities`.
fn modern_params(mut params: Value, capabilities: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": wharf_wire::MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "wharf-cluster", "version": "0"}
    });
    params
}

fn request(id: u64, method: &str, params: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
        .expect("JSON")
}

/// The one message of an answer, if it is a successful echo of `hi`.
fn judge_echo(reply: &Reply) -> Result<(), String> {
    if reply.status != 200 {
        return Err(format!(
            "HTTP {}: {}",
            reply.status,
            String::from_utf8_lossy(&reply.body)
        ));
    }
    let messages = reply.messages().map_err(|e| format!("{e:#}"))?;
    let answer = messages.last().ok_or("no message")?;
    if answer["result"]["content"][0]["text"] == "hi" {
        Ok(())
    } else {
        Err(format!("not an echo: {answer}"))
    }
}

fn upstream(reply: &Reply) -> Option<String> {
    reply.header(UPSTREAM_HEADER).map(str::to_owned)
}

/// A 2026-07-28 caller: echo calls one after another until told to stop,
/// on a keep-alive connection to nginx (opened again after an error).
pub async fn modern_caller(nginx: SocketAddr, ledger: Rc<Ledger>, first_id: u64) {
    let mut connection: Option<Connection> = None;
    let mut id = first_id;
    let params = modern_params(
        json!({"name": ECHO, "arguments": {"text": "hi"}}),
        json!({}),
    );
    while !ledger.stop.get() {
        id += 1;
        let body = request(id, "tools/call", params.clone());
        let started = Instant::now();
        let call = async {
            if connection.is_none() {
                connection = Some(Connection::open(nginx).await?);
            }
            let open = connection.as_mut().expect("opened above");
            open.request(&body, "tools/call", ECHO).await
        };
        match tokio::time::timeout(HANG, call).await {
            Err(_) => {
                ledger
                    .hung
                    .borrow_mut()
                    .push(format!("2026-07-28 call {id}"));
                connection = None;
            }
            Ok(Err(error)) => {
                ledger.fail("2026-07-28 call", started, None, format!("{error:#}"));
                connection = None;
            }
            Ok(Ok(reply)) => match judge_echo(&reply) {
                Ok(()) => ledger.modern_ok.set(ledger.modern_ok.get() + 1),
                Err(detail) => {
                    ledger.fail("2026-07-28 call", started, upstream(&reply), detail);
                    connection = None;
                }
            },
        }
    }
}

/// A legacy client: a session, echo calls in it; on 404 (its replica is
/// gone) a new session, as the specification tells clients to do.
pub async fn legacy_client(nginx: SocketAddr, ledger: Rc<Ledger>) {
    let mut session: Option<Connection> = None;
    let mut id = 0;
    while !ledger.stop.get() {
        id += 1;
        let started = Instant::now();
        if session.is_none() {
            let open = async {
                let mut connection = Connection::open(nginx).await?;
                connection.handshake().await?;
                anyhow::Ok(connection)
            };
            match tokio::time::timeout(HANG, open).await {
                Ok(Ok(connection)) => session = Some(connection),
                Ok(Err(error)) => {
                    ledger.fail("legacy initialize", started, None, format!("{error:#}"));
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
                Err(_) => {
                    ledger.hung.borrow_mut().push("legacy initialize".into());
                    continue;
                }
            }
        }
        let body = request(
            id,
            "tools/call",
            json!({"name": ECHO, "arguments": {"text": "hi"}}),
        );
        let connection = session.as_mut().expect("opened above");
        match tokio::time::timeout(HANG, connection.request(&body, "tools/call", ECHO)).await {
            Err(_) => {
                ledger.hung.borrow_mut().push(format!("legacy call {id}"));
                session = None;
            }
            Ok(Err(error)) => {
                ledger.fail("legacy call", started, None, format!("{error:#}"));
                session = None;
            }
            Ok(Ok(reply)) if reply.status == 404 => {
                ledger.reinitialized.set(ledger.reinitialized.get() + 1);
                session = None;
            }
            Ok(Ok(reply)) => match judge_echo(&reply) {
                Ok(()) => ledger.legacy_ok.set(ledger.legacy_ok.get() + 1),
                Err(detail) => {
                    ledger.fail("legacy call", started, upstream(&reply), detail);
                    session = None;
                }
            },
        }
    }
}

/// A `subscriptions/listen` client that opens its stream again whenever it
/// ends, and notes a `tools/list_changed` after the plugin change. Runs until
/// aborted.
pub async fn watcher(nginx: SocketAddr, ledger: Rc<Ledger>, watcher: Rc<Watcher>, n: u64) {
    let subscription = format!("listen-{n}");
    let params = modern_params(
        json!({"notifications": {"toolsListChanged": true}}),
        json!({}),
    );
    let body = serde_json::to_vec(&json!({
        "jsonrpc": "2.0", "id": subscription, "method": "subscriptions/listen", "params": params
    }))
    .expect("JSON");
    let mut opened_before = false;
    loop {
        let open = async {
            let connection = Connection::open(nginx).await?;
            let (status, mut stream) = connection
                .open_stream(&body, "subscriptions/listen", "")
                .await?;
            if status != 200 {
                bail!("HTTP {status}");
            }
            let ack = stream.next_event().await?.context("no acknowledgement")?;
            if ack["method"] != "notifications/subscriptions/acknowledged" {
                bail!("the stream began with {ack}");
            }
            anyhow::Ok(stream)
        };
        let mut stream = match tokio::time::timeout(HANG, open).await {
            Ok(Ok(stream)) => stream,
            Ok(Err(_)) | Err(_) => {
                watcher.failed_opens.set(watcher.failed_opens.get() + 1);
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        if opened_before {
            watcher.reconnects.set(watcher.reconnects.get() + 1);
        }
        opened_before = true;
        while let Ok(Some(message)) = stream.next_event().await {
            let changed = message["method"] == "notifications/tools/list_changed";
            if changed && ledger.changed_at.get().is_some() {
                watcher.saw_change.set(true);
            }
        }
    }
}

/// One `input_required` round trip (three rounds) through nginx; returns the
/// replica that answered each round.
pub async fn round_trip(nginx: SocketAddr) -> Result<Vec<String>> {
    let mut upstreams = Vec::new();
    let mut extra = json!({});
    for (id, step) in [
        (1, Some(("step1", json!({"name": "Ada"})))),
        (2, Some(("step2", json!({"color": "blue"})))),
        (3, None),
    ] {
        let mut params = json!({"name": MULTI_ROUND, "arguments": {}});
        for (key, value) in extra.as_object().expect("an object") {
            params[key] = value.clone();
        }
        let body = request(
            id,
            "tools/call",
            modern_params(params, json!({"elicitation": {}})),
        );
        let mut connection = Connection::open(nginx).await?;
        let reply =
            tokio::time::timeout(HANG, connection.request(&body, "tools/call", MULTI_ROUND))
                .await
                .context("a round hung")??;
        upstreams.push(upstream(&reply).unwrap_or_default());
        if reply.status != 200 {
            bail!("round {id}: HTTP {}", reply.status);
        }
        let messages = reply.messages()?;
        let result = &messages.last().context("no message")?["result"];
        match step {
            Some((question, answer)) => {
                if result["resultType"] != "input_required" {
                    bail!("round {id}: {result}");
                }
                extra = json!({
                    "inputResponses": {question: {"action": "accept", "content": answer}},
                    "requestState": result["requestState"],
                });
            }
            None => {
                if result["resultType"] != "complete"
                    || result["content"][0]["text"] != "Ada likes blue"
                {
                    bail!("round {id}: {result}");
                }
            }
        }
    }
    Ok(upstreams)
}
