//! Legacy session termination answered the way clients expect.
//!
//! rmcp 3.11 answers a successful `DELETE /mcp` with 202. The spec leaves the
//! success status open, but the official Python SDK treats anything but 200 (or
//! 405) as a failed termination and warns, and the TypeScript reference server
//! answers 200, so Wharf does too.

use axum::http::{Method, StatusCode};
use axum::response::Response;

/// Turns rmcp's 202 for a successful session DELETE into 200.
pub fn delete_answers_ok(method: &Method, response: &mut Response) {
    if method == Method::DELETE && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::OK;
    }
}
