//! How a pooled memory is reset between instances (vendor/wasmtime's
//! changes to it: the scan past a full buffer, and the reset without a
//! scan): every page a guest wrote goes back to its initial contents, and
//! stays resident for the next instance.

use std::process::Command;

use wasmtime::{
    Config, Engine, FaultCount, Instance, InstanceAllocationStrategy, Module,
    PoolingAllocationConfig, Store, TypedFunc,
};

use crate::runtime::engine::pool_config;
use crate::runtime::limits::Ceilings;

/// An engine with Wharf's pool settings and one slot, so that every
/// instance takes the same memory; `None` (the test skipped) without
/// `PAGEMAP_SCAN`.
fn one_slot_engine() -> Option<Engine> {
    if !PoolingAllocationConfig::is_pagemap_scan_available() {
        eprintln!("skipped: no PAGEMAP_SCAN on this kernel");
        return None;
    }
    let ceilings = Ceilings {
        memory_bytes: 16 << 20,
        ..Ceilings::default()
    };
    let mut config = Config::new();
    config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool_config(
        1, &ceilings,
    )));
    Some(Engine::new(&config).unwrap())
}

/// A pooled memory whose guest wrote more disjoint runs of pages than one
/// `PAGEMAP_SCAN` reports (32) keeps every written page resident after its
/// reset, as `linear_memory_keep_resident` allows: the next instance in the
/// slot finds them mapped instead of faulting each in again. Upstream
/// wasmtime decommits everything after the 32nd run (vendor/wasmtime).
#[test]
fn scattered_dirty_pages_stay_resident() {
    let Some(engine) = one_slot_engine() else {
        return;
    };
    const PAGES: u32 = 128;
    // `scatter` writes one byte to every other host page: 64 disjoint runs.
    let module = Module::new(
        &engine,
        format!(
            r#"(module
                (memory (export "memory") 8)
                (func (export "scatter")
                    (local $page i32)
                    (loop $next
                        (i32.store8 (i32.mul (local.get $page) (i32.const 4096)) (i32.const 1))
                        (local.set $page (i32.add (local.get $page) (i32.const 2)))
                        (br_if $next (i32.lt_u (local.get $page) (i32.const {PAGES}))))))"#
        ),
    )
    .unwrap();
    let run = || {
        let mut store = Store::new(&engine, ());
        let instance = Instance::new(&mut store, &module, &[]).unwrap();
        let memory = instance.get_memory(&mut store, "memory").unwrap();
        let base = memory.data_ptr(&store) as usize;
        let scatter = instance
            .get_typed_func::<(), ()>(&mut store, "scatter")
            .unwrap();
        (store, base, scatter)
    };

    let (mut first, _, scatter) = run();
    scatter.call(&mut first, ()).unwrap();
    drop(first);

    // The same module's next instance takes the same (only) slot; nothing
    // touches its memory before its pages are looked up.
    let (second, base, _) = run();
    let written: Vec<usize> = (0..PAGES as usize).step_by(2).collect();
    let resident = written
        .iter()
        .filter(|&&page| page_present(base + page * 4096))
        .count();
    assert_eq!(resident, written.len(), "written pages still mapped");
    drop(second);
}

/// The test below, in a process of its own: there no other test's page
/// faults keep the memo from being used.
#[test]
fn a_reset_without_a_scan_still_resets_every_written_page() {
    const CHILD: &str = "runtime::engine::tests::memory_reset::reset_from_the_memo";
    let output = Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", CHILD, "--test-threads", "1"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A page the first scan of a slot's memory found is reset by the next
/// resets without a scan while the process takes no page fault (the patched
/// wasmtime's `ScanMemo`); a page first written after that scan faulted,
/// so the next reset scans and finds it. Run by the test above.
#[test]
#[ignore = "run in a process of its own by a_reset_without_a_scan_still_resets_every_written_page"]
fn reset_from_the_memo() {
    // The memo is used only with transparent huge pages off, as Wharf
    // turns them off before `main`.
    // SAFETY: PR_SET_THP_DISABLE takes integer arguments only.
    assert_eq!(
        unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) },
        0
    );
    let Some(engine) = one_slot_engine() else {
        return;
    };
    // Host page 1 holds the data segment (the memory's image); the rest
    // of the memory starts zeroed.
    let module = Module::new(
        &engine,
        r#"(module
            (memory (export "memory") 2)
            (data (i32.const 4096) "\2a\00\00\00")
            (func (export "poke") (param $page i32) (param $value i32)
                (i32.store (i32.mul (local.get $page) (i32.const 4096)) (local.get $value)))
            (func (export "peek") (param $page i32) (result i32)
                (i32.load (i32.mul (local.get $page) (i32.const 4096)))))"#,
    )
    .unwrap();
    const IMAGE: i32 = 42;
    // One instance: checks what `peeks` finds, then writes `pokes`; its
    // memory's address comes back once the instance (and so its memory's
    // reset) is done. Its store is dropped as the upkeep thread drops a
    // batch (`FaultCount::drop_store`) if `batch`, else plainly.
    let instance = |peeks: &[(i32, i32)], pokes: &[(i32, i32)], batch: Dropped| {
        let mut store = Store::new(&engine, ());
        let instance = Instance::new(&mut store, &module, &[]).unwrap();
        let base = instance
            .get_memory(&mut store, "memory")
            .unwrap()
            .data_ptr(&store) as usize;
        let peek: TypedFunc<i32, i32> = instance.get_typed_func(&mut store, "peek").unwrap();
        let poke: TypedFunc<(i32, i32), ()> = instance.get_typed_func(&mut store, "poke").unwrap();
        for &(page, expected) in peeks {
            let found = peek.call(&mut store, page).unwrap();
            assert_eq!(found, expected, "page {page} after a reset");
        }
        for &(page, value) in pokes {
            poke.call(&mut store, (page, value)).unwrap();
        }
        match batch {
            // SAFETY: the store's calls are over before the reading.
            Dropped::Batch => unsafe { FaultCount::now().drop_store(store) },
            Dropped::Plain => drop(store),
        }
        base
    };
    let page = |base: usize, page: usize| base + page * 4096;

    // A few rounds: the first reset scans; later ones use the memo.
    for batch in [Dropped::Plain, Dropped::Batch].repeat(4) {
        let base = instance(&[(1, IMAGE), (3, 0)], &[(1, 7), (3, 9)], batch);
        assert!(page_present(page(base, 3)));
    }
    // A page the scan found, taken away without a fault: a reset from the
    // memo writes it (zeroes) and so maps it again; a scan would not see it.
    // That write faults, so each time a round that scans comes first.
    for batch in [Dropped::Plain, Dropped::Batch] {
        let base = instance(&[(1, IMAGE), (3, 0)], &[(1, 7), (3, 9)], Dropped::Plain);
        // SAFETY: the page is in the slot's memory, which no instance uses
        // now; `MADV_DONTNEED` leaves it reading as zeroes, its initial
        // contents.
        let dropped = unsafe { libc::madvise(page(base, 3) as *mut _, 4096, libc::MADV_DONTNEED) };
        assert_eq!(dropped, 0);
        assert!(!page_present(page(base, 3)));
        instance(&[], &[], batch);
        assert!(
            page_present(page(base, 3)),
            "the reset used the memo, not a scan"
        );
    }

    // A page written for the first time since: its write faulted, so the
    // next reset scans, and the instance after it finds the page zeroed.
    for (batch, fresh) in [(Dropped::Plain, 20), (Dropped::Batch, 21)] {
        instance(&[(1, IMAGE), (3, 0)], &[(fresh, 5), (1, 7)], batch);
        instance(&[(fresh, 0), (1, IMAGE), (3, 0)], &[], batch);
    }
}

/// How [`reset_from_the_memo`] drops a store.
#[derive(Clone, Copy)]
enum Dropped {
    Plain,
    Batch,
}

/// Whether this process has the page at `address` mapped (`/proc/self/pagemap`,
/// bit 63), without touching it.
fn page_present(address: usize) -> bool {
    use std::io::{Read, Seek, SeekFrom};

    let mut pagemap = std::fs::File::open("/proc/self/pagemap").unwrap();
    pagemap
        .seek(SeekFrom::Start((address / 4096 * 8) as u64))
        .unwrap();
    let mut entry = [0u8; 8];
    pagemap.read_exact(&mut entry).unwrap();
    u64::from_le_bytes(entry) >> 63 == 1
}
