//! Task ids on a `subscriptions/listen` stream (the tasks extension, SEP-2663):
//! a client lists `params.notifications.taskIds` and is sent
//! `notifications/tasks` as those tasks change.
//!
//! rmcp 3.11's listen filter has no `taskIds`: it drops them when it parses
//! the request, and its acknowledgement lists only the categories it knows.
//! So both transports carry them past rmcp, with the two functions here:
//! - [`lift`], on the raw request before rmcp parses it: checks the ids, keeps
//!   those this server holds, and moves them into the request's `_meta` under
//!   [`LISTEN_TASK_IDS`], which rmcp passes to the handler untouched;
//! - [`acknowledge`], on the acknowledgement rmcp writes: adds the same ids
//!   as `notifications.taskIds`, the ids the server agreed to.
//!
//! A leaf like [`crate::protocol`]: the transports ask a [`TaskDirectory`]
//! whether a task exists and know nothing else of tasks.

use rmcp::model::{ErrorCode, ErrorData, RequestId};
use serde_json::{Map, Value, json};

use crate::protocol::{META_PROTOCOL_VERSION, claims_stateless_era};

/// The `_meta` key the accepted task ids travel under, from the transport to
/// the listen handler. A client's own value under it is always replaced.
pub const LISTEN_TASK_IDS: &str = "dev.wharf/listenTaskIds";

/// The `_meta` key of a 2026-07-28 request's capabilities.
const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// The tasks extension's identifier.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The most task ids one listen request may name.
pub const MAX_TASK_IDS: usize = 1000;

/// Whether a task exists on this server (any caller's: the listen handler
/// sends a task only to its owner; ids are unguessable, so this tells a
/// caller nothing it could not have known).
pub trait TaskDirectory: Send + Sync {
    fn holds(&self, task_id: &str) -> bool;
}

/// What [`lift`] made of a request.
#[derive(Debug, PartialEq)]
pub enum Lifted {
    /// Not a 2026-07-28 listen request naming task ids: pass it as it is.
    Untouched,
    /// The request to hand on instead, and the ids accepted (held here; in
    /// the order asked, each once), for the acknowledgement.
    Rewritten {
        body: Vec<u8>,
        task_ids: Vec<String>,
    },
    /// Answer this error to the request instead.
    Refused(ErrorData),
}

/// Moves a 2026-07-28 `subscriptions/listen` request's `taskIds` into its
/// `_meta` (see the module doc), keeping only ids `directory` holds.
///
/// Refused: `taskIds` not an array of strings, or longer than
/// [`MAX_TASK_IDS`] (-32602); a client that did not declare the tasks
/// extension (-32021, as SEP-2663 says).
pub fn lift(raw: &[u8], directory: &dyn TaskDirectory) -> Lifted {
    let Ok(Value::Object(mut request)) = serde_json::from_slice::<Value>(raw) else {
        return Lifted::Untouched;
    };
    let Some(Value::Object(params)) = request.get_mut("params") else {
        return Lifted::Untouched;
    };
    let stateless = params
        .get("_meta")
        .and_then(|meta| meta.get(META_PROTOCOL_VERSION))
        .and_then(Value::as_str)
        .is_some_and(claims_stateless_era);
    if !stateless {
        // Legacy requests cannot listen at all; rmcp answers them.
        return Lifted::Untouched;
    }
    let asked = params
        .get_mut("notifications")
        .and_then(Value::as_object_mut)
        .and_then(|notifications| notifications.remove("taskIds"));
    let meta = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .expect("`_meta` read as an object above");
    let client_value = meta.remove(LISTEN_TASK_IDS);
    let Some(asked) = asked else {
        return if client_value.is_some() {
            rewritten(&request, Vec::new())
        } else {
            Lifted::Untouched
        };
    };
    let declared = meta
        .get(META_CLIENT_CAPABILITIES)
        .and_then(|capabilities| capabilities.get("extensions"))
        .and_then(|extensions| extensions.get(TASKS_EXTENSION))
        .is_some();
    if !declared {
        return Lifted::Refused(missing_extension());
    }
    let Value::Array(asked) = asked else {
        return Lifted::Refused(invalid(
            "`notifications.taskIds` must be an array of task ids",
        ));
    };
    if asked.len() > MAX_TASK_IDS {
        return Lifted::Refused(invalid(&format!(
            "`notifications.taskIds` names {} tasks; at most {MAX_TASK_IDS} per stream",
            asked.len()
        )));
    }
    let mut accepted: Vec<String> = Vec::new();
    for id in asked {
        let Value::String(id) = id else {
            return Lifted::Refused(invalid("`notifications.taskIds` must hold strings only"));
        };
        if !accepted.contains(&id) && directory.holds(&id) {
            accepted.push(id);
        }
    }
    meta.insert(LISTEN_TASK_IDS.into(), json!(accepted));
    rewritten(&request, accepted)
}

fn rewritten(request: &Map<String, Value>, task_ids: Vec<String>) -> Lifted {
    Lifted::Rewritten {
        body: serde_json::to_vec(request).expect("a JSON object serializes"),
        task_ids,
    }
}

fn invalid(why: &str) -> ErrorData {
    ErrorData::invalid_params(format!("Invalid params: {why}"), None)
}

/// -32021 naming the tasks extension, as for every `tasks/*` request of a
/// client that did not declare it.
fn missing_extension() -> ErrorData {
    ErrorData::new(
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        "Missing required client capability",
        Some(json!({"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}})),
    )
}

/// The task ids the handler was given by [`lift`] (none if it did not run).
pub fn lifted_ids(meta: &Map<String, Value>) -> Vec<String> {
    match meta.get(LISTEN_TASK_IDS) {
        Some(Value::Array(ids)) => ids
            .iter()
            .filter_map(|id| id.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

/// Whether `message` is the acknowledgement of the listen request `id`.
pub fn is_acknowledgement_of(message: &Value, id: &RequestId) -> bool {
    message.get("method").and_then(Value::as_str)
        == Some("notifications/subscriptions/acknowledged")
        && message
            .pointer("/params/_meta/io.modelcontextprotocol~1subscriptionId")
            .is_some_and(|subscription| *subscription == id.clone().into_json_value())
}

/// Adds the accepted `task_ids` to an acknowledgement (a
/// `notifications/subscriptions/acknowledged` message).
pub fn acknowledge(message: &mut Value, task_ids: &[String]) {
    if let Some(Value::Object(params)) = message.get_mut("params") {
        let notifications = params
            .entry("notifications")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(notifications) = notifications {
            notifications.insert("taskIds".into(), json!(task_ids));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Holds(&'static [&'static str]);
    impl TaskDirectory for Holds {
        fn holds(&self, task_id: &str) -> bool {
            self.0.contains(&task_id)
        }
    }

    fn listen(notifications: Value, extensions: Value) -> Vec<u8> {
        serde_json::to_vec(&json!({
            "jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen",
            "params": {
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {"extensions": extensions},
                },
                "notifications": notifications,
            },
        }))
        .unwrap()
    }

    fn tasks() -> Value {
        json!({TASKS_EXTENSION: {}})
    }

    #[test]
    fn held_ids_move_into_meta_in_order_and_once() {
        let raw = listen(
            json!({"toolsListChanged": true, "taskIds": ["b", "gone", "a", "b"]}),
            tasks(),
        );
        let Lifted::Rewritten { body, task_ids } = lift(&raw, &Holds(&["a", "b"])) else {
            panic!("not rewritten");
        };
        assert_eq!(task_ids, ["b", "a"]);
        let body: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            body["params"]["notifications"],
            json!({"toolsListChanged": true})
        );
        let meta = body["params"]["_meta"].as_object().unwrap();
        assert_eq!(lifted_ids(meta), ["b", "a"]);
        assert_eq!(body["id"], 7);
    }

    #[test]
    fn a_listen_without_task_ids_is_untouched() {
        let raw = listen(json!({"toolsListChanged": true}), json!({}));
        assert_eq!(lift(&raw, &Holds(&[])), Lifted::Untouched);
    }

    #[test]
    fn a_legacy_request_is_left_to_rmcp() {
        let raw = serde_json::to_vec(&json!({
            "jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
            "params": {"notifications": {"taskIds": ["a"]}},
        }))
        .unwrap();
        assert_eq!(lift(&raw, &Holds(&["a"])), Lifted::Untouched);
    }

    #[test]
    fn a_client_cannot_smuggle_its_own_ids_past_the_check() {
        let mut request: Value =
            serde_json::from_slice(&listen(json!({"toolsListChanged": true}), tasks())).unwrap();
        request["params"]["_meta"][LISTEN_TASK_IDS] = json!(["not-checked"]);
        let raw = serde_json::to_vec(&request).unwrap();
        let Lifted::Rewritten { body, task_ids } = lift(&raw, &Holds(&[])) else {
            panic!("not rewritten");
        };
        assert!(task_ids.is_empty());
        let body: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["params"]["_meta"].get(LISTEN_TASK_IDS), None);
    }

    #[test]
    fn task_ids_need_the_extension() {
        let raw = listen(json!({"taskIds": ["a"]}), json!({}));
        let Lifted::Refused(error) = lift(&raw, &Holds(&["a"])) else {
            panic!("not refused");
        };
        assert_eq!(error.code.0, -32021);
        assert_eq!(error.message, "Missing required client capability");
        assert_eq!(
            error.data,
            Some(json!({"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}))
        );
    }

    #[test]
    fn bad_task_ids_are_invalid_params() {
        let cases = [
            (
                json!("a"),
                "Invalid params: `notifications.taskIds` must be an array of task ids",
            ),
            (
                json!(["a", 1]),
                "Invalid params: `notifications.taskIds` must hold strings only",
            ),
        ];
        for (ids, message) in cases {
            let raw = listen(json!({"taskIds": ids}), tasks());
            let Lifted::Refused(error) = lift(&raw, &Holds(&["a"])) else {
                panic!("not refused: {ids}");
            };
            assert_eq!((error.code.0, error.message.as_ref()), (-32602, message));
        }
        let many: Vec<String> = (0..=MAX_TASK_IDS).map(|i| i.to_string()).collect();
        let raw = listen(json!({"taskIds": many}), tasks());
        let Lifted::Refused(error) = lift(&raw, &Holds(&[])) else {
            panic!("not refused");
        };
        assert_eq!(
            error.message,
            "Invalid params: `notifications.taskIds` names 1001 tasks; at most 1000 per stream"
        );
    }

    #[test]
    fn the_acknowledgement_of_that_request_gets_the_ids() {
        let mut ack = json!({
            "jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
            "params": {
                "_meta": {"io.modelcontextprotocol/subscriptionId": 7},
                "notifications": {"toolsListChanged": true},
            },
        });
        assert!(is_acknowledgement_of(&ack, &RequestId::Number(7)));
        assert!(!is_acknowledgement_of(&ack, &RequestId::Number(8)));
        assert!(!is_acknowledgement_of(&ack, &RequestId::String("7".into())));
        acknowledge(&mut ack, &["a".into()]);
        assert_eq!(
            ack["params"]["notifications"],
            json!({"toolsListChanged": true, "taskIds": ["a"]})
        );
    }
}
