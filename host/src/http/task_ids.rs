//! A listen request's `taskIds` over HTTP: lifted past rmcp in the request
//! body, and added to rmcp's acknowledgement in the SSE answer (see
//! [`crate::task_subscriptions`] for why).

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::response::Response;
use futures::StreamExt as _;
use rmcp::model::RequestId;
use serde_json::Value;

use super::envelope::json_rpc_error;
use super::session::Admitted;
use super::streams::LISTEN;
use crate::task_subscriptions::{Lifted, TaskDirectory, acknowledge, is_acknowledgement_of, lift};

/// The most bytes of an SSE answer searched for the acknowledgement (rmcp
/// sends it first; a priming event may come before it).
const SEARCH_LIMIT: usize = 64 << 10;

/// The check the gate runs on listen requests, over the server's tasks.
#[derive(Clone)]
pub struct TaskIdCheck(pub Arc<dyn TaskDirectory>);

impl std::fmt::Debug for TaskIdCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TaskIdCheck")
    }
}

/// A listen request let through, with the task ids it was granted.
pub struct Granted {
    pub id: RequestId,
    pub task_ids: Vec<String>,
}

impl TaskIdCheck {
    /// A 2026-07-28 `subscriptions/listen` naming `taskIds`: the refusal
    /// (400: -32021 without the tasks extension, -32602 for bad ids), else
    /// the request rewritten and what it was granted. Any other request
    /// passes untouched.
    pub async fn admit(&self, admitted: Admitted) -> Result<(Admitted, Option<Granted>), Response> {
        if admitted.method.as_deref() != Some(LISTEN) {
            return Ok((admitted, None));
        }
        let Ok(id) = serde_json::from_value::<RequestId>(admitted.id.clone()) else {
            return Ok((admitted, None));
        };
        let Admitted {
            request,
            session,
            method,
            id: raw_id,
            name,
        } = admitted;
        let (mut parts, body) = request.into_parts();
        // The envelope has read the body already: this takes its one chunk.
        let bytes = axum::body::to_bytes(body, usize::MAX)
            .await
            .unwrap_or_default();
        let (bytes, granted) = match lift(&bytes, self.0.as_ref()) {
            Lifted::Untouched => (bytes, None),
            Lifted::Rewritten { body, task_ids } => {
                parts
                    .headers
                    .insert(header::CONTENT_LENGTH, body.len().into());
                (Bytes::from(body), Some(Granted { id, task_ids }))
            }
            Lifted::Refused(error) => {
                return Err(json_rpc_error(StatusCode::BAD_REQUEST, Some(id), error));
            }
        };
        let admitted = Admitted {
            request: Request::from_parts(parts, Body::from(bytes)),
            session,
            method,
            id: raw_id,
            name,
        };
        Ok((admitted, granted))
    }
}

/// `response` (the SSE answer to a listen request) with the granted task ids
/// added to its acknowledgement event; a JSON answer (an error) is left as
/// it is.
pub fn acknowledge_in(response: Response, granted: Granted) -> Response {
    let is_stream = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    if !is_stream {
        return response;
    }
    let (parts, body) = response.into_parts();
    let mut search = Some(Search {
        held: Vec::new(),
        granted,
    });
    let events = body.into_data_stream().map(move |chunk| {
        let Ok(chunk) = chunk else { return chunk };
        match search.as_mut() {
            None => Ok(chunk),
            Some(pending) => {
                let (out, done) = pending.feed(&chunk);
                if done {
                    search = None;
                }
                Ok(Bytes::from(out))
            }
        }
    });
    Response::from_parts(parts, Body::from_stream(events))
}

/// The part of an SSE answer read before its acknowledgement.
struct Search {
    /// Bytes of an event not complete yet.
    held: Vec<u8>,
    granted: Granted,
}

impl Search {
    /// The bytes to send on for `chunk`, and whether the search is over
    /// (the acknowledgement was found, or too much was read without it).
    fn feed(&mut self, chunk: &[u8]) -> (Vec<u8>, bool) {
        self.held.extend_from_slice(chunk);
        let mut out = Vec::with_capacity(self.held.len() + 64);
        let mut start = 0;
        while let Some(end) = find_event_end(&self.held[start..]) {
            let event = &self.held[start..start + end];
            start += end;
            if let Some(patched) = self.patched(event) {
                out.extend_from_slice(&patched);
                out.extend_from_slice(&self.held[start..]);
                return (out, true);
            }
            out.extend_from_slice(event);
        }
        let rest = self.held.split_off(start);
        if out.len() + rest.len() > SEARCH_LIMIT {
            tracing::warn!("a listen answer had no acknowledgement in its first 64 KiB");
            out.extend_from_slice(&rest);
            return (out, true);
        }
        self.held = rest;
        (out, false)
    }

    /// `event` (with its blank line) rewritten, if it is the acknowledgement.
    fn patched(&self, event: &[u8]) -> Option<Vec<u8>> {
        let text = std::str::from_utf8(event).ok()?;
        let data: Vec<&str> = text
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(|data| data.strip_prefix(' ').unwrap_or(data))
            .collect();
        if data.is_empty() {
            return None;
        }
        let mut message: Value = serde_json::from_str(&data.join("\n")).ok()?;
        if !is_acknowledgement_of(&message, &self.granted.id) {
            return None;
        }
        acknowledge(&mut message, &self.granted.task_ids);
        let mut rewritten = String::with_capacity(text.len() + 64);
        for line in text.lines().filter(|line| !line.is_empty()) {
            if !line.starts_with("data:") {
                rewritten.push_str(line);
                rewritten.push('\n');
            }
        }
        rewritten.push_str("data: ");
        rewritten.push_str(&message.to_string());
        rewritten.push_str("\n\n");
        Some(rewritten.into_bytes())
    }
}

/// The length of the first complete event in `bytes`, its blank line
/// included (events end with `\n\n` or `\r\n\r\n`).
fn find_event_end(bytes: &[u8]) -> Option<usize> {
    let lf = bytes.windows(2).position(|w| w == b"\n\n").map(|i| i + 2);
    let crlf = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| i + 4);
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;
    use axum::response::IntoResponse;
    use serde_json::json;

    fn granted() -> Granted {
        Granted {
            id: RequestId::Number(3),
            task_ids: vec!["t1".into()],
        }
    }

    fn ack(id: Value) -> String {
        json!({
            "jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
            "params": {
                "_meta": {"io.modelcontextprotocol/subscriptionId": id},
                "notifications": {},
            },
        })
        .to_string()
    }

    async fn body_of(chunks: Vec<String>) -> String {
        let stream = futures::stream::iter(
            chunks
                .into_iter()
                .map(|c| Ok::<_, std::io::Error>(Bytes::from(c))),
        );
        let mut response = Body::from_stream(stream).into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/event-stream"),
        );
        let response = acknowledge_in(response, granted());
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[tokio::test]
    async fn the_acknowledgement_gets_the_ids_even_split_across_chunks() {
        let event = format!("id: 0\ndata: {}\n\n", ack(json!(3)));
        let (a, b) = event.split_at(20);
        let later = "data: {\"later\":1}\n\n".to_string();
        let body = body_of(vec![
            "retry: 3000\n\n".into(),
            a.into(),
            b.into(),
            later.clone(),
        ])
        .await;
        let (priming, rest) = body.split_once("\n\n").unwrap();
        assert_eq!(priming, "retry: 3000");
        let (event, rest) = rest.split_once("\n\n").unwrap();
        assert!(event.starts_with("id: 0\ndata: "));
        let message: Value = serde_json::from_str(event.split_once("data: ").unwrap().1).unwrap();
        assert_eq!(message["params"]["notifications"]["taskIds"], json!(["t1"]));
        assert_eq!(rest, later);
    }

    #[tokio::test]
    async fn another_requests_acknowledgement_is_left_alone() {
        let event = format!("data: {}\n\n", ack(json!(4)));
        assert_eq!(body_of(vec![event.clone()]).await, event);
    }
}
