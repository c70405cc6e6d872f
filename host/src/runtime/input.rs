//! Questions a plugin asks the client in the middle of a call (the WIT `host.ask`),
//! and the call clock that stops counting while the client thinks.
//!
//! The runtime only carries questions to an [`InputBroker`] and answers back to
//! the guest; how they reach the client (a server-to-client request, or an
//! `input_required` result and a retry) is the server's business.

use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::bindings::wharf::plugin::host;

/// A question for the client, with its JSON already parsed.
#[derive(Debug, Clone, PartialEq)]
pub enum InputRequest {
    /// Elicitation in form mode: a message and the requested object's schema.
    ElicitForm { message: String, schema: Value },
    /// Elicitation in URL mode.
    ElicitUrl { message: String, url: String },
    /// Sampling: the `sampling/createMessage` params.
    Sampling(Value),
    /// The client's roots.
    ListRoots,
}

/// What the broker made of a question; mirrors the WIT `input-outcome`.
#[derive(Debug, Clone, PartialEq)]
pub enum InputOutcome {
    Answered(Value),
    Pending,
    Unsupported,
    Failed(String),
}

/// Answers a call's questions; the server gives one to each call that may ask.
pub trait InputBroker: Send + Sync {
    /// The answer to `request` under `key`, now or after asking the client.
    fn ask<'a>(
        &'a self,
        key: &'a str,
        request: InputRequest,
    ) -> Pin<Box<dyn Future<Output = InputOutcome> + Send + 'a>>;
    /// The plugin's state from the previous round.
    fn request_state(&self) -> Option<String>;
    /// The plugin's state for the next round.
    fn set_request_state(&self, state: String);
}

/// Longest accepted question key, in bytes.
pub const MAX_KEY_BYTES: usize = 64;

impl InputRequest {
    /// Parses the WIT request; a plugin that sends malformed JSON gets the reason.
    pub(crate) fn from_wit(request: host::InputRequest) -> Result<Self, String> {
        let json = |what: &str, text: &str| {
            serde_json::from_str::<Value>(text).map_err(|e| format!("{what} is not JSON: {e}"))
        };
        Ok(match request {
            host::InputRequest::ElicitForm(form) => InputRequest::ElicitForm {
                message: form.message,
                schema: json("the requested schema", &form.requested_schema)?,
            },
            host::InputRequest::ElicitUrl(url) => InputRequest::ElicitUrl {
                message: url.message,
                url: url.url,
            },
            host::InputRequest::Sampling(params) => {
                InputRequest::Sampling(json("the sampling params", &params)?)
            }
            host::InputRequest::ListRoots => InputRequest::ListRoots,
        })
    }
}

impl InputOutcome {
    pub(crate) fn into_wit(self) -> host::InputOutcome {
        match self {
            InputOutcome::Answered(value) => host::InputOutcome::Answered(value.to_string()),
            InputOutcome::Pending => host::InputOutcome::Pending,
            InputOutcome::Unsupported => host::InputOutcome::Unsupported,
            InputOutcome::Failed(why) => host::InputOutcome::Failed(why),
        }
    }
}

/// A call's wall-clock deadline, pushed back by the time spent waiting for the
/// client: the limit is on the plugin's own running time, not on how long a
/// person takes to fill in a form (the broker bounds that wait itself).
#[derive(Debug)]
pub(crate) struct CallClock {
    state: Mutex<ClockState>,
}

#[derive(Debug)]
struct ClockState {
    deadline: Instant,
    /// When the current wait for the client began, if one is under way.
    waiting_since: Option<Instant>,
}

impl CallClock {
    pub(crate) fn new(timeout: Duration) -> Self {
        Self {
            state: Mutex::new(ClockState {
                deadline: Instant::now() + timeout,
                waiting_since: None,
            }),
        }
    }

    /// True once the deadline has passed, never while waiting for the client.
    pub(crate) fn expired(&self, now: Instant) -> bool {
        let state = self.state.lock().expect("call clock lock");
        state.waiting_since.is_none() && now >= state.deadline
    }

    /// When to look again: the deadline, or soon while a wait is under way.
    pub(crate) fn next_check(&self) -> Instant {
        let state = self.state.lock().expect("call clock lock");
        match state.waiting_since {
            Some(_) => Instant::now() + Duration::from_millis(100),
            None => state.deadline,
        }
    }

    /// Stops the clock until the returned guard is dropped.
    pub(crate) fn pause(&self) -> ClockPause<'_> {
        self.state.lock().expect("call clock lock").waiting_since = Some(Instant::now());
        ClockPause { clock: self }
    }
}

/// Restarts the clock on drop, moving the deadline by the time it stood still.
pub(crate) struct ClockPause<'a> {
    clock: &'a CallClock,
}

impl Drop for ClockPause<'_> {
    fn drop(&mut self) {
        let mut state = self.clock.state.lock().expect("call clock lock");
        if let Some(since) = state.waiting_since.take() {
            state.deadline += since.elapsed();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_stands_still_while_waiting() {
        let clock = CallClock::new(Duration::from_millis(20));
        {
            let _pause = clock.pause();
            std::thread::sleep(Duration::from_millis(40));
            assert!(
                !clock.expired(Instant::now()),
                "never expires while waiting"
            );
        }
        // 40 ms of waiting moved the deadline by 40 ms: not expired yet.
        assert!(!clock.expired(Instant::now()));
        std::thread::sleep(Duration::from_millis(30));
        assert!(clock.expired(Instant::now()));
    }

    #[test]
    fn malformed_json_from_the_plugin_is_named() {
        let error = InputRequest::from_wit(host::InputRequest::Sampling("{".into())).unwrap_err();
        assert!(
            error.starts_with("the sampling params is not JSON: "),
            "{error}"
        );
        let form = InputRequest::from_wit(host::InputRequest::ElicitForm(host::ElicitForm {
            message: "Name?".into(),
            requested_schema: r#"{"type":"object"}"#.into(),
        }))
        .unwrap();
        assert_eq!(
            form,
            InputRequest::ElicitForm {
                message: "Name?".into(),
                schema: serde_json::json!({"type": "object"}),
            }
        );
    }
}
