//! Host-side bindings for the `wharf:plugin` world, generated from `wit/`.
//!
//! Generated for the widest world, `plugin`; a component may export only some
//! of its interfaces (a `tool-plugin` exports just `tools`), so each export is
//! looked up on its own (`GuestIndices`) rather than through the world's `Pre`.

wasmtime::component::bindgen!({
    path: "../wit",
    world: "wharf:plugin/plugin",
    // Guest calls run on wasmtime fibers so that a busy plugin yields to tokio.
    exports: { default: async },
    // `ask` waits for the client (legacy sessions) while the guest is suspended.
    imports: { "wharf:plugin/host.ask": async },
});
