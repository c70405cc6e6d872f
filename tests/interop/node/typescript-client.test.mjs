// Wharf driven by the official TypeScript client 2.x (`@modelcontextprotocol/client`):
// its newest revision, 2026-07-28 (`versionNegotiation` auto, and pinned), and its
// default legacy handshake as the forced older one.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import { EXAMPLE_TOOLS, WHARF, addPlugin, pluginFolder, serveArgs, serveHttp } from './harness.mjs';

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

async function exercise(client) {
  assert.equal(client.getServerVersion().name, 'wharf');
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((tool) => tool.name), EXAMPLE_TOOLS);
  const add = tools.find((tool) => tool.name === 'calc_add');
  assert.equal(add.outputSchema.type, 'object');

  let result = await client.callTool({ name: 'calc_add', arguments: { a: 2, b: 3.5 } });
  assert.equal(result.isError, false);
  assert.deepEqual(result.structuredContent, { result: 5.5 });

  result = await client.callTool({ name: 'echo_echo', arguments: { text: 'from typescript 2' } });
  assert.equal(result.content[0].text, 'from typescript 2');

  result = await client.callTool({ name: 'calc_divide', arguments: { a: 1, b: 0 } });
  assert.equal(result.isError, true);
  assert.match(result.content[0].text, /zero/);

  result = await client.callTool({ name: 'echo_echo', arguments: { text: 5 } });
  assert.equal(result.isError, true);
  assert.match(result.content[0].text, /^Invalid arguments for tool `echo_echo`/);

  assert.deepEqual((await client.listResources()).resources, []);
  const { prompts } = await client.listPrompts();
  assert.deepEqual(prompts.map((prompt) => prompt.name), ['textstats_summarize']);
  const prompt = await client.getPrompt({
    name: 'textstats_summarize',
    arguments: { text: 'One two three.', length: 'short' },
  });
  assert.equal(prompt.messages[0].role, 'user');
  assert.match(prompt.messages[0].content.text, /^Summarize the following text in one sentence/);
  const { completion } = await client.complete({
    ref: { type: 'ref/prompt', name: 'textstats_summarize' },
    argument: { name: 'length', value: 'l' },
  });
  assert.deepEqual(completion.values, ['long']);
}

for (const [mode, { versionNegotiation, expected }] of Object.entries(MODES)) {
  for (const kind of ['stdio', 'http']) {
    test(`${kind}, ${mode} mode, speaks ${expected}`, async (t) => {
      const plugins = pluginFolder(t, ['echo', 'calc', 'textstats']);
      const client = new Client({ name: 'wharf-interop', version: '2.0.0' }, { versionNegotiation });
      await client.connect(await transportFor(t, kind, plugins));
      t.after(() => client.close());
      assert.equal(client.getNegotiatedProtocolVersion(), expected);
      await exercise(client);
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
      t.after(() => client.close());
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
