// A plugin asking the user mid-call (the conformance fixture's elicitation tool),
// completed by the official TypeScript clients in both eras: client 2.x at
// 2026-07-28 (`input_required`, answered and retried by its multi-round-trip
// driver) and in its legacy mode, and SDK 1.x (a real `elicitation/create`
// request answered by its handler), each over stdio and HTTP.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as LegacyStdio } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as LegacyHttp } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import { WHARF, defer, pluginFolder, serveArgs, serveHttp } from './harness.mjs';

const TOOL = 'conformance_test_input_required_result_elicitation';

/** Answers every elicitation with a name, recording the questions. */
function answering(asked) {
  return async (request) => {
    asked.push(request.params.message);
    return { action: 'accept', content: { name: 'Ada' } };
  };
}

for (const [mode, versionNegotiation, expected] of [
  ['auto', { mode: 'auto' }, '2026-07-28'],
  ['legacy', { mode: 'legacy' }, '2025-11-25'],
]) {
  for (const kind of ['stdio', 'http']) {
    test(`client 2.x, ${kind}, ${mode} mode (${expected}): elicitation round trip`, async (t) => {
      const plugins = pluginFolder(t, ['conformance']);
      const client = new Client(
        { name: 'wharf-interop', version: '2.0.0' },
        { versionNegotiation, capabilities: { elicitation: {} } },
      );
      const asked = [];
      client.setRequestHandler('elicitation/create', answering(asked));
      const transport =
        kind === 'stdio'
          ? new StdioClientTransport({ command: WHARF, args: serveArgs(plugins) })
          : new StreamableHTTPClientTransport(await serveHttp(t, plugins));
      await client.connect(transport);
      defer(t, () => client.close());
      assert.equal(client.getNegotiatedProtocolVersion(), expected);
      const result = await client.callTool({ name: TOOL, arguments: {} });
      assert.deepEqual(asked, ['What is your name?']);
      assert.equal(result.content[0].text, 'Hello, Ada!');
    });
  }
}

for (const kind of ['stdio', 'http']) {
  test(`sdk 1.x, ${kind}, 2025-11-25: elicitation/create answered by the handler`, async (t) => {
    const plugins = pluginFolder(t, ['conformance']);
    const client = new LegacyClient(
      { name: 'wharf-interop', version: '1.0.0' },
      { capabilities: { elicitation: {} } },
    );
    const asked = [];
    client.setRequestHandler(ElicitRequestSchema, answering(asked));
    const transport =
      kind === 'stdio'
        ? new LegacyStdio({ command: WHARF, args: serveArgs(plugins) })
        : new LegacyHttp(await serveHttp(t, plugins));
    await client.connect(transport);
    defer(t, () => client.close());
    const result = await client.callTool({ name: TOOL, arguments: {} });
    assert.deepEqual(asked, ['What is your name?']);
    assert.equal(result.content[0].text, 'Hello, Ada!');

    // Without the capability in the session, the call is refused with -32021.
    const bare = new LegacyClient({ name: 'wharf-interop', version: '1.0.0' });
    const bareTransport =
      kind === 'stdio'
        ? new LegacyStdio({ command: WHARF, args: serveArgs(plugins) })
        : new LegacyHttp(await serveHttp(t, plugins));
    await bare.connect(bareTransport);
    defer(t, () => bare.close());
    await assert.rejects(bare.callTool({ name: TOOL, arguments: {} }), (error) => {
      assert.equal(error.code, -32021);
      assert.deepEqual(error.data, { requiredCapabilities: { elicitation: {} } });
      return true;
    });
  });
}
