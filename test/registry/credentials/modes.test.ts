import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import { describe, test, type TestContext } from 'node:test';
import { Writable } from 'node:stream';
import * as oauth from 'oauth4webapi';
import { loadConfig } from '../../../src/core/config.ts';
import { buildRegistry } from '../../../src/registry/app.ts';
import { certificateThumbprint } from '../../../src/registry/credentials/mtls.ts';
import { createKey, bearer } from '../../helpers/keys.ts';
import { buildTestRegistry, openTestStorage } from '../../helpers/registry.ts';
import { AUDIENCE, ISSUER, makeSigningKey, segment, signToken, startJwksServer, tokenClaims } from './fixtures.ts';
import { makePki } from './pki.ts';

/** Claims valid now (the verifier fixtures judge at a fixed date; the registry judges at the real one). */
function currentClaims(overrides: Record<string, unknown> = {}) {
  const now = Math.floor(Date.now() / 1000);
  return tokenClaims({ iat: now, exp: now + 300, ...overrides });
}

async function jwtEnvironment(t: TestContext, mode: 'jwt' | 'mtls' | 'dpop') {
  const key = makeSigningKey('ES256');
  const jwks = await startJwksServer(t, [key]);
  return { key, env: { REGISTRY_AUTH_MODE: mode, REGISTRY_JWT_JWKS_URI: jwks.jwksUri, REGISTRY_JWT_ISSUER: ISSUER, REGISTRY_JWT_AUDIENCE: AUDIENCE } };
}

/** A listening dpop-mode registry, a real oauth4webapi DPoP handle and a token bound to its key. */
async function dpopRegistry(t: TestContext, extraEnv: Record<string, string> = {}) {
  const { key, env } = await jwtEnvironment(t, 'dpop');
  const storage = await openTestStorage(t, 'sqlite');
  const app = await buildRegistry({ config: loadConfig({ REGISTRY_ENV: 'test', ...storage.env, ...env, ...extraEnv }), storage, logger: false });
  t.after(() => app.close());
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const handle = oauth.DPoP({}, await oauth.generateKeyPair('ES256', { extractable: true }));
  const token = await signToken(key, currentClaims({ cnf: { jkt: await handle.calculateThumbprint() } }));
  return { base, handle, token };
}

describe('authentication modes through the registry', () => {
  test('jwt: a valid token acts with its scopes; missing, forged, expired, foreign and sender-bound tokens are 401', async (t) => {
    const { key, env } = await jwtEnvironment(t, 'jwt');
    const registry = await buildTestRegistry(t, 'sqlite', { env });
    const call = (headers: Record<string, string>, method: 'GET' | 'POST' = 'GET') => registry.call({ method, url: '/v1/agents', headers });
    const reader = await signToken(key, currentClaims({ scope: 'registry:read' }));
    assert.equal((await call(bearer(reader))).status, 200);
    const anonymous = await call({});
    assert.equal(anonymous.status, 401);
    assert.match(String(anonymous.headers['www-authenticate']), /^Bearer realm="ward"/);
    const refused = await registry.call({ method: 'POST', url: '/v1/agents', headers: bearer(reader), payload: {} });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.details.required_scope, 'registry:write');
    const forger = makeSigningKey('ES256', key.kid);
    const cases: Array<[string, string]> = [
      ['forged', await signToken(forger, currentClaims())],
      ['expired', await signToken(key, currentClaims({ iat: 1_700_000_000, exp: 1_700_000_300 }))],
      ['wrong audience', await signToken(key, currentClaims({ aud: 'https://someone-else.example' }))],
      ['wrong issuer', await signToken(key, currentClaims({ iss: 'https://evil.example' }))],
      ['DPoP-bound used as Bearer', await signToken(key, currentClaims({ cnf: { jkt: 'abc' } }))],
    ];
    for (const [name, token] of cases) {
      const response = await call(bearer(token));
      assert.equal(response.status, 401, name);
      assert.match(String(response.headers['www-authenticate']), /error="invalid_token"/, name);
    }
    assert.equal((await registry.call({ method: 'GET', url: '/.well-known/agent-registry' })).status, 200, 'public without a credential');
    assert.deepEqual((await registry.call({ method: 'GET', url: '/.well-known/agent-registry' })).body.supported_auth_methods, ['jwt']);
  });

  // Regression (security campaign, finding 3): this exact header gave 500 and a stack trace naming `zzz` in the log.
  test('jwt and dpop: a token with an unknown crit member is 401 with a challenge, and the log never names the member', async (t) => {
    for (const mode of ['jwt', 'dpop'] as const) {
      const { env } = await jwtEnvironment(t, mode);
      const lines: string[] = [];
      const storage = await openTestStorage(t, 'sqlite');
      const app = await buildRegistry({
        config: loadConfig({ REGISTRY_ENV: 'test', REGISTRY_LOG_LEVEL: 'trace', ...storage.env, ...env }),
        storage,
        logStream: new Writable({ write: (chunk, _encoding, done) => void (lines.push(String(chunk)), done()) }),
      });
      t.after(() => app.close());
      const crafted = `${segment({ alg: 'RS256', kid: 'x', crit: ['zzz'], zzz: 1 })}.${segment({ sub: 'a' })}.AAAA`;
      const scheme = mode === 'dpop' ? 'DPoP' : 'Bearer';
      const response = await app.inject({
        method: 'GET',
        url: '/v1/agents',
        headers: { authorization: `${scheme} ${crafted}`, ...(mode === 'dpop' ? { dpop: crafted } : {}) },
      });
      assert.equal(response.statusCode, 401, mode);
      assert.match(String(response.headers['www-authenticate']), new RegExp(`^${scheme} realm="ward", error="invalid_`), mode);
      assert.equal(JSON.parse(response.body).error.code, 'UNAUTHORIZED');
      assert.ok(lines.length > 0, 'the request was logged');
      assert.ok(!lines.join('').includes('zzz'), `${mode}: the log holds no attacker-chosen header name`);
    }
  });

  test('jwt: API keys are still accepted, and an admin token may create them', async (t) => {
    const { key, env } = await jwtEnvironment(t, 'jwt');
    const registry = await buildTestRegistry(t, 'sqlite', { env });
    const admin = await signToken(key, currentClaims({ scope: 'registry:admin registry:read' }));
    const created = await createKey(registry, { org_id: 'org-a' }, bearer(admin));
    assert.equal((await registry.call({ method: 'GET', url: '/v1/agents', headers: bearer(created.raw_key) })).status, 200);
  });

  test('mtls: real TLS demands a client certificate from the CA, and the token must be bound to it', async (t) => {
    const pki = makePki();
    t.after(() => pki.remove());
    const { key, env } = await jwtEnvironment(t, 'mtls');
    const storage = await openTestStorage(t, 'sqlite');
    const config = loadConfig({
      REGISTRY_ENV: 'test',
      ...storage.env,
      ...env,
      REGISTRY_TLS_CERT_FILE: pki.path('server.pem'),
      REGISTRY_TLS_KEY_FILE: pki.path('server.key'),
      REGISTRY_MTLS_CA_FILE: pki.path('ca.pem'),
    });
    const app = await buildRegistry({ config, storage, logger: false });
    t.after(() => app.close());
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as { port: number }).port;
    const get = (headers: Record<string, string>, client?: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpsRequest(
          { host: '127.0.0.1', port, path: '/v1/agents', headers, ca: pki.pem('ca'), ...(client ? { cert: pki.pem(client), key: pki.key(client) } : {}) },
          (res) => {
            let body = '';
            res.on('data', (chunk) => (body += chunk));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on('error', reject);
        req.end();
      });
    const bound = await signToken(key, currentClaims({ cnf: { 'x5t#S256': certificateThumbprint(pki.der('client')) } }));
    assert.equal((await get(bearer(bound), 'client')).status, 200);
    assert.equal((await get(bearer(bound), 'other-client')).status, 401, 'bound to another certificate');
    const unbound = await signToken(key, currentClaims());
    assert.equal((await get(bearer(unbound), 'client')).status, 401, 'a token not bound to the certificate');
    await assert.rejects(get(bearer(bound)), 'no client certificate: the handshake fails');
    await assert.rejects(get(bearer(bound), 'rogue'), 'a certificate not from the CA: refused');
  });

  test('dpop: the real oauth4webapi client is accepted; a replayed proof and a Bearer token are refused', async (t) => {
    const { base, handle, token } = await dpopRegistry(t);
    let captured: Headers | undefined;
    const response = await oauth.protectedResourceRequest(token, 'GET', new URL(`${base}/v1/agents`), new Headers(), undefined, {
      DPoP: handle,
      [oauth.allowInsecureRequests]: true,
      [oauth.customFetch]: (url, init) => {
        captured = new Headers(init.headers);
        return fetch(url, init as RequestInit);
      },
    });
    assert.equal(response.status, 200);
    const replay = await fetch(`${base}/v1/agents`, { headers: captured as Headers });
    assert.equal(replay.status, 401);
    assert.match(replay.headers.get('www-authenticate') ?? '', /^DPoP realm="ward", error="invalid_dpop_proof"/);
    const asBearer = await fetch(`${base}/v1/agents`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(asBearer.status, 401);
    const otherKey = await oauth.generateKeyPair('ES256', { extractable: true });
    // oauth4webapi raises the registry's 401 challenge as an error: a proof by another key is refused.
    await assert.rejects(
      oauth.protectedResourceRequest(token, 'GET', new URL(`${base}/v1/agents`), new Headers(), undefined, {
        DPoP: oauth.DPoP({}, otherKey),
        [oauth.allowInsecureRequests]: true,
      }),
      (error: Error & { response?: Response }) => error.name === 'WWWAuthenticateChallengeError' && error.response?.status === 401,
    );
  });

  test('dpop with REGISTRY_DPOP_NONCES: a proof without the server nonce is use_dpop_nonce with a DPoP-Nonce; the real client retries and is accepted', async (t) => {
    const { base, handle, token } = await dpopRegistry(t, { REGISTRY_DPOP_NONCES: 'true' });
    const request = () =>
      oauth.protectedResourceRequest(token, 'GET', new URL(`${base}/v1/agents`), new Headers(), undefined, { DPoP: handle, [oauth.allowInsecureRequests]: true });
    let nonceError: unknown;
    try {
      await request();
    } catch (error) {
      nonceError = error;
    }
    assert.ok(oauth.isDPoPNonceError(nonceError), 'the first proof, without a nonce, is asked for one');
    const refused = (nonceError as { response: Response }).response;
    assert.equal(refused.status, 401);
    assert.match(refused.headers.get('www-authenticate') ?? '', /^DPoP realm="ward", error="use_dpop_nonce"/);
    assert.match(refused.headers.get('dpop-nonce') ?? '', /^[A-Za-z0-9_-]{43}$/);
    const retried = await request();
    assert.equal(retried.status, 200, 'the client kept the nonce and its next proof carries it');
  });
});
