// One task end to end with the official TypeScript client 2.x
// (`@modelcontextprotocol/client`) and its tasks package
// (`@modelcontextprotocol/ext-tasks`, the requester side of SEP-2663) over
// HTTP at 2026-07-28: a `tools/call` that Wharf answers with a task, polled
// with `tasks/get` until it settles, and a task waiting for input answered
// through `tasks/update`.
//
// The 2.x client refuses `tasks/*` at 2026-07-28 itself, so ext-tasks sends
// them through a raw dispatcher (its documented adapter): a POST with the
// standard headers (`Mcp-Name` carrying the task id).

import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  createTaskSessionFromClient,
  resultFromTaskOutcome,
} from '@modelcontextprotocol/ext-tasks/client';

import { defer, pluginFolder, serveHttp } from './harness.mjs';

const VERSION = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
const CLIENT_INFO = { name: 'wharf-interop', version: '2.0.0' };
const CAPABILITIES = { elicitation: { form: {} }, extensions: { [TASKS]: {} } };

/** The conformance fixture with its manifest (unprefixed names, `[tasks]`)
 * and the state folder the manifest grants. */
function conformanceFolder(t) {
  const plugins = pluginFolder(t, ['conformance']);
  const manifest = fileURLToPath(new URL('../conformance/conformance.toml', import.meta.url));
  copyFileSync(manifest, join(plugins.folder, 'conformance.toml'));
  mkdirSync(join(plugins.folder, 'conformance-state'));
  return plugins;
}

/** A request (method and params, as ext-tasks hands it over) POSTed as a
 * 2026-07-28 client sends it; resolves to the JSON-RPC response (from a JSON
 * body or the SSE event that carries it). */
function rawDispatcher(url) {
  let next = 1;
  return async (message) => {
    const request = { jsonrpc: '2.0', id: `ext-tasks-${next++}`, ...message };
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': VERSION,
      'mcp-method': request.method,
    };
    const name = request.params?.taskId ?? request.params?.name;
    if (typeof name === 'string') headers['mcp-name'] = name;
    const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(request) });
    const text = await response.text();
    if ((response.headers.get('content-type') ?? '').includes('text/event-stream')) {
      for (const line of text.split('\n')) {
        if (!line.startsWith('data:')) continue;
        const message = JSON.parse(line.slice(5));
        if (message.id === request.id) return message;
      }
      throw new Error(`no response to ${request.method} in ${text}`);
    }
    return JSON.parse(text);
  };
}

async function session(t) {
  const url = await serveHttp(t, conformanceFolder(t));
  const client = new Client(CLIENT_INFO, {
    versionNegotiation: { mode: { pin: VERSION } },
    capabilities: CAPABILITIES,
  });
  await client.connect(new StreamableHTTPClientTransport(url));
  defer(t, () => client.close());
  const tasks = createTaskSessionFromClient(client, {
    endpointId: 'wharf-interop',
    rawDispatch: rawDispatcher(url),
    v2RequestFraming: {
      protocolVersion: VERSION,
      clientInfo: CLIENT_INFO,
      clientCapabilities: CAPABILITIES,
    },
  });
  defer(t, () => tasks.close());
  return tasks;
}

test('http, 2026-07-28: a long call becomes a task and settles with its result', async (t) => {
  const tasks = await session(t);
  const execution = await tasks.callTool('slow_compute', { seconds: 0.5, label: 'ts' });
  const { outcome } = await execution.settle();
  const result = resultFromTaskOutcome(outcome);
  assert.deepEqual(result.content, [{ type: 'text', text: 'Computed ts in 0.5 s' }]);
});
