// Regression (security campaign, finding 1): in jwt mode a token with registry:write suspended, replaced
// and registered agents of another organisation, because a token's organisation was never checked.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { request as httpsRequest } from 'node:https';
import { describe, test, type TestContext } from 'node:test';
import * as oauth from 'oauth4webapi';
import { loadConfig } from '../../../src/core/config.ts';
import { buildRegistry } from '../../../src/registry/app.ts';
import { certificateThumbprint } from '../../../src/registry/credentials/mtls.ts';
import { agentBody, openTestStorage, ulidOf } from '../../helpers/registry.ts';
import { AUDIENCE, ISSUER, makeSigningKey, signToken, startJwksServer, tokenClaims } from './fixtures.ts';
import { makePki, type Pki } from './pki.ts';

type Mode = 'jwt' | 'mtls' | 'dpop';
type Answer = { status: number; body: any; headers: Headers | Record<string, unknown> };
/** Sends one request with a fresh token carrying `claims`, the way the mode's clients do. */
type Send = (claims: Record<string, unknown>, method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<Answer>;

const WRITER = { scope: 'registry:read registry:write' };

async function registryIn(t: TestContext, mode: Mode): Promise<Send> {
  const key = makeSigningKey('ES256');
  const jwks = await startJwksServer(t, [key]);
  let pki: Pki | undefined;
  if (mode === 'mtls') {
    pki = makePki();
    t.after(() => pki?.remove());
  }
  const storage = await openTestStorage(t, 'sqlite');
  const config = loadConfig({
    REGISTRY_ENV: 'test',
    ...storage.env,
    REGISTRY_AUTH_MODE: mode,
    REGISTRY_JWT_JWKS_URI: jwks.jwksUri,
    REGISTRY_JWT_ISSUER: ISSUER,
    REGISTRY_JWT_AUDIENCE: AUDIENCE,
    ...(pki
      ? { REGISTRY_TLS_CERT_FILE: pki.path('server.pem'), REGISTRY_TLS_KEY_FILE: pki.path('server.key'), REGISTRY_MTLS_CA_FILE: pki.path('ca.pem') }
      : {}),
  });
  const app = await buildRegistry({ config, storage, logger: false });
  t.after(() => app.close());
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as { port: number }).port;
  const now = Math.floor(Date.now() / 1000);
  const mint = (claims: Record<string, unknown>, cnf?: Record<string, string>) =>
    signToken(key, tokenClaims({ iat: now, exp: now + 300, ...claims, ...(cnf ? { cnf } : {}) }));
  const jsonHeaders = (body: unknown, headers: Record<string, string>) => ({
    ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    'x-idempotency-key': randomUUID(),
    ...headers,
  });

  if (mode === 'jwt') {
    return async (claims, method, path, body, headers = {}) => {
      const response = await fetch(`http://127.0.0.1:${port}${path}`, {
        method,
        headers: { authorization: `Bearer ${await mint(claims)}`, ...jsonHeaders(body, headers) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, headers: response.headers, body: await response.json() };
    };
  }
  if (mode === 'mtls') {
    const cnf = { 'x5t#S256': certificateThumbprint((pki as Pki).der('client')) };
    return async (claims, method, path, body, headers = {}) => {
      const token = await mint(claims, cnf);
      return new Promise<Answer>((resolve, reject) => {
        const request = httpsRequest(
          {
            host: '127.0.0.1',
            port,
            path,
            method,
            headers: { authorization: `Bearer ${token}`, ...jsonHeaders(body, headers) },
            ca: (pki as Pki).pem('ca'),
            cert: (pki as Pki).pem('client'),
            key: (pki as Pki).key('client'),
          },
          (response) => {
            let text = '';
            response.on('data', (chunk) => (text += chunk));
            response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: JSON.parse(text) }));
          },
        );
        request.on('error', reject);
        request.end(body === undefined ? undefined : JSON.stringify(body));
      });
    };
  }
  const keyPair = await oauth.generateKeyPair('ES256', { extractable: true });
  const jkt = await oauth.DPoP({}, keyPair).calculateThumbprint();
  return async (claims, method, path, body, headers = {}) => {
    const token = await mint(claims, { jkt });
    let response: Response;
    try {
      response = await oauth.protectedResourceRequest(
        token,
        method,
        new URL(`http://127.0.0.1:${port}${path}`),
        new Headers(jsonHeaders(body, headers)),
        body === undefined ? undefined : JSON.stringify(body),
        { DPoP: oauth.DPoP({}, keyPair), [oauth.allowInsecureRequests]: true },
      );
    } catch (error) {
      // oauth4webapi raises a 401 challenge as an error; the response is still the registry's.
      const refused = (error as { response?: Response }).response;
      if (!refused) throw error;
      response = refused;
    }
    return { status: response.status, headers: response.headers, body: await response.json() };
  };
}

describe('the organisation boundary for token callers', () => {
  for (const mode of ['jwt', 'mtls', 'dpop'] as const) {
    test(`${mode}: a token acts for the organisation in its org_id claim and no other`, async (t) => {
      const send = await registryIn(t, mode);
      const orgA = { ...WRITER, org_id: 'org-a' };
      const orgB = { ...WRITER, org_id: 'org-b' };

      const { owner: _owner, ...unowned } = agentBody();
      const created = await send(orgA, 'POST', '/v1/agents', unowned);
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.equal(created.body.owner.org_id, 'org-a', "the agent belongs to the token's organisation");
      const path = `/v1/agents/${ulidOf(created.body.agent_id)}`;

      const suspended = await send(orgB, 'POST', `${path}/suspend`, { reason: 'hostile' });
      assert.equal(suspended.status, 403);
      assert.equal(suspended.body.error.code, 'ORG_MISMATCH');
      const { jurisdiction: _jurisdiction, ...replacement } = unowned;
      const replaced = await send(orgB, 'PUT', path, { ...replacement, display_name: 'Hijacked' }, { 'if-match': '"1"' });
      assert.equal(replaced.status, 403);
      assert.equal(replaced.body.error.code, 'ORG_MISMATCH');
      const foreign = await send(orgB, 'POST', '/v1/agents', agentBody({ owner: { org_id: 'org-a' } }));
      assert.equal(foreign.status, 403);
      assert.equal(foreign.body.error.code, 'ORG_MISMATCH');

      // A token that names no organisation writes nothing, rather than everything.
      const silent = await send(WRITER, 'POST', `${path}/suspend`, { reason: 'no org' });
      assert.equal(silent.status, 403);
      assert.equal(silent.body.error.code, 'ORG_REQUIRED');
      const unclaimed = await send(WRITER, 'POST', '/v1/agents', agentBody());
      assert.equal(unclaimed.status, 403);
      assert.equal(unclaimed.body.error.code, 'ORG_REQUIRED');

      // An org_id that is not an organisation id makes the token malformed, not organisation-less.
      const odd = await send({ ...WRITER, org_id: ['org-a'] }, 'POST', `${path}/suspend`, { reason: 'array' });
      assert.equal(odd.status, 401);

      const read = await send(orgB, 'GET', path);
      assert.equal(read.status, 200, 'reading across organisations stays allowed');
      assert.equal(read.body.version, 1, 'no refused request changed the agent');
      assert.equal(read.body.status, 'active');
      assert.equal(read.body.display_name, unowned.display_name);
      const list = await send(orgB, 'GET', '/v1/agents');
      assert.equal(list.body.total_count, 1, 'no agent was registered for another organisation');

      assert.equal((await send(orgA, 'POST', `${path}/suspend`, { reason: 'own agent' })).status, 200);
      const admin = await send({ scope: 'registry:write registry:admin' }, 'POST', `${path}/reinstate`, {});
      assert.equal(admin.status, 200, 'a registry administrator acts on any organisation');
    });
  }
});
