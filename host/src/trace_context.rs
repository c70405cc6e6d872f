//! W3C Trace Context (`traceparent`), as far as Wharf reads it itself: the
//! trace id of a request for its audit line. A leaf; a malformed value is
//! ignored, as the W3C recommendation says (the request starts a new trace).
//! Also the `tracing` target of the spans meant for OpenTelemetry export, so
//! the runtime can mark its spans without importing `telemetry`.

/// The `tracing` target of every span and span event meant for export
/// (`telemetry.rs`); no other layer sees it.
pub const SPAN_TARGET: &str = "wharf::otel";

/// The trace id (32 lower-case hex digits) of a valid version-00
/// `traceparent` (`00-TRACEID-PARENTID-FLAGS`), else `None`.
pub fn trace_id(traceparent: &str) -> Option<&str> {
    let mut parts = traceparent.trim().split('-');
    let (version, trace, parent, flags) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let hex = |s: &str, len: usize| {
        s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    };
    let nonzero = |s: &str| s.bytes().any(|b| b != b'0');
    // A later version may add fields after the flags; version 00 may not.
    let fields_ok = version != "00" || parts.next().is_none();
    (hex(version, 2)
        && version != "ff"
        && fields_ok
        && hex(trace, 32)
        && nonzero(trace)
        && hex(parent, 16)
        && nonzero(parent)
        && hex(flags, 2))
    .then_some(trace)
}

#[cfg(test)]
mod tests {
    use super::trace_id;

    #[test]
    fn reads_the_trace_id_of_a_valid_traceparent() {
        assert_eq!(
            trace_id("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
            Some("4bf92f3577b34da6a3ce929d0e0e4736")
        );
        // A later version may carry more fields.
        assert_eq!(
            trace_id("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-extra"),
            Some("4bf92f3577b34da6a3ce929d0e0e4736")
        );
    }

    #[test]
    fn ignores_a_malformed_traceparent() {
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
        ] {
            assert_eq!(trace_id(bad), None, "{bad}");
        }
    }
}
