//! The ids of the client's requests that rmcp is serving, so that a second
//! request with an id already in flight is refused instead of losing an answer.
//!
//! rmcp's serve loop keys each request it serves by its id (`local_ct_pool`, a
//! `HashMap<RequestId, CancellationToken>`): a second request with an id in
//! flight replaces the first one's entry, the first answer to come back takes
//! that entry, and the other answer finds none and is dropped as if cancelled.
//! `notifications/cancelled` names requests by id too, so answering both (by
//! giving rmcp ids of our own) would still leave a cancel ambiguous. JSON-RPC
//! and MCP require ids to be unique among a client's requests in flight
//! (basic, "Requests"), so a duplicate is an invalid request: the screen
//! answers it at once with `-32600` carrying its id, and the request already
//! in flight runs on and is answered as usual.
//!
//! Two ids are the same when rmcp would key them the same: ids are read as
//! rmcp reads them (`RequestId`: a string, or an integer in `i64`), so a number
//! is compared by its integer value however it is written (`1`, `1.0` and
//! `1e0` are one id, `0` and `-0` another) and a string by its characters after
//! unescaping (`"a"` and `"\u0061"`); a string is never a number (`"1"` is not
//! `1`).
//!
//! An id leaves the set when its answer goes out (every response and error
//! passes through the transport's `send`) or when the client cancels it
//! (rmcp then sends no answer).

use std::collections::HashSet;

use rmcp::model::{ErrorData, RequestId};

/// The ids of the requests handed to rmcp and not yet answered or cancelled.
#[derive(Default)]
pub(super) struct InFlight {
    ids: HashSet<RequestId>,
}

impl InFlight {
    /// Records `id` as in flight; `false` if it already was.
    pub(super) fn admit(&mut self, id: &RequestId) -> bool {
        self.ids.insert(id.clone())
    }

    /// Forgets `id`: its answer is going out, or the client cancelled it.
    pub(super) fn end(&mut self, id: &RequestId) {
        self.ids.remove(id);
    }

    /// How many requests are in flight.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.ids.len()
    }
}

/// The `-32600` for a request whose id is already in flight.
pub(super) fn duplicate(id: &RequestId) -> ErrorData {
    let shown = serde_json::to_string(id).unwrap_or_else(|_| id.to_string());
    ErrorData::invalid_request(
        format!(
            "Invalid Request: id {shown} is already in use by a request in flight; \
             ids must be unique among requests in flight"
        ),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The id of `line`'s request, read as the screen reads it.
    fn id_of(line: &str) -> RequestId {
        match super::super::screen::request_id(line.as_bytes()) {
            Some(id) => id,
            None => panic!("no request id in {line}"),
        }
    }

    fn ping(id: &str) -> String {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#)
    }

    #[test]
    fn a_second_request_with_an_id_in_flight_is_refused() {
        let mut in_flight = InFlight::default();
        assert!(in_flight.admit(&RequestId::Number(5)));
        assert!(!in_flight.admit(&RequestId::Number(5)));
        assert!(in_flight.admit(&RequestId::Number(6)));
        in_flight.end(&RequestId::Number(5));
        assert!(
            in_flight.admit(&RequestId::Number(5)),
            "answered: free again"
        );
        assert_eq!(in_flight.len(), 2);
    }

    #[test]
    fn numbers_are_one_id_however_they_are_written() {
        for (a, b) in [
            ("1", "1.0"),
            ("1", "1e0"),
            ("100", "1e2"),
            ("0", "-0"),
            ("0", "-0.0"),
        ] {
            assert_eq!(id_of(&ping(a)), id_of(&ping(b)), "{a} and {b}");
            let mut in_flight = InFlight::default();
            assert!(in_flight.admit(&id_of(&ping(a))));
            assert!(!in_flight.admit(&id_of(&ping(b))), "{a} then {b}");
        }
    }

    #[test]
    fn strings_are_one_id_by_their_characters() {
        assert_eq!(id_of(&ping(r#""a""#)), id_of(&ping(r#""\u0061""#)));
        assert_ne!(id_of(&ping(r#""1""#)), id_of(&ping("1")));
        assert_ne!(id_of(&ping(r#""a""#)), id_of(&ping(r#""A""#)));
        assert_ne!(id_of(&ping(r#""1.0""#)), id_of(&ping(r#""1""#)));
        let mut in_flight = InFlight::default();
        assert!(in_flight.admit(&id_of(&ping("1"))));
        assert!(in_flight.admit(&id_of(&ping(r#""1""#))));
    }

    #[test]
    fn the_error_names_the_id_as_sent_in_json() {
        assert_eq!(
            duplicate(&RequestId::Number(5)).message,
            "Invalid Request: id 5 is already in use by a request in flight; \
             ids must be unique among requests in flight"
        );
        assert_eq!(
            duplicate(&RequestId::String("5".into())).message,
            "Invalid Request: id \"5\" is already in use by a request in flight; \
             ids must be unique among requests in flight"
        );
        assert_eq!(duplicate(&RequestId::Number(5)).code.0, -32600);
    }
}
