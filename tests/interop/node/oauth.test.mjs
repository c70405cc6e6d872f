// The official TypeScript client 2.x completing its OAuth flow against Wharf
// as a resource server: it gets 401, reads Wharf's Protected Resource
// Metadata, discovers the authorization server (oidc-provider from
// tests/oauth, on loopback), gets a token by the client-credentials grant with
// Wharf as the resource indicator, and retries.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { Client, ClientCredentialsProvider, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { WHARF, defer, pluginFolder, serveArgs } from './harness.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const AUTHORIZATION_SERVER = join(HERE, '../../oauth/authorization-server.mjs');

/** A loopback port free right now. */
function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** oidc-provider issuing tokens for `resource`; resolves to its issuer. */
async function startAuthorizationServer(t, resource) {
  const child = spawn(process.execPath, [AUTHORIZATION_SERVER, resource], {
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const exited = new Promise((done) => child.once('exit', done));
  defer(t, () => {
    child.kill('SIGTERM');
    return exited;
  });
  const lines = createInterface({ input: child.stdout });
  for await (const line of lines) return JSON.parse(line).issuer;
  throw new Error('the authorization server printed nothing');
}

/** Wharf on `port` with OAuth flags; resolves once it listens. */
function startWharf(t, plugins, port, flags) {
  const child = spawn(WHARF, [...serveArgs(plugins), '--http', `127.0.0.1:${port}`, ...flags], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise((done) => child.once('exit', done));
  defer(t, () => {
    child.kill('SIGTERM');
    return exited;
  });
  return new Promise((resolve, reject) => {
    let log = '';
    const timer = setTimeout(() => reject(new Error(`wharf never listened:\n${log}`)), 60_000);
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => {
      log += chunk;
      if (log.includes('listening on')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code) => reject(new Error(`wharf exited with ${code}:\n${log}`)));
  });
}

test('the TypeScript client gets a token through Wharf\'s metadata and calls tools with it', async (t) => {
  const port = await freePort();
  const resource = `http://127.0.0.1:${port}/mcp`;
  const issuer = await startAuthorizationServer(t, resource);
  const plugins = pluginFolder(t, ['echo', 'calc']);
  writeFileSync(join(plugins.folder, 'echo.toml'), '[auth]\nscopes = ["tools"]\n');
  writeFileSync(join(plugins.folder, 'calc.toml'), '[auth]\nscopes = ["tools"]\n[auth.tools]\nadd = ["files:write"]\n');
  await startWharf(t, plugins, port, ['--auth-issuer', issuer, '--public-url', resource]);

  const connect = async () => {
    const authProvider = new ClientCredentialsProvider({
      clientId: 'wharf-test',
      clientSecret: 'wharf-test-secret',
      expectedIssuer: issuer,
    });
    const client = new Client({ name: 'wharf-oauth', version: '2.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(resource), { authProvider }));
    defer(t, () => client.close());
    return { client, authProvider };
  };

  // With no `scope` in the challenge the client asks for the metadata's
  // `scopes_supported` (the spec's scope selection), so it can use every tool.
  const { client, authProvider } = await connect();
  const token = authProvider.tokens()?.access_token;
  assert.ok(token, 'the client got a token');
  const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url'));
  assert.equal(claims.aud, resource);
  assert.equal(claims.scope, 'files:write tools');
  const names = (await client.listTools()).tools.map((tool) => tool.name);
  assert.deepEqual(names, ['calc_add', 'calc_divide', 'calc_evaluate', 'calc_multiply', 'calc_subtract', 'echo_echo']);
  const echoed = await client.callTool({ name: 'echo_echo', arguments: { text: 'with a token' } });
  assert.equal(echoed.content[0].text, 'with a token');
  const added = await client.callTool({ name: 'calc_add', arguments: { a: 2, b: 3 } });
  assert.deepEqual(added.structuredContent, { result: 5 }, JSON.stringify(added));
});

const REDIRECT = 'http://127.0.0.1/callback';

/** Signs in as a user through oidc-provider's development login and consent
 * pages, following redirects with a cookie jar, as a browser would; resolves
 * to the redirect URI with its `code` and `iss` (RFC 9207). */
async function signIn(authorizationUrl) {
  const jar = new Map();
  let url = new URL(authorizationUrl);
  let init = { method: 'GET' };
  for (let step = 0; step < 20; step += 1) {
    const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await fetch(url, { ...init, redirect: 'manual', headers: { ...init.headers, cookie } });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      jar.set(pair.slice(0, at), pair.slice(at + 1));
    }
    const location = response.headers.get('location');
    if (location) {
      const next = new URL(location, url);
      if (next.href.startsWith(REDIRECT)) {
        if (!next.searchParams.get('code')) throw new Error(`no code: ${next}`);
        return next;
      }
      url = next;
      init = { method: 'GET' };
      continue;
    }
    const html = await response.text();
    const action = html.match(/<form[^>]*action="([^"]+)"/)?.[1];
    if (!action) throw new Error(`step ${step}: no form in ${response.status} ${html.slice(0, 300)}`);
    const form = new URLSearchParams();
    for (const [, name, value] of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) form.set(name, value);
    if (html.includes('name="login"')) {
      form.set('login', 'alice');
      form.set('password', 'any');
    }
    url = new URL(action, url);
    init = { method: 'POST', body: form.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } };
  }
  throw new Error('signing in took too many steps');
}

/** A public client with PKCE, pre-registered as `pkce-test`, signing in as a
 * user when the SDK sends it to the authorization server. */
class SignInProvider {
  _tokens;
  _verifier;
  callback;
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata() {
    return { client_name: 'wharf-oauth', redirect_uris: [REDIRECT], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  clientInformation() {
    return { client_id: 'pkce-test' };
  }
  tokens() {
    return this._tokens;
  }
  saveTokens(tokens) {
    this._tokens = tokens;
  }
  async redirectToAuthorization(url) {
    this.callback = await signIn(url);
  }
  saveCodeVerifier(verifier) {
    this._verifier = verifier;
  }
  codeVerifier() {
    return this._verifier;
  }
}

test('the TypeScript client signs a user in (authorization code with PKCE) and calls tools for them', async (t) => {
  const port = await freePort();
  const resource = `http://127.0.0.1:${port}/mcp`;
  const issuer = await startAuthorizationServer(t, resource);
  const plugins = pluginFolder(t, ['echo']);
  writeFileSync(join(plugins.folder, 'echo.toml'), '[auth]\nscopes = ["tools"]\n');
  await startWharf(t, plugins, port, ['--auth-issuer', issuer, '--public-url', resource]);

  const authProvider = new SignInProvider();
  const transport = new StreamableHTTPClientTransport(new URL(resource), { authProvider });
  const client = new Client({ name: 'wharf-oauth', version: '2.0.0' }, { versionNegotiation: { mode: 'auto' } });
  // The first attempt ends at the authorization server; the code comes back.
  await assert.rejects(client.connect(transport), (error) => error.constructor.name === 'UnauthorizedError');
  const { searchParams } = authProvider.callback;
  assert.equal(searchParams.get('iss'), issuer);
  await transport.finishAuth(searchParams.get('code'), searchParams.get('iss'));
  const claims = JSON.parse(Buffer.from(authProvider.tokens().access_token.split('.')[1], 'base64url'));
  assert.equal(claims.sub, 'alice');
  assert.equal(claims.aud, resource);

  const again = new Client({ name: 'wharf-oauth', version: '2.0.0' }, { versionNegotiation: { mode: 'auto' } });
  await again.connect(new StreamableHTTPClientTransport(new URL(resource), { authProvider }));
  defer(t, () => again.close());
  const echoed = await again.callTool({ name: 'echo_echo', arguments: { text: 'for alice' } });
  assert.equal(echoed.content[0].text, 'for alice');
});
