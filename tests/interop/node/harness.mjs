// Shared by the Node interop tests: where the binary and plugins are, a plugin
// folder per test, and `wharf serve --http` with the address it logged.

import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const WHARF = process.env.WHARF_BIN ?? join(ROOT, 'target/debug/wharf');
export const PLUGINS = process.env.WHARF_TEST_PLUGINS ?? join(ROOT, 'target/plugins');

export const EXAMPLE_TOOLS = [
  'calc_add',
  'calc_divide',
  'calc_evaluate',
  'calc_multiply',
  'calc_subtract',
  'echo_echo',
  'textstats_analyze',
];

/** A temporary folder holding copies of the named example plugins. */
export function pluginFolder(t, names) {
  const root = mkdtempSync(join(tmpdir(), 'wharf-node-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const folder = join(root, 'plugins');
  mkdirSync(folder);
  for (const name of names) {
    copyFileSync(join(PLUGINS, `${name}.wasm`), join(folder, `${name}.wasm`));
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
  t.after(() => child.kill('SIGTERM'));
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
