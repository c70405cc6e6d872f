// The client configuration snippets in the README's "Clients" section, run as
// written: each stdio `command` is started with its `args`, each `url` is
// connected to, and the Inspector commands are executed; each must list the tools.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import { EXAMPLE_PLUGINS, EXAMPLE_TOOLS, WHARF, defer, pluginFolder, serveHttp } from './harness.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const README = readFileSync(join(HERE, '../../../README.md'), 'utf8');
const CLIENTS = README.slice(README.indexOf('\n## Clients'), README.indexOf('\n## ', README.indexOf('\n## Clients') + 1));
const BIN = (name) => join(HERE, 'node_modules/.bin', name);

function blocks(language) {
  return [...CLIENTS.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]);
}

/** Puts this run's paths and port in place of the README's placeholders. */
function localise(text, { folder, url }) {
  let out = text.replaceAll('/path/to/wharf', WHARF).replaceAll('/path/to/plugins', folder);
  if (url) out = out.replaceAll('http://127.0.0.1:8080/mcp', url.href);
  return out;
}

async function listNames(t, transport) {
  const client = new Client({ name: 'wharf-readme', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(transport);
  defer(t, () => client.close());
  return (await client.listTools()).tools.map((tool) => tool.name);
}

const snippets = blocks('json').map((text) => JSON.parse(text));
assert.ok(snippets.length >= 5, 'the Clients section has its configuration snippets');

for (const [index, snippet] of snippets.entries()) {
  const servers = snippet.mcpServers ?? snippet.servers;
  const entry = servers.wharf;
  const kind = entry.url ? `url (${entry.type ?? 'implicit type'})` : `command ${entry.command}`;
  test(`snippet ${index + 1}: ${kind}`, async (t) => {
    const plugins = pluginFolder(t, EXAMPLE_PLUGINS);
    const env = { ...process.env, WHARF_CACHE_DIR: plugins.cache };
    const needsServer = entry.url || entry.args?.some((arg) => arg.startsWith('http://'));
    const url = needsServer ? await serveHttp(t, plugins) : undefined;
    const local = JSON.parse(localise(JSON.stringify(entry), { folder: plugins.folder, url }));
    let transport;
    if (local.url) {
      if (local.type !== undefined) assert.equal(local.type, 'http');
      transport = new StreamableHTTPClientTransport(new URL(local.url));
    } else if (local.command === 'npx') {
      // `npx -y mcp-remote URL`: the bridge from this project, not a download.
      assert.deepEqual(local.args.slice(0, 2), ['-y', 'mcp-remote']);
      const config = mkdtempSync(join(tmpdir(), 'wharf-mcp-remote-'));
      defer(t, () => rmSync(config, { recursive: true, force: true }));
      transport = new StdioClientTransport({
        command: BIN('mcp-remote'),
        args: local.args.slice(2),
        env: { ...env, MCP_REMOTE_CONFIG_DIR: config },
        stderr: 'ignore',
      });
    } else {
      assert.equal(local.type ?? 'stdio', 'stdio');
      transport = new StdioClientTransport({ command: local.command, args: local.args, env });
    }
    assert.deepEqual(await listNames(t, transport), EXAMPLE_TOOLS);
  });
}

/** Splits one shell command line: words, and single-quoted strings. */
function words(line) {
  return [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]);
}

const commands = blocks('sh').flatMap((block) => block.replaceAll('\\\n', ' ').split('\n').filter((l) => l.trim()));
assert.ok(commands.some((line) => line.includes('--cli')), 'the Clients section shows the Inspector CLI');

for (const [index, line] of commands.entries()) {
  test(`inspector command ${index + 1}`, async (t) => {
    const plugins = pluginFolder(t, EXAMPLE_PLUGINS);
    const url = line.includes('http://') ? await serveHttp(t, plugins) : undefined;
    const [npx, pkg, ...args] = words(localise(line, { folder: plugins.folder, url }));
    assert.equal(npx, 'npx');
    assert.equal(pkg, '@modelcontextprotocol/inspector');
    const home = mkdtempSync(join(tmpdir(), 'wharf-inspector-home-'));
    defer(t, () => rmSync(home, { recursive: true, force: true }));
    const stdout = await new Promise((done, reject) =>
      execFile(
        process.execPath,
        [BIN('inspector'), ...args, '--format', 'json', '-q'],
        { env: { ...process.env, HOME: home, WHARF_CACHE_DIR: plugins.cache }, timeout: 60_000 },
        (error, out, err) => (error ? reject(new Error(`${error.message}\n${out}\n${err}`)) : done(out)),
      ),
    );
    const { result } = JSON.parse(stdout);
    if (args.includes('tools/list')) {
      assert.deepEqual(result.tools.map((tool) => tool.name), EXAMPLE_TOOLS);
    } else {
      assert.equal(result.isError, false);
      assert.deepEqual(result.structuredContent, { result: 5 });
    }
  });
}
