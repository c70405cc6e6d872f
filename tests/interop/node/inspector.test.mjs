// The MCP Inspector's headless CLI (`@modelcontextprotocol/inspector --cli`)
// lists and calls Wharf's tools over stdio and HTTP, in both protocol eras.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { EXAMPLE_PLUGINS, EXAMPLE_TOOLS, WHARF, defer, pluginFolder, serveArgs, serveHttp } from './harness.mjs';

const INSPECTOR = join(
  dirname(fileURLToPath(import.meta.url)),
  'node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js',
);

/** Runs the Inspector CLI (on this Node, which must be >= 22.19) against `target`
 * and resolves to its exit code and parsed JSON output. */
function inspector(t, target, args) {
  // It writes its settings under HOME: keep them out of the user's.
  const home = mkdtempSync(join(tmpdir(), 'wharf-inspector-home-'));
  defer(t, () => rmSync(home, { recursive: true, force: true }));
  return new Promise((done, reject) => {
    execFile(
      process.execPath,
      [INSPECTOR, '--cli', ...target, ...args, '--format', 'json', '-q'],
      { env: { ...process.env, HOME: home }, timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') return reject(error);
        try {
          done({ code: error?.code ?? 0, output: JSON.parse(stdout) });
        } catch {
          reject(new Error(`inspector printed no JSON:\n${stdout}\n${stderr}`));
        }
      },
    );
  });
}

async function targetFor(t, kind, plugins) {
  return kind === 'stdio'
    ? [WHARF, ...serveArgs(plugins)]
    : [(await serveHttp(t, plugins)).href, '--transport', 'http'];
}

for (const era of ['modern', 'legacy']) {
  for (const kind of ['stdio', 'http']) {
    test(`${kind}, ${era} era: lists and calls tools, reads a resource`, async (t) => {
      const plugins = pluginFolder(t, EXAMPLE_PLUGINS);
      const target = await targetFor(t, kind, plugins);
      const withEra = (args) => [...args, '--protocol-era', era];

      const list = await inspector(t, target, withEra(['--method', 'tools/list']));
      assert.equal(list.code, 0);
      assert.deepEqual(list.output.result.tools.map((tool) => tool.name), EXAMPLE_TOOLS);

      const call = await inspector(
        t,
        target,
        withEra(['--method', 'tools/call', '--tool-name', 'calc_add', '--tool-args-json', '{"a":2,"b":3.5}']),
      );
      assert.equal(call.code, 0);
      assert.deepEqual(call.output.result.structuredContent, { result: 5.5 });
      assert.equal(call.output.result.isError, false);

      const failing = await inspector(
        t,
        target,
        withEra(['--method', 'tools/call', '--tool-name', 'calc_divide', '--tool-args-json', '{"a":1,"b":0}']),
      );
      assert.notEqual(failing.code, 0, 'a tool error is a failed CLI run');
      assert.equal(failing.output.result.isError, true);
      assert.match(failing.output.result.content[0].text, /zero/);

      const resources = await inspector(t, target, withEra(['--method', 'resources/list']));
      assert.deepEqual(
        resources.output.result.resources.map((resource) => resource.uri),
        ['guide+guide://readme'],
      );
      const section = await inspector(
        t,
        target,
        withEra(['--method', 'resources/read', '--uri', 'guide+guide://readme/clients']),
      );
      assert.match(section.output.result.contents[0].text, /^## Clients\n/);
    });
  }
}
