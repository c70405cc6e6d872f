//! The server's metrics over OTLP: the same figures as `GET /metrics`, read
//! from [`Metrics`] when the periodic reader collects (observable
//! instruments, nothing on the call path), and the duration histogram,
//! which [`Metrics`] records into as each call ends.
//!
//! Names follow the OpenTelemetry conventions: `mcp.server.operation.duration`
//! (seconds, the MCP semantic conventions' histogram), and `wharf.*` for the
//! rest.

use std::sync::Arc;

use opentelemetry::KeyValue;
use opentelemetry::metrics::Meter;

use crate::metrics::Metrics;

/// Registers the instruments on `meter`, reading `metrics`.
pub fn export(meter: &Meter, metrics: &Arc<Metrics>) {
    metrics.export_durations(
        meter
            .f64_histogram("mcp.server.operation.duration")
            .with_unit("s")
            .with_description("Duration of tools/call requests, by tool.")
            .with_boundaries(vec![
                0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
                30.0,
            ])
            .build(),
    );
    let source = metrics.clone();
    meter
        .u64_observable_counter("wharf.tool.calls")
        .with_description("Tool calls handled, by tool.")
        .with_callback(move |observer| {
            for (tool, calls, _) in source.tool_counts() {
                observer.observe(calls, &[KeyValue::new("gen_ai.tool.name", tool)]);
            }
        })
        .build();
    let source = metrics.clone();
    meter
        .u64_observable_counter("wharf.tool.errors")
        .with_description("Tool calls that ended in an error, by tool.")
        .with_callback(move |observer| {
            for (tool, _, errors) in source.tool_counts() {
                observer.observe(errors, &[KeyValue::new("gen_ai.tool.name", tool)]);
            }
        })
        .build();
    let source = metrics.clone();
    meter
        .i64_observable_up_down_counter("wharf.calls.in_flight")
        .with_description("Tool calls running now.")
        .with_callback(move |observer| observer.observe(source.calls_in_flight(), &[]))
        .build();
    let source = metrics.clone();
    meter
        .u64_observable_gauge("wharf.plugins.loaded")
        .with_description("Plugins loaded.")
        .with_callback(move |observer| observer.observe(source.plugins_loaded(), &[]))
        .build();
    let source = metrics.clone();
    meter
        .u64_observable_counter("wharf.reloads")
        .with_description("Reloads of the plugin folder.")
        .with_callback(move |observer| observer.observe(source.reloads(), &[]))
        .build();
}
