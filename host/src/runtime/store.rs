//! The store of one call, made in one place with every limit installed on it
//! (as spin's `StoreBuilder` does): the memory cap as its limiter, the epoch
//! deadline that stops guest code at its time limit or on cancellation, and
//! its fuel. `limits.rs` lists every limit and where it is enforced.

use std::sync::Arc;
use std::time::Instant;

use wasmtime::{Engine, Store, StoreContextMut, UpdateDeadline};

use super::epoch::EpochTicker;
use super::failure::{CallFailure, Interrupt, InterruptTrap};
use super::state::{CallContext, HostState, Sandbox};

/// A new store for a call of `plugin` with `ctx`, under its sandbox's
/// limits and grants.
pub(crate) fn call_store(
    engine: &Engine,
    plugin: Arc<str>,
    sandbox: &Arc<Sandbox>,
    ctx: CallContext,
    epoch: &EpochTicker,
) -> Result<Store<HostState>, CallFailure> {
    let state = HostState::new(plugin, sandbox.clone(), ctx, epoch.use_epoch())
        .map_err(|e| CallFailure::Setup(e.to_string()))?;
    let mut store = Store::new(engine, state);
    store.limiter(|state| &mut state.limits);
    store.epoch_deadline_callback(at_epoch_tick);
    // A plugin with a fuel limit was compiled by the metered engines
    // (see `engine::Compilers`); the others count none.
    if let Some(fuel) = sandbox.limits.fuel {
        store
            .set_fuel(fuel)
            .map_err(|e| CallFailure::Setup(format!("{e:#}")))?;
    }
    store.set_epoch_deadline(1);
    Ok(store)
}

/// Runs at every epoch tick while guest code runs: stops a cancelled call or
/// one past its deadline (with a trap that says which), else yields to the
/// other tasks and counts the tick.
fn at_epoch_tick(mut store: StoreContextMut<'_, HostState>) -> wasmtime::Result<UpdateDeadline> {
    let state = store.data_mut();
    let interrupt = if state.is_cancelled() {
        Interrupt::Cancelled
    } else if state.clock.expired(Instant::now()) {
        Interrupt::Deadline
    } else {
        // tokio's yield puts the task behind the others; a plain waker
        // would land in the LIFO slot and starve them.
        state.epoch_ticks.saw_one();
        return Ok(UpdateDeadline::YieldCustom(
            1,
            Box::pin(tokio::task::yield_now()),
        ));
    };
    Err(wasmtime::Error::new(InterruptTrap(interrupt)))
}
