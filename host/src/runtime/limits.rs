//! Limits applied to every plugin call.

use std::time::Duration;

/// How much a single call may use before it is stopped.
///
/// Every call gets a fresh instance with these limits; exceeding one ends that
/// call with an error that names the limit, never the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallLimits {
    /// Wall-clock time from instantiation to the call's return.
    pub timeout: Duration,
    /// Linear memory, in bytes, across all memories of the instance.
    pub memory_bytes: usize,
    /// Bytes of stdout and stderr kept from one call (the rest is dropped).
    pub captured_output_bytes: usize,
}

impl Default for CallLimits {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(30),
            memory_bytes: 256 << 20,
            captured_output_bytes: 64 << 10,
        }
    }
}

impl CallLimits {
    /// The memory limit in whole MiB, for messages.
    pub fn memory_mib(&self) -> usize {
        self.memory_bytes >> 20
    }
}
