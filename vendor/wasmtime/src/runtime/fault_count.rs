//! Patched for Wharf (see PATCHED.md): one reading of the process's
//! page-fault count for a batch of stores dropped together.
//!
//! A pooled memory's reset may skip its `PAGEMAP_SCAN` when the process has
//! taken no page fault since the memory's last scan (see `ScanMemo` in
//! `runtime/vm/sys/unix/pagemap.rs`). Each reset reads the count with
//! `getrusage`, which sums every thread's CPU time as well and costs about
//! a microsecond; a batch of stores dropped together can share one reading.

use crate::Store;

/// A reading of the process's page-fault count, taken by [`FaultCount::now`],
/// for the memory resets of stores dropped with [`FaultCount::drop_store`].
#[derive(Debug, Clone, Copy)]
pub struct FaultCount(Option<u64>);

impl FaultCount {
    /// Reads the count now; a reading that cannot serve (no count, or
    /// transparent huge pages not disabled for the process) makes each
    /// reset read its own, as a plain drop does.
    pub fn now() -> Self {
        #[cfg(has_virtual_memory)]
        let faults = crate::runtime::vm::process_faults_for_memo();
        #[cfg(not(has_virtual_memory))]
        let faults = None;
        FaultCount(faults)
    }

    /// Drops `store`; the resets of its pooled memories compare this
    /// reading instead of taking one each.
    ///
    /// # Safety
    ///
    /// No guest code ran in `store` after this reading was taken: the store
    /// was done with (its calls returned or were dropped) before
    /// [`FaultCount::now`] was called. A page its guest first wrote after
    /// the reading would otherwise not be reset, and the next instance in
    /// the same slot could read it.
    pub unsafe fn drop_store<T: 'static>(&self, store: Store<T>) {
        match self.0 {
            #[cfg(has_virtual_memory)]
            Some(faults) => crate::runtime::vm::with_fault_reading(faults, || drop(store)),
            _ => drop(store),
        }
    }
}
