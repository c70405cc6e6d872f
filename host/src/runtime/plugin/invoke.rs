//! The one way a request runs guest code (as rmcp has one
//! `ToolCallContext::invoke`): every tool call, prompt, resource read,
//! completion and listing goes through [`Plugin::invoke`], and says only
//! which export it calls and with what.
//!
//! 1. admission: a place in the plugin's and the server's concurrency limits
//!    (a call is refused at once when there is none; a listing waits);
//! 2. the export, found in the plugin's current code before an instance is
//!    made (a plugin without it fails the request for free);
//! 3. a fresh instance: the plugin's spare, or one made now;
//! 4. the guest work, raced against cancellation and the time limit (see
//!    `guard`), on the thread the plugin's placement says;
//! 5. the conclusion: a trap named (`HostState::failure`), a refused network
//!    use failing the call, the store retired after the answer, and the
//!    plugin's next spare made.
//!
//! The output-size check is the caller's last step, on its own result type
//! ([`Plugin::check_output_size`]).

use futures::future::BoxFuture;
use tracing::Instrument as _;
use wasmtime::Store;
use wasmtime::component::Instance;

use super::Plugin;
use crate::runtime::admission::Slot;
use crate::runtime::bindings::exports::wharf::plugin as wit;
use crate::runtime::code::{Code, Exports};
use crate::runtime::failure::CallFailure;
use crate::runtime::guard::{Guarded, guarded, guarded_by_clock};
use crate::runtime::state::{CallContext, HostState};
use crate::trace_context::SPAN_TARGET;

/// How a request is admitted, timed and ended: what differs between a
/// client's request and a listing at load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Request {
    /// A client's request: refused at once when the plugin or the server is
    /// at its concurrency limit, run where the placement says, timed as
    /// given, and concluded (refusals checked, store retired, spare made).
    Call(TimeLimit),
    /// Asking a plugin what it offers, at load: waits for a place in the
    /// server's limit (loading must not depend on how busy the server is),
    /// runs inline under the plugin's time limit, and makes no spare.
    Listing,
}

/// Which clock a request's time limit follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TimeLimit {
    /// The plugin's time limit, from the start of the request.
    Fixed,
    /// The call's clock, which stands still while the client is asked
    /// something (requests whose guest may call `host.ask`).
    Clock,
}

/// An export of a plugin's code that a request calls: picked from the code
/// before an instance is made, then found in the instance (a type check, no
/// guest code).
pub(super) trait Export {
    /// The export as found in one instance, handed to the request's work.
    type Bound: Send + 'static;

    fn bind(
        self,
        store: &mut Store<HostState>,
        instance: &Instance,
    ) -> wasmtime::Result<Self::Bound>;
}

/// The `wharf:plugin` interfaces: their bindings' indices load them.
macro_rules! wharf_interface_exports {
    ($($interface:ident),*) => {$(
        impl Export for wit::$interface::GuestIndices {
            type Bound = wit::$interface::Guest;

            fn bind(
                self,
                store: &mut Store<HostState>,
                instance: &Instance,
            ) -> wasmtime::Result<Self::Bound> {
                self.load(store, instance)
            }
        }
    )*};
}

wharf_interface_exports!(tools, prompts, resources);

/// The places a request holds in the concurrency limits while it runs.
struct Admitted {
    _own: Option<Slot>,
    _all: Slot,
}

impl Plugin {
    /// Runs one request's guest work in a fresh instance (see the module
    /// doc): `find` picks the export from the plugin's code, and `work`
    /// calls it as found in the instance.
    pub(super) async fn invoke<E, R, W>(
        &self,
        request: Request,
        ctx: CallContext,
        find: impl FnOnce(&Exports) -> Result<E, CallFailure>,
        work: W,
    ) -> Result<R, CallFailure>
    where
        E: Export,
        W: for<'s> FnOnce(&'s mut Store<HostState>, E::Bound) -> BoxFuture<'s, wasmtime::Result<R>>
            + Send
            + 'static,
        R: Send + 'static,
    {
        let _admitted = self.admit(request).await?;
        let code = self.code.load_full();
        let found = find(&code.exports)?;
        let traced = matches!(request, Request::Call(_));
        let (mut store, instance) = self
            .fresh_instance(&code, ctx)
            .instrument(self.phase_span(traced, "instantiate"))
            .await?;
        let bound = found
            .bind(&mut store, &instance)
            .map_err(|e| CallFailure::Setup(format!("{e:#}")))?;
        let cancel = store.data().call_cancel();
        let time = match request {
            Request::Listing => {
                store.data_mut().mark_listing();
                let outcome =
                    guarded(&cancel, self.limits().timeout, work(&mut store, bound)).await;
                return self.finish(&store, outcome);
            }
            Request::Call(time) => time,
        };
        let timeout = self.limits().timeout;
        let clock = store.data().clock.clone();
        let (store, outcome) = self
            .placed(store, move |store| {
                Box::pin(async move {
                    let work = work(store, bound);
                    match time {
                        TimeLimit::Fixed => guarded(&cancel, timeout, work).await,
                        TimeLimit::Clock => guarded_by_clock(&cancel, &clock, work).await,
                    }
                })
            })
            .instrument(self.phase_span(traced, "guest call"))
            .await;
        self.conclude(store, outcome)
    }

    /// The span of one phase of a client's request (`traced`), a child of
    /// the request's; none for a listing at load. Disabled, at the cost of a
    /// cached check, unless traces are exported.
    fn phase_span(&self, traced: bool, phase: &'static str) -> tracing::Span {
        if !traced {
            return tracing::Span::none();
        }
        tracing::info_span!(
            target: SPAN_TARGET,
            "wharf.phase",
            "otel.name" = phase,
            "wharf.plugin.name" = &*self.name,
        )
    }

    /// A place in this plugin's and the server's concurrency limits for a
    /// call, or the reason there is none (calls are refused, not queued); a
    /// listing waits for a place in the server's.
    async fn admit(&self, request: Request) -> Result<Admitted, CallFailure> {
        if request == Request::Listing {
            return Ok(Admitted {
                _own: None,
                _all: self.all_calls.take().await,
            });
        }
        let own = self
            .calls
            .try_take()
            .ok_or(CallFailure::PluginBusy(self.calls.limit()))?;
        let all = self
            .all_calls
            .try_take()
            .ok_or(CallFailure::ServerBusy(self.all_calls.limit()))?;
        Ok(Admitted {
            _own: Some(own),
            _all: all,
        })
    }

    /// Instantiates a plain component once, to see that it starts. Waits for a
    /// free call slot, as loading does.
    pub(super) async fn start_once(&self) -> Result<(), CallFailure> {
        let _slot: Slot = self.all_calls.take().await;
        self.new_instance(&self.code.load(), CallContext::default())
            .await
            .map(|_| ())
    }

    /// Runs guest work on `store` where this plugin's placement says (on
    /// the stdio server, a worker thread once it runs long), and gives the
    /// store back with the outcome.
    async fn placed<R, W>(&self, mut store: Store<HostState>, work: W) -> (Store<HostState>, R)
    where
        W: for<'s> FnOnce(&'s mut Store<HostState>) -> BoxFuture<'s, R> + Send + 'static,
        R: Send + 'static,
    {
        let ticks = store.data().epoch_ticks.clone();
        self.placement
            .run(&ticks, async move {
                let outcome = work(&mut store).await;
                (store, outcome)
            })
            .await
    }

    /// An instance for the call `ctx` that no other call has used: the
    /// plugin's spare if it has one (see `instances`), else one made now.
    async fn fresh_instance(
        &self,
        code: &Code,
        ctx: CallContext,
    ) -> Result<(Store<HostState>, Instance), CallFailure> {
        match code.instances.take_spare(ctx) {
            Ok(spare) => Ok(spare),
            Err(ctx) => self.new_instance(code, ctx).await,
        }
    }

    /// An instance made now, in a new store for the call `ctx`.
    async fn new_instance(
        &self,
        code: &Code,
        ctx: CallContext,
    ) -> Result<(Store<HostState>, Instance), CallFailure> {
        let mut store = code.instances.new_store(ctx)?;
        let instance = code.instances.instantiate(&mut store).await;
        let instance = self.finish(&store, instance)?;
        Ok((store, instance))
    }

    /// Ends a call: [`finish`](Self::finish), then any request the sandbox
    /// refused during the call (a refused request fails the call even if the
    /// plugin handled the refusal). The store is dropped once the answer is out
    /// (see `retire`), and the plugin's current code makes its next spare.
    fn conclude<T>(
        &self,
        store: Store<HostState>,
        outcome: Guarded<wasmtime::Result<T>>,
    ) -> Result<T, CallFailure> {
        let concluded =
            self.finish(&store, outcome)
                .and_then(|value| match store.data().refusal() {
                    Some(refusal) => Err(refusal),
                    None => Ok(value),
                });
        let instances = &self.code.load().instances;
        let refills = instances.refill();
        self.retirer.retire(store, refills, instances.is_busy());
        concluded
    }

    /// Turns the outcome of guest code into a value or the failure that stopped it,
    /// and logs what the guest printed.
    fn finish<T>(
        &self,
        store: &Store<HostState>,
        outcome: Guarded<wasmtime::Result<T>>,
    ) -> Result<T, CallFailure> {
        let state = store.data();
        state.flush_output();
        match outcome {
            Guarded::Cancelled => Err(CallFailure::Cancelled),
            Guarded::TimedOut => Err(CallFailure::Timeout(self.limits().timeout)),
            Guarded::Done(Ok(value)) => Ok(value),
            Guarded::Done(Err(error)) => Err(state.failure(error)),
        }
    }

    /// Fails a request whose output weighs `size` bytes, if that is over the limit.
    pub(super) fn check_output_size(&self, size: usize) -> Result<(), CallFailure> {
        let limit = self.limits().max_output_bytes;
        if size > limit {
            Err(CallFailure::OutputTooLarge { size, limit })
        } else {
            Ok(())
        }
    }
}
