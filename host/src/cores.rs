//! How many cores this process may use, asked once.
//!
//! `std::thread::available_parallelism` reads the cgroup's CPU quota from
//! `/proc` and `/sys` on every call (five file reads on Linux), and several
//! parts of a start ask: the gates, the folder's reads, the HTTP serving
//! threads, the stdio busy-poll. A quota changed while the server runs is
//! not seen; none of those would resize anyway.

use std::sync::OnceLock;

/// The cores this process may use (at least 1).
pub fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

#[cfg(test)]
mod tests {
    #[test]
    fn is_what_the_standard_library_says_once_asked() {
        let expected = std::thread::available_parallelism().map_or(1, usize::from);
        assert_eq!(super::cores(), expected);
        assert_eq!(super::cores(), expected);
    }
}
