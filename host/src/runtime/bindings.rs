//! Host-side bindings for the `wharf:plugin` world, generated from `wit/`.

wasmtime::component::bindgen!({
    path: "../wit",
    world: "wharf:plugin/tool-plugin",
    // Guest calls run on wasmtime fibers so that a busy plugin yields to tokio.
    exports: { default: async },
});
