//! 2026-07-28 multi round-trip requests: questions answered from the retry's
//! `inputResponses` or from earlier rounds, the rest left pending.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use rmcp::ErrorData as McpError;
#[allow(deprecated)] // Sampling and Roots: deprecated (SEP-2577), still in both eras.
use rmcp::model::{
    ClientCapabilities, CreateMessageResult, ElicitResult, InputRequest as McpInputRequest,
    InputRequests, ListRootsResult,
};
use serde_json::{Value, json};

use super::seal::{Binding, Carried, StateSeal};
use super::{
    Conclusion, JsonObjectLike, MAX_PLUGIN_STATE_BYTES, declared, input_required, mcp_request,
    missing_capability_error, required_capability,
};
use crate::runtime::{InputBroker, InputOutcome, InputRequest};

/// One round of a 2026-07-28 request.
pub struct RoundBroker {
    seal: Arc<StateSeal>,
    capabilities: ClientCapabilities,
    /// This retry's `inputResponses`.
    responses: JsonObjectLike,
    /// What the echoed `requestState` carried.
    carried: Carried,
    progress: Mutex<Progress>,
}

/// What the plugin did in this round.
#[derive(Default)]
struct Progress {
    answered: BTreeMap<String, Value>,
    pending: InputRequests,
    missing: Vec<Value>,
    new_state: Option<String>,
    /// An `inputResponses` value that does not fit its question.
    malformed: Option<McpError>,
    /// A misuse by the plugin that fails the call.
    plugin_error: Option<String>,
}

impl RoundBroker {
    pub fn begin(
        seal: Arc<StateSeal>,
        binding: Binding<'_>,
        capabilities: ClientCapabilities,
        input_responses: Option<&JsonObjectLike>,
        request_state: Option<&str>,
    ) -> Result<Self, McpError> {
        let responses = input_responses.cloned().unwrap_or_default();
        // Each answer is a result object (ElicitResult, CreateMessageResult,
        // ListRootsResult); anything else is malformed, even under a key the
        // plugin never asks.
        if let Some((key, value)) = responses.iter().find(|(_, v)| !v.is_object()) {
            return Err(McpError::invalid_params(
                format!("Invalid params: inputResponses[\"{key}\"] must be an object, not {value}"),
                Some(json!({ "inputResponse": key })),
            ));
        }
        let carried = match request_state {
            None => Carried::default(),
            Some(sealed) => seal.open(sealed, binding).map_err(|why| {
                McpError::invalid_params(
                    format!("Invalid params: {why}"),
                    Some(json!({ "requestState": "rejected" })),
                )
            })?,
        };
        Ok(Self {
            seal,
            capabilities,
            responses,
            carried,
            progress: Mutex::default(),
        })
    }

    fn answer(&self, key: &str, request: &McpInputRequest) -> Option<InputOutcome> {
        let progress = &mut *self.progress.lock().expect("round lock");
        if let Some(value) = self.responses.get(key) {
            return Some(match fits(request, value) {
                Ok(()) => {
                    progress.answered.insert(key.to_string(), value.clone());
                    InputOutcome::Answered(value.clone())
                }
                Err(why) => {
                    let message = format!("Invalid params: inputResponses[\"{key}\"]: {why}");
                    progress.malformed = Some(McpError::invalid_params(
                        message.clone(),
                        Some(json!({ "inputResponse": key })),
                    ));
                    InputOutcome::Failed(message)
                }
            });
        }
        let value = self.carried.answers.get(key)?;
        progress.answered.insert(key.to_string(), value.clone());
        Some(InputOutcome::Answered(value.clone()))
    }

    pub fn conclude(&self, binding: Binding<'_>, failed: bool) -> Conclusion {
        let progress = &mut *self.progress.lock().expect("round lock");
        if let Some(error) = progress.malformed.take() {
            return Conclusion::Error(error);
        }
        if let Some(why) = progress.plugin_error.take() {
            return Conclusion::Failed(why);
        }
        let state = progress
            .new_state
            .clone()
            .or_else(|| self.carried.state.clone());
        let new_state = state != self.carried.state;
        if !progress.pending.is_empty() || new_state {
            let mut answers = self.carried.answers.clone();
            answers.extend(std::mem::take(&mut progress.answered));
            let sealed = self.seal.seal(&Carried { answers, state }, binding);
            return Conclusion::InputRequired(input_required(
                std::mem::take(&mut progress.pending),
                sealed,
            ));
        }
        if failed && !progress.missing.is_empty() {
            return Conclusion::Error(missing_capability_error(&progress.missing));
        }
        Conclusion::Proceed
    }
}

/// Whether an answer has the shape of its question's result.
#[allow(deprecated)]
pub(super) fn fits(request: &McpInputRequest, value: &Value) -> Result<(), String> {
    fn parse<T: serde::de::DeserializeOwned>(value: &Value, what: &str) -> Result<(), String> {
        serde_json::from_value::<T>(value.clone())
            .map(|_| ())
            .map_err(|e| format!("not {what}: {e}"))
    }
    match request {
        McpInputRequest::Elicitation(_) => parse::<ElicitResult>(value, "an ElicitResult"),
        McpInputRequest::CreateMessage(_) => {
            parse::<CreateMessageResult>(value, "a CreateMessageResult")
        }
        McpInputRequest::ListRoots(_) => parse::<ListRootsResult>(value, "a ListRootsResult"),
        _ => Err("an answer to an unknown kind of request".into()),
    }
}

impl InputBroker for RoundBroker {
    fn ask<'a>(
        &'a self,
        key: &'a str,
        request: InputRequest,
    ) -> Pin<Box<dyn Future<Output = InputOutcome> + Send + 'a>> {
        let outcome = (|| {
            let mcp = match mcp_request(key, &request) {
                Ok(mcp) => mcp,
                Err(why) => return InputOutcome::Failed(why),
            };
            if !declared(&self.capabilities, &request) {
                let progress = &mut *self.progress.lock().expect("round lock");
                progress.missing.push(required_capability(&request));
                return InputOutcome::Unsupported;
            }
            if let Some(outcome) = self.answer(key, &mcp) {
                return outcome;
            }
            let progress = &mut *self.progress.lock().expect("round lock");
            progress.pending.insert(key.to_string(), mcp);
            InputOutcome::Pending
        })();
        Box::pin(std::future::ready(outcome))
    }

    fn request_state(&self) -> Option<String> {
        self.carried.state.clone()
    }

    fn set_request_state(&self, state: String) {
        let progress = &mut *self.progress.lock().expect("round lock");
        if state.len() > MAX_PLUGIN_STATE_BYTES {
            progress.plugin_error = Some(format!(
                "the plugin's request state is {} bytes; at most {MAX_PLUGIN_STATE_BYTES} are kept",
                state.len()
            ));
            return;
        }
        progress.new_state = Some(state);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(value: Value) -> ClientCapabilities {
        serde_json::from_value(value).unwrap()
    }

    fn name_form() -> InputRequest {
        InputRequest::ElicitForm {
            message: "Name?".into(),
            schema: json!({"type": "object", "properties": {"name": {"type": "string"}}}),
        }
    }

    const ARGS: Value = Value::Null;

    fn binding() -> Binding<'static> {
        Binding {
            method: "tools/call",
            name: "greet",
            arguments: &ARGS,
        }
    }

    fn ask(broker: &RoundBroker, key: &str, request: InputRequest) -> InputOutcome {
        futures::executor::block_on(broker.ask(key, request))
    }

    fn begin(
        seal: &Arc<StateSeal>,
        responses: Option<Value>,
        state: Option<&str>,
    ) -> Result<RoundBroker, McpError> {
        let responses: Option<JsonObjectLike> =
            responses.map(|r| serde_json::from_value(r).unwrap());
        RoundBroker::begin(
            seal.clone(),
            binding(),
            caps(json!({"elicitation": {}, "sampling": {}})),
            responses.as_ref(),
            state,
        )
    }

    #[test]
    fn a_question_is_pending_then_answered_and_carried_to_the_next_round() {
        let seal = Arc::new(StateSeal::random());
        let first = begin(&seal, None, None).unwrap();
        assert_eq!(ask(&first, "name", name_form()), InputOutcome::Pending);
        let Conclusion::InputRequired(result) = first.conclude(binding(), false) else {
            panic!("expected input_required");
        };
        let wire = serde_json::to_value(&result).unwrap();
        assert_eq!(wire["resultType"], "input_required");
        assert_eq!(
            wire["inputRequests"]["name"]["method"],
            "elicitation/create"
        );
        let state = result.request_state.unwrap();

        let answer = json!({"action": "accept", "content": {"name": "Ada"}});
        let second = begin(
            &seal,
            Some(json!({"name": answer, "extra": {}})),
            Some(&state),
        )
        .unwrap();
        assert_eq!(
            ask(&second, "name", name_form()),
            InputOutcome::Answered(answer.clone())
        );
        let color = InputRequest::ElicitForm {
            message: "Color?".into(),
            schema: json!({"type": "object", "properties": {"color": {"type": "string"}}}),
        };
        assert_eq!(ask(&second, "color", color.clone()), InputOutcome::Pending);
        let Conclusion::InputRequired(result) = second.conclude(binding(), false) else {
            panic!("expected a second input_required");
        };
        let keys: Vec<&String> = result.input_requests.as_ref().unwrap().keys().collect();
        assert_eq!(keys, ["color"]);
        let state = result.request_state.unwrap();

        // The third round answers only `color`; `name` comes from the state.
        let third = begin(
            &seal,
            Some(json!({"color": {"action": "accept", "content": {"color": "blue"}}})),
            Some(&state),
        )
        .unwrap();
        assert_eq!(
            ask(&third, "name", name_form()),
            InputOutcome::Answered(answer)
        );
        assert!(matches!(
            ask(&third, "color", color),
            InputOutcome::Answered(_)
        ));
        assert!(matches!(
            third.conclude(binding(), false),
            Conclusion::Proceed
        ));
    }

    #[test]
    fn malformed_responses_and_states_are_invalid_params() {
        let seal = Arc::new(StateSeal::random());
        let error = begin(&seal, Some(json!({"name": 12345})), None)
            .err()
            .unwrap();
        assert_eq!(error.code.0, -32602);
        assert_eq!(
            error.message,
            "Invalid params: inputResponses[\"name\"] must be an object, not 12345"
        );
        let error = begin(&seal, None, Some("forged")).err().unwrap();
        assert_eq!(error.code.0, -32602);
        assert_eq!(
            error.message,
            "Invalid params: requestState failed verification (altered, or from another request)"
        );

        let broker = begin(&seal, Some(json!({"name": {"content": {}}})), None).unwrap();
        let InputOutcome::Failed(why) = ask(&broker, "name", name_form()) else {
            panic!("expected a failure");
        };
        assert!(
            why.starts_with("Invalid params: inputResponses[\"name\"]: not an ElicitResult: "),
            "{why}"
        );
        let Conclusion::Error(error) = broker.conclude(binding(), true) else {
            panic!("expected -32602");
        };
        assert_eq!(error.code.0, -32602);
        assert_eq!(error.message, why);
    }

    #[test]
    fn undeclared_questions_are_unsupported_and_fail_with_32021() {
        let seal = Arc::new(StateSeal::random());
        let broker = begin(&seal, None, None).unwrap();
        assert_eq!(
            ask(&broker, "roots", InputRequest::ListRoots),
            InputOutcome::Unsupported
        );
        // Carrying on without the answer is the plugin's choice.
        assert!(matches!(
            broker.conclude(binding(), false),
            Conclusion::Proceed
        ));
        let Conclusion::Error(error) = broker.conclude(binding(), true) else {
            panic!("expected -32021");
        };
        assert_eq!(error.code.0, -32021);
        assert_eq!(
            error.data,
            Some(json!({"requiredCapabilities": {"roots": {}}}))
        );
    }

    #[test]
    fn plugin_state_round_trips_and_only_a_new_state_asks_again() {
        let seal = Arc::new(StateSeal::random());
        let first = begin(&seal, None, None).unwrap();
        assert_eq!(first.request_state(), None);
        first.set_request_state("step-1".into());
        let Conclusion::InputRequired(result) = first.conclude(binding(), false) else {
            panic!("a new state alone asks for another round");
        };
        assert!(result.input_requests.is_none());
        let state = result.request_state.unwrap();
        let second = begin(&seal, None, Some(&state)).unwrap();
        assert_eq!(second.request_state().as_deref(), Some("step-1"));
        second.set_request_state("step-1".into());
        assert!(matches!(
            second.conclude(binding(), false),
            Conclusion::Proceed
        ));
        let big = begin(&seal, None, None).unwrap();
        big.set_request_state("x".repeat(MAX_PLUGIN_STATE_BYTES + 1));
        let Conclusion::Failed(why) = big.conclude(binding(), false) else {
            panic!("an oversized state fails the call");
        };
        assert_eq!(
            why,
            format!(
                "the plugin's request state is {} bytes; at most {MAX_PLUGIN_STATE_BYTES} are kept",
                MAX_PLUGIN_STATE_BYTES + 1
            )
        );
    }
}
