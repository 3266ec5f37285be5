/**
 * A child registry's `jwks_uri` is chosen by whoever registers it: in production the parent never
 * fetches it from a loopback or private address (#19 finding 5, item 6), unless the operator allows
 * private endpoints; development keeps loopback for local work.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildTestRegistry, writeHeaders } from '../../helpers/registry.ts';
import { makeSigningKey, productionJwtEnv, signToken, startJwksServer, startServer, tokenClaims } from '../credentials/fixtures.ts';

async function productionParent(t: any, extra: Record<string, string> = {}) {
  const key = makeSigningKey('ES256');
  const jwks = await startJwksServer(t, [key]);
  const registry = await buildTestRegistry(t, 'sqlite', { env: productionJwtEnv(jwks.jwksUri, extra) });
  const now = Math.floor(Date.now() / 1000);
  const admin = await signToken(key, tokenClaims({ scope: 'registry:read registry:write registry:admin', iat: now, exp: now + 300 }));
  return { registry, admin };
}

const childBody = (jwksUri: string) => ({
  display_name: 'Leeds registry',
  name: 'leeds',
  jurisdiction: 'GB',
  tier: 'sovereign',
  trust_anchors: [{ key_id: 'k1', alg: 'ES256', jwks_uri: jwksUri, thumbprint_sha256: 'x'.repeat(43) }],
  api_base_url: 'https://leeds.example',
});

describe('federation in production: no fetches to private addresses', () => {
  test('a loopback jwks_uri is refused without a request, naming the setting; REGISTRY_ALLOW_PRIVATE_ENDPOINTS allows it', async (t) => {
    const child = await startServer(t, (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"keys":[]}');
    });
    for (const host of ['127.0.0.1', 'localhost', '[::ffff:127.0.0.1]', '2130706433']) {
      const uri = `${child.baseUrl.replace('127.0.0.1', host)}/jwks.json`;
      const { registry, admin } = await productionParent(t);
      const answer = await registry.call({ method: 'POST', url: '/v1/registries', headers: writeHeaders({ authorization: `Bearer ${admin}` }), payload: childBody(uri) });
      assert.equal(answer.status, 422, `${host}: ${JSON.stringify(answer.body)}`);
      assert.match(JSON.stringify(answer.body.error.details), /REGISTRY_ALLOW_PRIVATE_ENDPOINTS/);
    }
    assert.equal(child.hits.length, 0, 'the child server was never contacted');

    const { registry, admin } = await productionParent(t, { REGISTRY_ALLOW_PRIVATE_ENDPOINTS: 'true' });
    const allowed = await registry.call({ method: 'POST', url: '/v1/registries', headers: writeHeaders({ authorization: `Bearer ${admin}` }), payload: childBody(`${child.baseUrl}/jwks.json`) });
    assert.equal(allowed.status, 422, 'fetched, then refused for the thumbprint');
    assert.match(JSON.stringify(allowed.body.error.details), /thumbprint/);
    assert.equal(child.hits.length, 1);
  });
});
