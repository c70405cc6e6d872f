// Wharf driven by the official TypeScript SDK 1.x (`@modelcontextprotocol/sdk`),
// which speaks the legacy `initialize` revisions only: its newest, 2025-11-25,
// and an older one forced by rewriting the version it asks for.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import { EXAMPLE_PLUGINS, WHARF, addPlugin, defer, exerciseExamples, pluginFolder, serveArgs, serveHttp } from './harness.mjs';

/** Records the version the server agreed to; optionally asks for `forceVersion`
 * instead of the SDK's newest, as an older client would. */
function negotiating(transport, forceVersion) {
  const seen = { agreed: undefined };
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    if (forceVersion && message.method === 'initialize') {
      message = { ...message, params: { ...message.params, protocolVersion: forceVersion } };
    }
    return send(message, options);
  };
  const started = transport.start.bind(transport);
  transport.start = async () => {
    const onmessage = transport.onmessage;
    transport.onmessage = (message, extra) => {
      if (message.result?.protocolVersion) seen.agreed = message.result.protocolVersion;
      onmessage?.(message, extra);
    };
    return started();
  };
  return seen;
}

async function exercise(client) {
  await exerciseExamples(client, 'from typescript');
  await client.setLoggingLevel('info');
}

for (const forced of [undefined, '2025-03-26']) {
  const expected = forced ?? '2025-11-25';

  test(`stdio at ${expected}`, async (t) => {
    const plugins = pluginFolder(t, EXAMPLE_PLUGINS);
    const transport = new StdioClientTransport({ command: WHARF, args: serveArgs(plugins) });
    const seen = negotiating(transport, forced);
    const client = new Client({ name: 'wharf-interop', version: '1.0.0' });
    await client.connect(transport);
    defer(t, () => client.close());
    assert.equal(seen.agreed, expected);
    await exercise(client);
  });

  test(`http at ${expected}`, async (t) => {
    const plugins = pluginFolder(t, EXAMPLE_PLUGINS);
    const url = await serveHttp(t, plugins);
    const transport = new StreamableHTTPClientTransport(url);
    const seen = negotiating(transport, forced);
    const client = new Client({ name: 'wharf-interop', version: '1.0.0' });
    await client.connect(transport);
    defer(t, () => client.close());
    assert.equal(seen.agreed, expected);
    assert.ok(transport.sessionId, 'a legacy HTTP session has an id');
    await exercise(client);
  });
}

for (const kind of ['stdio', 'http']) {
  test(`a ${kind} session is told of a new plugin`, async (t) => {
    const plugins = pluginFolder(t, ['echo']);
    const transport =
      kind === 'stdio'
        ? new StdioClientTransport({ command: WHARF, args: serveArgs(plugins) })
        : new StreamableHTTPClientTransport(await serveHttp(t, plugins));
    const client = new Client({ name: 'wharf-interop', version: '1.0.0' });
    let changed;
    const notified = new Promise((resolve) => (changed = resolve));
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed());
    await client.connect(transport);
    defer(t, () => client.close());
    assert.equal(client.getServerCapabilities().tools.listChanged, true);
    assert.deepEqual((await client.listTools()).tools.map((tool) => tool.name), ['echo_echo']);
    if (kind === 'http') {
      // The SDK opens its GET stream in the background; give it a moment so the
      // notification has somewhere to go.
      await new Promise((r) => setTimeout(r, 300));
    }
    addPlugin(plugins.folder, 'calc');
    await notified;
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    assert.ok(names.includes('calc_add'), names.join(','));
  });
}
