// Shared by the Node interop tests: where the binary and plugins are, a plugin
// folder per test, and `wharf serve --http` with the address it logged.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const WHARF = process.env.WHARF_BIN ?? join(ROOT, 'target/debug/wharf');
export const PLUGINS = process.env.WHARF_TEST_PLUGINS ?? join(ROOT, 'target/plugins');
/** Test-only plugins (the conformance fixture), from `cargo xtask plugins`. */
export const TEST_PLUGINS =
  process.env.WHARF_TEST_HOSTILE_PLUGINS ?? join(ROOT, 'target/test-plugins');

/** Where a plugin's `.wasm` is. */
function pluginPath(name) {
  return join(name === 'conformance' ? TEST_PLUGINS : PLUGINS, `${name}.wasm`);
}

/** The example plugins the client tests serve, and the tools they offer. */
export const EXAMPLE_PLUGINS = ['echo', 'calc', 'textstats', 'guide'];
export const EXAMPLE_TOOLS = [
  'calc_add',
  'calc_divide',
  'calc_evaluate',
  'calc_multiply',
  'calc_subtract',
  'echo_echo',
  'guide_search',
  'textstats_analyze',
];

const cleanups = new WeakMap();

/** Runs `undo` when test `t` ends, last in first out: a server started on a
 * folder stops (and stops writing its cache there) before the folder goes.
 * `t.after` alone runs hooks first in first out. */
export function defer(t, undo) {
  let stack = cleanups.get(t);
  if (stack === undefined) {
    stack = [];
    cleanups.set(t, stack);
    t.after(async () => {
      while (stack.length > 0) await stack.pop()();
    });
  }
  stack.push(undo);
}

/** A temporary folder holding copies of the named plugins. */
export function pluginFolder(t, names) {
  const root = mkdtempSync(join(tmpdir(), 'wharf-node-'));
  // Retried: a server's background optimiser may still be writing to the
  // cache as the folder goes (ENOTEMPTY once failed a run's cleanup hook).
  defer(t, () => rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }));
  const folder = join(root, 'plugins');
  mkdirSync(folder);
  for (const name of names) {
    copyFileSync(pluginPath(name), join(folder, `${name}.wasm`));
  }
  return { folder, cache: join(root, 'cache') };
}

/** Drops a plugin in the way an installer should: write aside, rename in. */
export function addPlugin(folder, name) {
  const partial = join(folder, `${name}.partial`);
  copyFileSync(join(PLUGINS, `${name}.wasm`), partial);
  renameSync(partial, join(folder, `${name}.wasm`));
}

/** `serve` arguments: everything on the command line, as SDK stdio clients may
 * not pass the parent environment. */
export function serveArgs({ folder, cache }) {
  return ['serve', '--plugins', folder, '--cache-dir', cache];
}

/** `wharf serve --http 127.0.0.1:0`; resolves to `{ url, stop }` once it listens. */
export function serveHttp(t, plugins) {
  const child = spawn(WHARF, [...serveArgs(plugins), '--http', '127.0.0.1:0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise((done) => child.once('exit', done));
  defer(t, () => {
    child.kill('SIGTERM');
    return exited;
  });
  return new Promise((resolveUrl, reject) => {
    let log = '';
    const timer = setTimeout(() => reject(new Error(`wharf never listened:\n${log}`)), 60_000);
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => {
      log += chunk;
      const match = log.match(/listening on (http:\/\/\S+\/mcp)/);
      if (match) {
        clearTimeout(timer);
        resolveUrl(new URL(match[1]));
      }
    });
    child.on('exit', (code) => reject(new Error(`wharf exited with ${code}:\n${log}`)));
  });
}

/** Resolves when `predicate` holds, polling; rejects after `ms`. */
export async function eventually(predicate, ms = 30_000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await predicate()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`condition not met within ${ms} ms`);
}

/** What every SDK client checks against the example plugins: tools with
 * structured output, tool and argument errors, prompts listed, rendered and
 * completed, and resources listed, read (by URI, by template, by a link a tool
 * returned) and completed. */
export async function exerciseExamples(client, echoText) {
  assert.equal(client.getServerVersion().name, 'wharf');
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((tool) => tool.name), EXAMPLE_TOOLS);
  const add = tools.find((tool) => tool.name === 'calc_add');
  assert.equal(add.outputSchema.type, 'object');

  let result = await client.callTool({ name: 'calc_add', arguments: { a: 2, b: 3.5 } });
  assert.equal(result.isError, false);
  assert.deepEqual(result.structuredContent, { result: 5.5 });

  result = await client.callTool({ name: 'echo_echo', arguments: { text: echoText } });
  assert.equal(result.content[0].text, echoText);

  result = await client.callTool({ name: 'calc_divide', arguments: { a: 1, b: 0 } });
  assert.equal(result.isError, true);
  assert.match(result.content[0].text, /zero/);

  result = await client.callTool({ name: 'echo_echo', arguments: { text: 5 } });
  assert.equal(result.isError, true);
  assert.match(result.content[0].text, /^Invalid arguments for tool `echo_echo`/);

  const { resources } = await client.listResources();
  assert.deepEqual(resources.map((resource) => resource.uri), ['guide+guide://readme']);
  const { resourceTemplates } = await client.listResourceTemplates();
  assert.deepEqual(
    resourceTemplates.map((template) => template.uriTemplate),
    ['guide+guide://readme/{section}'],
  );
  const section = await client.readResource({ uri: 'guide+guide://readme/quick-start' });
  assert.equal(section.contents[0].mimeType, 'text/markdown');
  assert.match(section.contents[0].text, /^## Quick start\n/);
  const found = await client.callTool({ name: 'guide_search', arguments: { query: 'hot reload' } });
  const link = found.content.find((item) => item.type === 'resource_link');
  const linked = await client.readResource({ uri: link.uri });
  assert.equal(linked.contents[0].uri, link.uri);
  const slugs = await client.complete({
    ref: { type: 'ref/resource', uri: 'guide+guide://readme/{section}' },
    argument: { name: 'section', value: 'qu' },
  });
  assert.deepEqual(slugs.completion.values, ['quick-start']);

  const { prompts } = await client.listPrompts();
  assert.deepEqual(prompts.map((prompt) => prompt.name), ['guide_explain', 'textstats_summarize']);
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
