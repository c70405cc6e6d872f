//! The work behind the compute-heavy benchmark tool (`compute_nth_prime`).
//!
//! One crate, compiled both into the Wharf bench plugin (wasm32-wasip2) and into
//! the native rmcp baseline, so both servers run exactly the same algorithm and
//! the comparison isolates what the host adds (and what WebAssembly costs).

/// Largest `n` the tool accepts (the 200 000th prime is 2 750 159).
pub const MAX_N: u32 = 200_000;

/// The `n`-th prime (1-based: `nth_prime(1) == 2`), by trial division with odd
/// divisors. Deliberately naive: deterministic, allocation-free, CPU-bound.
pub fn nth_prime(n: u32) -> u64 {
    if n <= 1 {
        return 2;
    }
    let mut found = 1;
    let mut candidate: u64 = 1;
    while found < n {
        candidate += 2;
        if is_odd_prime(candidate) {
            found += 1;
        }
    }
    candidate
}

fn is_odd_prime(candidate: u64) -> bool {
    let mut divisor = 3;
    while divisor * divisor <= candidate {
        if candidate.is_multiple_of(divisor) {
            return false;
        }
        divisor += 2;
    }
    true
}

/// The tool's text answer, identical in both servers.
pub fn answer(n: u32) -> String {
    format!("prime #{n} is {}", nth_prime(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_primes() {
        assert_eq!(nth_prime(1), 2);
        assert_eq!(nth_prime(2), 3);
        assert_eq!(nth_prime(6), 13);
        assert_eq!(nth_prime(1000), 7919);
        assert_eq!(nth_prime(10_000), 104_729);
        assert_eq!(answer(4), "prime #4 is 7");
    }
}
