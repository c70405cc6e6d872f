// The authorization server of the OAuth end-to-end test (tests/e2e/oauth.rs):
// oidc-provider on a loopback port, issuing JWT access tokens by the
// client-credentials grant with a resource indicator (RFC 8707). Client
// `wharf-test` gets JWTs; client `opaque-test` gets opaque tokens, which only
// introspection (RFC 7662) can check; public client `pkce-test` signs a user
// in by the authorization-code flow with PKCE (the development login pages:
// any login and password).
//
// Usage: node authorization-server.mjs RESOURCE
// Prints one JSON line {"issuer": "..."} once listening. Besides the
// provider's own endpoints (/token, /token/introspection, /jwks,
// /.well-known/openid-configuration),
// two test-only ones:
//   POST /test/rotate  new signing key (new kid); the old key is dropped
//   POST /test/mint    body: JSON claims; signed with the current key as is
//                      (for expired tokens and foreign issuers, which a
//                      correct provider will not issue)
import http from 'node:http';
import Provider from 'oidc-provider';
import * as jose from 'jose';

const resource = process.argv[2];
if (!resource) {
  console.error('usage: node authorization-server.mjs RESOURCE');
  process.exit(2);
}

const SCOPES = 'tools files:read files:write';
let generation = 0;
let current; // { provider, key }

async function newKey() {
  generation += 1;
  const { privateKey } = await jose.generateKeyPair('ES256', { extractable: true });
  const jwk = await jose.exportJWK(privateKey);
  return { ...jwk, kid: `key-${generation}`, alg: 'ES256', use: 'sig' };
}

function provider(issuer, key) {
  const p = new Provider(issuer, {
    clients: [
      ...['wharf-test', 'opaque-test'].map((client_id) => ({
        client_id,
        client_secret: `${client_id}-secret`,
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
        // The only signing key is an EC key.
        id_token_signed_response_alg: 'ES256',
      })),
      // A public client for the authorization-code flow with PKCE; the test
      // signs in through the development login and consent pages.
      {
        client_id: 'pkce-test',
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code'],
        response_types: ['code'],
        redirect_uris: ['http://127.0.0.1/callback'],
        id_token_signed_response_alg: 'ES256',
      },
    ],
    jwks: { keys: [key] },
    features: {
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      devInteractions: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, indicator, client) => ({
          scope: SCOPES,
          audience: indicator,
          accessTokenTTL: 300,
          accessTokenFormat: client.clientId === 'opaque-test' ? 'opaque' : 'jwt',
          jwt: { sign: { alg: 'ES256' } },
        }),
      },
    },
  });
  return p;
}

async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

const server = http.createServer(async (req, res) => {
  try {
    if (req.method === 'POST' && req.url === '/test/rotate') {
      const key = await newKey();
      current = { provider: provider(issuer, key), key };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kid: key.kid }));
      return;
    }
    if (req.method === 'POST' && req.url === '/test/mint') {
      const claims = JSON.parse(await readBody(req));
      const signer = await jose.importJWK(current.key, 'ES256');
      const token = await new jose.SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', kid: current.key.kid, typ: 'at+jwt' })
        .sign(signer);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: token }));
      return;
    }
    current.provider.callback()(req, res);
  } catch (e) {
    res.writeHead(500);
    res.end(String(e));
  }
});

let issuer;
server.listen(0, '127.0.0.1', async () => {
  issuer = `http://127.0.0.1:${server.address().port}`;
  const key = await newKey();
  current = { provider: provider(issuer, key), key };
  console.log(JSON.stringify({ issuer }));
});
// The test closes stdin (or dies): stop with it.
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
