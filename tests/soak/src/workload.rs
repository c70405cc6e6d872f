//! The operations every client performs, whatever its transport, and what
//! counts as their right answer.
//!
//! The plugin folder (see `churn`) holds `stable` and `misbehave`, never
//! touched; `twin`, replaced by new bytes with the same tool; `flip`, which
//! alternates between echo's tool and calc's; `gone`, deleted and re-added;
//! and `conformance` for multi round-trip rounds. So a call of `stable_echo`,
//! `twin_echo`, `misbehave_progress` or a round must always succeed, a call
//! of `flip_*` or `gone_*` may also find the tool absent, and a misbehaving
//! call must end as a tool error.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::ledger::{Ledger, Verdict};

/// Which protocol revision a channel speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// 2026-07-28: `_meta` in every request.
    Modern,
    /// 2025-11-25 after `initialize`.
    Legacy,
}

/// The answer to one request: the response message, and the progress values
/// reported for its token before it.
#[derive(Debug, Clone)]
pub struct Answer {
    pub message: Value,
    pub progress: Vec<f64>,
}

/// A way to send requests: a stdio pipe or an HTTP connection, in one era.
/// It counts each request sent and answered in the ledger itself.
pub trait Channel {
    fn era(&self) -> Era;
    /// The ledger's name of this channel (`stdio-modern`, `http-legacy`, ...).
    fn label(&self) -> &'static str;
    /// Sends one request; `None` if no answer came (already counted).
    async fn request(&mut self, method: &str, name: &str, params: Value) -> Option<Answer>;
}

/// One operation of a client's rotation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `stable_echo`: never touched, must always answer.
    Stable,
    /// `twin_echo`: replaced by new bytes with the same tool.
    Twin,
    /// `flip_echo` or `flip_add`, whichever is there (or was).
    Flip,
    /// `gone_analyze`, deleted and re-added.
    Gone,
    /// `tools/list`: must list the tools that are never taken away.
    List,
    /// `misbehave_progress` with a progress token: three reports, then the result.
    Progress,
    /// The conformance fixture's three-round `input_required` call (2026-07-28).
    Rounds,
    /// `misbehave_spin`, `misbehave_alloc` beyond its limit, `misbehave_panic`.
    Spin,
    Bomb,
    Panic,
}

impl Op {
    pub fn label(self) -> &'static str {
        match self {
            Op::Stable => "stable_echo",
            Op::Twin => "twin_echo",
            Op::Flip => "flip_*",
            Op::Gone => "gone_analyze",
            Op::List => "tools/list",
            Op::Progress => "progress",
            Op::Rounds => "mrtr rounds",
            Op::Spin => "misbehave spin",
            Op::Bomb => "misbehave bomb",
            Op::Panic => "misbehave panic",
        }
    }
}

/// The rotation of a load client: the well-behaved operations, weighted
/// towards the tools that must never fail.
pub const ROTATION: &[Op] = &[
    Op::Stable,
    Op::Twin,
    Op::List,
    Op::Flip,
    Op::Stable,
    Op::Progress,
    Op::Twin,
    Op::Gone,
    Op::Rounds,
    Op::Stable,
    Op::Flip,
    Op::Twin,
];

/// The rotation of the misbehaving client (one per server, one call at a time).
pub const HOSTILE: &[Op] = &[Op::Spin, Op::Bomb, Op::Panic];

/// A load client: its channel, and what it numbers its calls with.
pub struct Client<C: Channel> {
    channel: C,
    ledger: Arc<Ledger>,
    /// Numbers its progress tokens and echo texts.
    serial: u64,
    /// The name of this client, in tokens and texts.
    name: String,
}

impl<C: Channel> Client<C> {
    pub fn new(channel: C, ledger: &Arc<Ledger>, name: String) -> Self {
        Self {
            channel,
            ledger: ledger.clone(),
            serial: 0,
            name,
        }
    }

    /// Performs `op` and records how it ended.
    pub async fn perform(&mut self, op: Op) {
        self.serial += 1;
        let verdict = match op {
            Op::Rounds if self.channel.era() == Era::Legacy => return,
            Op::Rounds => self.rounds().await,
            Op::List => self.list().await,
            Op::Progress => self.progress().await,
            _ => self.call(op).await,
        };
        // No verdict without an answer: the channel counted it unanswered.
        if let Some(verdict) = verdict {
            self.ledger
                .verdict(self.channel.label(), op.label(), verdict);
        }
    }

    /// Performs a single call.
    async fn call(&mut self, op: Op) -> Option<Verdict> {
        let (tool, arguments) = self.call_of(op);
        let params = self.params(json!({"name": tool, "arguments": arguments}));
        let answer = self.channel.request("tools/call", &tool, params).await?;
        Some(judge_call(op, &arguments, &answer.message))
    }

    /// The tool and arguments of a single-call operation.
    fn call_of(&self, op: Op) -> (String, Value) {
        let text = format!("{} #{}", self.name, self.serial);
        match op {
            Op::Stable => ("stable_echo".into(), json!({"text": text})),
            Op::Twin => ("twin_echo".into(), json!({"text": text})),
            Op::Flip if self.serial.is_multiple_of(2) => {
                ("flip_echo".into(), json!({"text": text}))
            }
            Op::Flip => ("flip_add".into(), json!({"a": self.serial, "b": 1})),
            Op::Gone => ("gone_analyze".into(), json!({"text": "soak soak test"})),
            Op::Spin => ("misbehave_spin".into(), json!({})),
            Op::Bomb => ("misbehave_alloc".into(), json!({"mib": 256})),
            Op::Panic => ("misbehave_panic".into(), json!({})),
            Op::List | Op::Progress | Op::Rounds => unreachable!("not a single call"),
        }
    }

    /// `extra` as the params of a request in this channel's era.
    fn params(&self, extra: Value) -> Value {
        params_in(self.channel.era(), extra, json!({}))
    }

    async fn list(&mut self) -> Option<Verdict> {
        let params = self.params(json!({}));
        let answer = self.channel.request("tools/list", "", params).await?;
        let Some(tools) = answer.message["result"]["tools"].as_array() else {
            return Some(Verdict::Failed(format!(
                "not a listing: {}",
                answer.message
            )));
        };
        let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
        let missing = ["stable_echo", "twin_echo", "misbehave_progress"]
            .into_iter()
            .find(|name| !names.contains(name));
        Some(match missing {
            Some(missing) => Verdict::Failed(format!("{missing} not listed: {names:?}")),
            None => Verdict::Ok,
        })
    }

    async fn progress(&mut self) -> Option<Verdict> {
        let token = format!("{}-p{}", self.name, self.serial);
        let mut params = self.params(json!({
            "name": "misbehave_progress", "arguments": {"reports": 3}
        }));
        params["_meta"]["progressToken"] = json!(token);
        let answer = self
            .channel
            .request("tools/call", "misbehave_progress", params)
            .await?;
        self.ledger.progress(answer.progress.len());
        if let verdict @ Verdict::Failed(_) = judge_call(Op::Progress, &json!({}), &answer.message)
        {
            return Some(verdict);
        }
        // Reports come in a burst and may be coalesced (one per 25 ms at
        // most), but the last, which reaches the total, always arrives, and
        // before the result.
        let values = &answer.progress;
        if values.last() != Some(&3.0) || !values.windows(2).all(|w| w[0] < w[1]) {
            return Some(Verdict::Failed(format!(
                "progress {values:?} before the result of {token}"
            )));
        }
        Some(Verdict::Ok)
    }

    /// Three rounds of the conformance fixture's multi-round tool: each
    /// answers `input_required` until both questions are answered.
    async fn rounds(&mut self) -> Option<Verdict> {
        const TOOL: &str = "conformance_test_input_required_result_multi_round";
        let capabilities = json!({"elicitation": {}});
        let accept = |content: Value| json!({"action": "accept", "content": content});
        let steps = [
            (json!({}), Some("step1")),
            (
                json!({"step1": accept(json!({"name": "Ada"}))}),
                Some("step2"),
            ),
            (json!({"step2": accept(json!({"color": "blue"}))}), None),
        ];
        let mut state = Value::Null;
        for (round, (responses, asks)) in steps.into_iter().enumerate() {
            let mut extra = json!({"name": TOOL, "arguments": {}});
            if round > 0 {
                extra["inputResponses"] = responses;
                extra["requestState"] = state.clone();
            }
            let params = params_in(Era::Modern, extra, capabilities.clone());
            let answer = self.channel.request("tools/call", TOOL, params).await?;
            let result = &answer.message["result"];
            match asks {
                Some(key) => {
                    let asked = result["inputRequests"].get(key).is_some();
                    if result["resultType"] != "input_required" || !asked {
                        return Some(Verdict::Failed(format!(
                            "round {} did not ask for {key}: {}",
                            round + 1,
                            answer.message
                        )));
                    }
                    state = result["requestState"].clone();
                }
                None if first_text(result) == Some("Ada likes blue") => {}
                None => {
                    return Some(Verdict::Failed(format!(
                        "the last round: {}",
                        answer.message
                    )));
                }
            }
        }
        Some(Verdict::Ok)
    }
}

/// `extra` as params in `era`: with the 2026-07-28 `_meta` (declaring
/// `capabilities`) or as they are.
pub fn params_in(era: Era, extra: Value, capabilities: Value) -> Value {
    let mut params = extra;
    if era == Era::Modern {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": wharf_wire::MODERN,
            "io.modelcontextprotocol/clientCapabilities": capabilities,
            "io.modelcontextprotocol/clientInfo": {"name": "wharf-soak", "version": "0"}
        });
    }
    params
}

/// The first text content of a result.
fn first_text(result: &Value) -> Option<&str> {
    result["content"][0]["text"].as_str()
}

/// How the answer to a single call of `op` with `arguments` counts.
pub fn judge_call(op: Op, arguments: &Value, message: &Value) -> Verdict {
    let result = &message["result"];
    let is_error = result["isError"] == json!(true);
    if let Some(error) = message.get("error") {
        let unknown = error["code"] == -32602
            && error["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("Unknown tool: "));
        return match op {
            Op::Flip | Op::Gone if unknown => Verdict::Absent,
            _ => Verdict::Failed(format!("error {error}")),
        };
    }
    if result.is_null() {
        return Verdict::Failed(format!("neither result nor error: {message}"));
    }
    match op {
        Op::Spin | Op::Bomb | Op::Panic if is_error => Verdict::Contained,
        Op::Spin | Op::Bomb | Op::Panic => {
            Verdict::Failed(format!("a misbehaving call succeeded: {result}"))
        }
        _ if is_error => Verdict::Failed(format!("isError: {result}")),
        Op::Stable | Op::Twin | Op::Flip if arguments.get("text").is_some() => {
            if first_text(result) == arguments["text"].as_str() {
                Verdict::Ok
            } else {
                Verdict::Failed(format!("echo returned {result}"))
            }
        }
        _ => Verdict::Ok,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(text: &str) -> Value {
        json!({"result": {"content": [{"type": "text", "text": text}], "isError": false}})
    }

    #[test]
    fn an_unknown_tool_is_allowed_only_where_a_swap_may_take_it_away() {
        let unknown = json!({"error": {"code": -32602, "message": "Unknown tool: flip_add",
                                       "data": {"name": "flip_add"}}});
        assert_eq!(judge_call(Op::Flip, &json!({}), &unknown), Verdict::Absent);
        assert_eq!(judge_call(Op::Gone, &json!({}), &unknown), Verdict::Absent);
        assert!(matches!(
            judge_call(Op::Stable, &json!({}), &unknown),
            Verdict::Failed(_)
        ));
        let other = json!({"error": {"code": -32602, "message": "Invalid params"}});
        assert!(matches!(
            judge_call(Op::Flip, &json!({}), &other),
            Verdict::Failed(_)
        ));
    }

    #[test]
    fn an_echo_must_return_its_own_text() {
        let arguments = json!({"text": "a #1"});
        assert_eq!(
            judge_call(Op::Stable, &arguments, &text("a #1")),
            Verdict::Ok
        );
        assert!(matches!(
            judge_call(Op::Twin, &arguments, &text("a #2")),
            Verdict::Failed(_)
        ));
    }

    #[test]
    fn a_misbehaving_call_must_end_as_a_tool_error() {
        let contained = json!({"result": {"content": [], "isError": true}});
        assert_eq!(
            judge_call(Op::Spin, &json!({}), &contained),
            Verdict::Contained
        );
        assert!(matches!(
            judge_call(Op::Panic, &json!({}), &text("fine")),
            Verdict::Failed(_)
        ));
        assert!(matches!(
            judge_call(Op::Stable, &json!({}), &contained),
            Verdict::Failed(_)
        ));
    }

    #[test]
    fn only_the_modern_era_carries_meta() {
        let modern = params_in(Era::Modern, json!({"name": "x"}), json!({"sampling": {}}));
        assert_eq!(
            modern["_meta"]["io.modelcontextprotocol/clientCapabilities"],
            json!({"sampling": {}})
        );
        assert_eq!(
            params_in(Era::Legacy, json!({"name": "x"}), json!({})),
            json!({"name": "x"})
        );
    }
}
