//! Benchmark plugin: `nth_prime`, a CPU-bound tool for `cargo xtask bench`.
//!
//! The native baseline server (`bench/baseline`) runs the same function from
//! `wharf-bench-workload`, so the two servers differ only in how they host it.

use schemars::JsonSchema;
use serde::Deserialize;
use wharf_bench_workload::{MAX_N, answer};
use wharf_sdk::{Tool, ToolError, ToolOutput, Toolbox};

/// Arguments of `nth_prime`.
#[derive(Deserialize, JsonSchema)]
struct NthPrimeArgs {
    /// Which prime, 1-based (1 is 2), at most 200000.
    #[schemars(range(min = 1, max = 200000))]
    n: u32,
}

fn nth_prime(args: NthPrimeArgs) -> Result<ToolOutput, ToolError> {
    if !(1..=MAX_N).contains(&args.n) {
        return Err(ToolError::invalid_arguments(format!(
            "`n` must be between 1 and {MAX_N}, not {}",
            args.n
        )));
    }
    Ok(ToolOutput::text(answer(args.n)))
}

fn toolbox() -> Toolbox {
    Toolbox::new().with(
        Tool::new("nth_prime", nth_prime)
            .title("N-th prime")
            .description("Finds the n-th prime by trial division (CPU-bound on purpose).")
            .read_only()
            .idempotent()
            .open_world(false),
    )
}

wharf_sdk::export_plugin!(toolbox);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers() {
        let output = toolbox().call("nth_prime", r#"{"n":1000}"#).unwrap();
        assert_eq!(output.text_summary(), "prime #1000 is 7919");
    }
}
