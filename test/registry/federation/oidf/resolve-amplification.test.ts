/**
 * Security round 4, finding 5 (issue 41): `GET /v1/oidf/resolve` makes at most
 * REGISTRY_OIDF_RESOLVE_FETCHES_PER_MINUTE fetches a minute for one client address across its requests
 * (then 429 `temporarily_unavailable`, OIDF's format, `Retry-After`, nothing fetched); a foreign
 * `trust_anchor` is `invalid_trust_anchor`; and refusals at the edge of the OIDF endpoints (a stray
 * malformed `Authorization`, the rate limit) come in OIDF's format too. A hierarchy of hostile entities
 * runs on loopback; both backends.
 */
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { startServer } from '../../credentials/fixtures.ts';
import { BACKENDS, buildTestRegistry, type TestRegistry } from '../../../helpers/registry.ts';

/**
 * Entities at `<origin>/e/<name>`, each serving a self-signed entity configuration whose
 * `authority_hints` are `hints(name)`: a federation of the caller's making.
 */
async function hostileFederation(t: TestContext, hints: (name: string) => string[]) {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'h1', alg: 'ES256', use: 'sig' };
  let origin = '';
  const server = await startServer(t, async (request, response) => {
    const match = /^\/e\/([a-z0-9-]+)\/\.well-known\/openid-federation$/.exec(request.url ?? '');
    if (!match) return void response.writeHead(404).end();
    const id = `${origin}/e/${match[1]}`;
    const now = Math.floor(Date.now() / 1000);
    const jwt = await new SignJWT({ jwks: { keys: [jwk] }, authority_hints: hints(match[1] as string).map((name) => `${origin}/e/${name}`), metadata: { federation_entity: { organization_name: 'Hostile' } } })
      .setProtectedHeader({ alg: 'ES256', typ: 'entity-statement+jwt', kid: 'h1' })
      .setIssuer(id)
      .setSubject(id)
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .sign(privateKey);
    response.writeHead(200, { 'content-type': 'application/entity-statement+jwt' }).end(jwt);
  });
  origin = server.baseUrl;
  return { id: (name: string) => `${origin}/e/${name}`, hits: server.hits };
}

const resolve = (registry: TestRegistry, sub: string, anchor: string, remoteAddress = '203.0.113.20', headers: Record<string, string> = {}) =>
  registry.app.inject({ method: 'GET', url: `/v1/oidf/resolve?sub=${encodeURIComponent(sub)}&trust_anchor=${encodeURIComponent(anchor)}`, remoteAddress, headers });

for (const backend of BACKENDS) {
  describe(`OIDF resolve does not amplify [${backend}]`, () => {
    test('one address spends its fetch budget across requests, then is refused (429, OIDF format, Retry-After) without a fetch; another address is not', async (t) => {
      // A tree of three hints per entity that never reaches the registry: every resolve fetches its 12 configurations.
      const federation = await hostileFederation(t, (name) => (name.length > 6 ? [] : [`${name}a`, `${name}b`, `${name}c`]));
      const registry = await buildTestRegistry(t, backend, { env: { REGISTRY_OIDF_RESOLVE_FETCHES_PER_MINUTE: '12', REGISTRY_PUBLIC_URL: 'http://registry.test' } });
      const own = 'http://registry.test';
      const first = await resolve(registry, federation.id('x'), own);
      assert.equal(first.statusCode, 404, first.body);
      assert.equal(first.json().error, 'invalid_trust_anchor');
      assert.equal(federation.hits.length, 12, 'a resolution fetches at most 12 configurations');

      const second = await resolve(registry, federation.id('y'), own);
      assert.equal(second.statusCode, 429, second.body);
      assert.equal(second.json().error, 'temporarily_unavailable');
      assert.ok(Number(second.headers['retry-after']) >= 1);
      assert.match(String(second.headers['content-type']), /^application\/json/);
      assert.equal(federation.hits.length, 12, 'nothing fetched for a caller whose budget is spent');

      const elsewhere = await resolve(registry, federation.id('z'), own, '203.0.113.21');
      assert.equal(elsewhere.json().error, 'invalid_trust_anchor', 'the budget is per address');
      assert.equal(federation.hits.length, 24);
    });

    test('a trust anchor of the caller\'s making is invalid_trust_anchor, whether or not its chain is complete, with nothing fetched from the subject', async (t) => {
      const federation = await hostileFederation(t, (name) => (name === 'leaf' ? ['anchor'] : []));
      const registry = await buildTestRegistry(t, backend, { env: { REGISTRY_PUBLIC_URL: 'http://registry.test' } });
      for (const [sub, anchor] of [
        [federation.id('leaf'), federation.id('anchor')],
        ['http://unreachable.invalid', federation.id('anchor')],
        [federation.id('leaf'), 'https://other-anchor.example'],
      ] as const) {
        const answer = await resolve(registry, sub, anchor);
        assert.equal(answer.statusCode, 404, answer.body);
        assert.deepEqual(Object.keys(answer.json()).sort(), ['error', 'error_description']);
        assert.equal(answer.json().error, 'invalid_trust_anchor', `${sub} under ${anchor}`);
      }
      assert.equal(federation.hits.length, 0);
    });

    test('refusals before the route are in OIDF format on the OIDF endpoints: a malformed stray Authorization (401), the federation rate limit (429)', async (t) => {
      const registry = await buildTestRegistry(t, backend, { env: { REGISTRY_FEDERATION_RATE_PER_MINUTE: '2', REGISTRY_PUBLIC_URL: 'http://registry.test' } });
      for (const url of ['/.well-known/openid-federation', '/v1/oidf/resolve?sub=http%3A%2F%2Fa.example&trust_anchor=http%3A%2F%2Fregistry.test', '/v1/oidf/list']) {
        const stray = await registry.app.inject({ method: 'GET', url, headers: { authorization: 'Bearer' }, remoteAddress: '203.0.113.30' });
        assert.equal(stray.statusCode, 401, `${url}: ${stray.body}`);
        assert.equal(stray.json().error, 'invalid_client', url);
        assert.match(stray.json().error_description, /\((?:UNAUTHORIZED|AUTH_\w+)\)$/, url);
      }
      const limited = [];
      for (let i = 0; i < 3; i += 1) limited.push(await registry.app.inject({ method: 'GET', url: '/.well-known/openid-federation', remoteAddress: '203.0.113.31' }));
      const refused = limited.at(-1);
      assert.equal(refused?.statusCode, 429);
      assert.deepEqual(Object.keys(refused?.json()).sort(), ['error', 'error_description']);
      assert.equal(refused?.json().error, 'temporarily_unavailable');
      assert.ok(Number(refused?.headers['retry-after']) >= 1);
      // Ward's own routes keep Ward's envelope.
      const own = await registry.app.inject({ method: 'GET', url: '/v1/agents', headers: { authorization: 'Bearer' } });
      assert.equal(own.statusCode, 401);
      assert.equal(own.json().error.code, 'UNAUTHORIZED');
    });
  });
}
