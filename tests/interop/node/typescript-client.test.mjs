// Wharf driven by the official TypeScript client 2.x (`@modelcontextprotocol/client`):
// its newest revision, 2026-07-28 (`versionNegotiation` auto, and pinned), and its
// default legacy handshake as the forced older one.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import { EXAMPLE_PLUGINS, WHARF, addPlugin, defer, exerciseExamples, pluginFolder, serveArgs, serveHttp } from './harness.mjs';

const MODES = {
  auto: { versionNegotiation: { mode: 'auto' }, expected: '2026-07-28' },
  pinned: { versionNegotiation: { mode: { pin: '2026-07-28' } }, expected: '2026-07-28' },
  legacy: { versionNegotiation: { mode: 'legacy' }, expected: '2025-11-25' },
};

async function transportFor(t, kind, plugins) {
  return kind === 'stdio'
    ? new StdioClientTransport({ command: WHARF, args: serveArgs(plugins) })
    : new StreamableHTTPClientTransport(await serveHttp(t, plugins));
}


for (const [mode, { versionNegotiation, expected }] of Object.entries(MODES)) {
  for (const kind of ['stdio', 'http']) {
    test(`${kind}, ${mode} mode, speaks ${expected}`, async (t) => {
      const plugins = pluginFolder(t, EXAMPLE_PLUGINS);
      const client = new Client({ name: 'wharf-interop', version: '2.0.0' }, { versionNegotiation });
      await client.connect(await transportFor(t, kind, plugins));
      defer(t, () => client.close());
      assert.equal(client.getNegotiatedProtocolVersion(), expected);
      await exerciseExamples(client, 'from typescript 2');
    });
  }
}

for (const mode of ['auto', 'legacy']) {
  for (const kind of ['stdio', 'http']) {
    test(`${kind}, ${mode} mode, sees a new plugin through listChanged`, async (t) => {
      const plugins = pluginFolder(t, ['echo']);
      let changed;
      const updated = new Promise((resolve) => (changed = resolve));
      const client = new Client(
        { name: 'wharf-interop', version: '2.0.0' },
        {
          versionNegotiation: MODES[mode].versionNegotiation,
          listChanged: {
            tools: {
              debounceMs: 0,
              onChanged: (error, tools) => {
                if (!error && tools?.some((tool) => tool.name === 'calc_add')) changed(tools);
              },
            },
          },
        },
      );
      await client.connect(await transportFor(t, kind, plugins));
      defer(t, () => client.close());
      assert.deepEqual((await client.listTools()).tools.map((tool) => tool.name), ['echo_echo']);
      // Modern clients subscribe with subscriptions/listen and legacy HTTP ones
      // open a GET stream, both in the background: give them a moment.
      await new Promise((r) => setTimeout(r, 300));
      addPlugin(plugins.folder, 'calc');
      const tools = await updated;
      assert.ok(tools.some((tool) => tool.name === 'calc_add'));
    });
  }
}
