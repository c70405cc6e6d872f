//! Compiling a component, through the compile cache: where a plugin's code
//! comes from. [`compile`] is the load-time path (cached optimised code, else
//! Winch's quick compile, else Cranelift's); [`optimize`] is Cranelift's
//! compile, shared with the tier-up (see `tiers`). `cache.rs` keeps the
//! compiled code on disk and checks it before it is loaded.

mod gate;

use std::sync::Arc;

use wasmtime::Engine;
use wasmtime::component::Component;

use super::cache::{CompiledCache, ContentHash};
use super::code::Tier;
use super::engine::Compilers;
use super::failure::LoadError;
use super::function_cache::FunctionCache;
use gate::{CACHE_READS, COMPILES};

/// A compiled component, and its bytes if Winch compiled it (they are
/// compiled again by Cranelift).
pub(crate) struct Compiled {
    /// Shared with the other plugins of the same bytes when Cranelift made it
    /// (see `shared`); Winch's is the plugin's own until it is replaced.
    pub(crate) component: Arc<Component>,
    pub(crate) quick_from: Option<Vec<u8>>,
}

impl Compiled {
    pub(crate) fn tier(&self) -> Tier {
        match self.quick_from {
            Some(_) => Tier::Quick,
            None => Tier::Optimized,
        }
    }
}

/// Compiles on a blocking thread (off the async executor): the component
/// of a plugin alive with these exact bytes, if there is one; else
/// Cranelift's code from the cache if these bytes were compiled before; else,
/// if the runtime serves quick compiles, Winch's, from its own cache or
/// compiled now (and cached: a server stopped before the optimised code was
/// ready starts as fast next time); else Cranelift's, compiled now and cached.
/// `hash` is the SHA-256 of `bytes`, which the caller keeps too. Compiles
/// and reads of the caches each wait for a turn at their gate (see `gate`).
pub(crate) async fn compile(
    compilers: &Arc<Compilers>,
    functions: &Arc<FunctionCache>,
    bytes: Vec<u8>,
    hash: ContentHash,
) -> Result<Compiled, LoadError> {
    let found = {
        let compilers = compilers.clone();
        CACHE_READS
            .run(move || compiled_before(&compilers, &hash, bytes))
            .await
            .map_err(join_failed)?
    };
    let bytes = match found {
        Ok(compiled) => return Ok(compiled),
        Err(bytes) => bytes,
    };
    let compilers = compilers.clone();
    let functions = functions.clone();
    COMPILES
        .run(move || {
            // A plugin of the same bytes may have compiled while this one waited.
            if let Some(component) = compilers.optimized.shared.get(&hash) {
                return Ok(Compiled {
                    component,
                    quick_from: None,
                });
            }
            compile_now(&compilers, &functions, &hash, bytes)
        })
        .await
        .map_err(join_failed)?
}

/// The compiled code of `hash` that needs no compile (another plugin's, or
/// the optimised or quick code in the caches), or else `bytes` back.
fn compiled_before(
    compilers: &Compilers,
    hash: &ContentHash,
    bytes: Vec<u8>,
) -> Result<Compiled, Vec<u8>> {
    let optimized = &compilers.optimized;
    if let Some(component) = optimized.shared.get(hash) {
        tracing::debug!("compiled component shared with a plugin of the same bytes");
        return Ok(Compiled {
            component,
            quick_from: None,
        });
    }
    let engine = &optimized.engine;
    if let Some(component) = optimized.cache.as_ref().and_then(|c| c.get(engine, hash)) {
        tracing::debug!("compiled component taken from the cache");
        return Ok(Compiled {
            component: optimized.shared.share(*hash, component),
            quick_from: None,
        });
    }
    // Only a runtime that serves quick code reads Winch's cache (which makes
    // Winch's engine, as the compile after a miss would).
    let Some(quick) = compilers.quick() else {
        return Err(bytes);
    };
    match quick
        .cache
        .as_ref()
        .and_then(|c| c.get(&quick.engine, hash))
    {
        Some(component) => {
            tracing::debug!("quick compile taken from the cache");
            Ok(Compiled {
                component: Arc::new(component),
                quick_from: Some(bytes),
            })
        }
        None => Err(bytes),
    }
}

/// Winch's compile if the runtime serves quick code and Winch can compile
/// these bytes, else Cranelift's; cached either way.
fn compile_now(
    compilers: &Compilers,
    functions: &FunctionCache,
    hash: &ContentHash,
    bytes: Vec<u8>,
) -> Result<Compiled, LoadError> {
    if let Some(quick) = compilers.quick() {
        match Component::new(&quick.engine, &bytes) {
            Ok(component) => {
                if let Some(cache) = &quick.cache {
                    cache.put(hash, &component);
                }
                return Ok(Compiled {
                    component: Arc::new(component),
                    quick_from: Some(bytes),
                });
            }
            Err(error) => {
                tracing::debug!("Winch cannot compile this component, Cranelift will: {error:#}")
            }
        }
    }
    let optimized = &compilers.optimized;
    let component = optimize(
        &optimized.engine,
        optimized.cache.as_ref(),
        functions,
        hash,
        &bytes,
    )?;
    Ok(Compiled {
        component: optimized.shared.share(*hash, component),
        quick_from: None,
    })
}

/// A blocking thread's work that panicked (or was cancelled at shutdown).
fn join_failed(error: tokio::task::JoinError) -> LoadError {
    LoadError::Compile(error.to_string())
}

/// Compiles with Cranelift and stores the result in the cache.
pub(crate) fn optimize(
    engine: &Engine,
    cache: Option<&CompiledCache>,
    functions: &FunctionCache,
    hash: &ContentHash,
    bytes: &[u8],
) -> Result<Component, LoadError> {
    let component =
        Component::new(engine, bytes).map_err(|e| LoadError::Compile(format!("{e:#}")))?;
    tracing::debug!(
        function_cache_bytes = functions.bytes(),
        capacity = functions.capacity(),
        "component compiled"
    );
    if let Some(cache) = cache {
        cache.put(hash, &component);
    }
    Ok(component)
}
