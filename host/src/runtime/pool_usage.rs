//! What the instance pools hold right now, summed over every pooled engine
//! (Cranelift's and Winch's, unmetered and metered): slots in use and the
//! memory idle slots keep resident. A slot that stays in use after its call
//! has ended is a leak no RSS reading shows until the pool is full, so the
//! soak and `/metrics` read these.

use wasmtime::Engine;

use super::load::Runtime;

/// Slots of the pooling allocator in use, and resident bytes of idle ones.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolUsage {
    /// Component instances (a running call's, a spare, or one waiting to be
    /// retired).
    pub component_instances: u64,
    /// Core instances inside those components.
    pub core_instances: u64,
    /// Linear memories.
    pub memories: u64,
    /// Fiber stacks.
    pub stacks: u64,
    /// Bytes that idle memory slots keep resident (kept warm for reuse).
    pub idle_memory_bytes_resident: u64,
}

impl PoolUsage {
    fn add(&mut self, engine: &Engine) {
        let Some(pool) = engine.pooling_allocator_metrics() else {
            return;
        };
        self.component_instances += pool.component_instances();
        self.core_instances += pool.core_instances();
        self.memories += pool.memories() as u64;
        self.stacks += pool.stacks() as u64;
        self.idle_memory_bytes_resident += pool.unused_memory_bytes_resident() as u64;
    }
}

impl Runtime {
    /// The pools' usage now; `None` if instances are allocated on demand.
    pub fn pool_usage(&self) -> Option<PoolUsage> {
        if !self.is_pooled() {
            return None;
        }
        let mut usage = PoolUsage::default();
        let metered = self.metered.get().map(|m| m.engines()).unwrap_or_default();
        for engine in self.unmetered.engines().iter().chain(&metered) {
            usage.add(engine);
        }
        Some(usage)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use crate::runtime::test_support::{count, counter, load, two_calls};
    use crate::runtime::{CallContext, CallLimits, RuntimeOptions};

    /// Polls `usage` (at most ten seconds) until `done` holds.
    async fn until(runtime: &crate::runtime::Runtime, done: impl Fn(u64) -> bool) -> u64 {
        let mut seen = 0;
        for _ in 0..1000 {
            seen = runtime.pool_usage().unwrap().component_instances;
            if done(seen) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        seen
    }

    #[tokio::test]
    async fn a_running_call_holds_a_slot_and_gives_it_back() {
        let runtime = Arc::new(two_calls(RuntimeOptions {
            spares: 0,
            quick_compile: false,
            ..RuntimeOptions::default()
        }));
        if !runtime.is_pooled() {
            eprintln!("no instance pool on this machine; nothing to check");
            return;
        }
        assert_eq!(runtime.pool_usage().unwrap(), Default::default());
        let plugin = load(
            &runtime,
            "slow",
            counter(400_000_000, 7),
            CallLimits::default(),
        )
        .await;
        let call = tokio::spawn(async move { count(&plugin, CallContext::default()).await });
        assert_eq!(until(&runtime, |n| n == 1).await, 1, "the call's instance");
        assert_eq!(call.await.unwrap().unwrap(), 1);
        assert_eq!(until(&runtime, |n| n == 0).await, 0, "the retired instance");
    }
}
