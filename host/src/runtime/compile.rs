//! Compiling a component, through the compile cache: where a plugin's code
//! comes from. [`compile`] is the load-time path (cached optimised code, else
//! Winch's quick compile, else Cranelift's); [`optimize`] is Cranelift's
//! compile, shared with the tier-up (see `tiers`). `cache.rs` keeps the
//! compiled code on disk and checks it before it is loaded.

use std::sync::Arc;

use wasmtime::Engine;
use wasmtime::component::Component;

use super::cache::{CompiledCache, ContentHash};
use super::code::Tier;
use super::engine::Compilers;
use super::failure::LoadError;
use super::function_cache::FunctionCache;

/// A compiled component, and its bytes if Winch compiled it (they are
/// compiled again by Cranelift).
pub(crate) struct Compiled {
    pub(crate) component: Component,
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

/// Compiles on a blocking thread (off the async executor): Cranelift's
/// code from the cache if these exact bytes were compiled before; else, if
/// the runtime serves quick compiles, Winch's, from its own cache or
/// compiled now (and cached: a server stopped before the optimised code
/// was ready starts as fast next time); else Cranelift's, compiled now and
/// cached.
pub(crate) async fn compile(
    compilers: &Compilers,
    functions: &Arc<FunctionCache>,
    bytes: Vec<u8>,
) -> Result<Compiled, LoadError> {
    let engine = compilers.optimized.engine.clone();
    let quick = compilers
        .quick
        .as_ref()
        .map(|q| (q.engine.clone(), q.cache.clone()));
    let cache = compilers.optimized.cache.clone();
    let functions = functions.clone();
    tokio::task::spawn_blocking(move || {
        let hash = ContentHash::of(&bytes);
        if let Some(component) = cache.as_ref().and_then(|c| c.get(&engine, &hash)) {
            tracing::debug!("compiled component taken from the cache");
            return Ok(Compiled {
                component,
                quick_from: None,
            });
        }
        if let Some((quick, quick_cache)) = quick {
            if let Some(component) = quick_cache.as_ref().and_then(|c| c.get(&quick, &hash)) {
                tracing::debug!("quick compile taken from the cache");
                return Ok(Compiled {
                    component,
                    quick_from: Some(bytes),
                });
            }
            match Component::new(&quick, &bytes) {
                Ok(component) => {
                    if let Some(cache) = &quick_cache {
                        cache.put(&hash, &component);
                    }
                    return Ok(Compiled {
                        component,
                        quick_from: Some(bytes),
                    });
                }
                Err(error) => tracing::debug!(
                    "Winch cannot compile this component, Cranelift will: {error:#}"
                ),
            }
        }
        let component = optimize(&engine, cache.as_ref(), &functions, &hash, &bytes)?;
        Ok(Compiled {
            component,
            quick_from: None,
        })
    })
    .await
    .map_err(|e| LoadError::Compile(e.to_string()))?
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
