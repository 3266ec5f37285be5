/**
 * `POST /v1/agents/from-card` on a production registry: a card on a loopback or private address is
 * refused before any request is made (CARD_PRIVATE_ADDRESS), in every spelling and by name; with
 * REGISTRY_ALLOW_PRIVATE_ENDPOINTS=true (how these tests reach cards on 127.0.0.1 in production) a
 * Ward agent's signed card registers under the production default, REGISTRY_CARD_SIGNATURES=required,
 * and an unsigned card does not.
 */
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { createEchoAgent } from '../../mesh/fixtures/echo-agent.ts';
import { listenAgent } from '../../mesh/helpers.ts';
import { BACKENDS, buildTestRegistry, writeHeaders } from '../../helpers/registry.ts';
import { makeSigningKey, productionJwtEnv, signToken, startJwksServer, tokenClaims } from '../credentials/fixtures.ts';
import type { Backend } from '../../../src/registry/storage/database.ts';
import { cardFor, startCardServer } from './card-fixtures.ts';

async function productionRegistry(t: TestContext, backend: Backend, extra: Record<string, string> = {}) {
  const key = makeSigningKey('ES256');
  const jwks = await startJwksServer(t, [key]);
  const registry = await buildTestRegistry(t, backend, { env: productionJwtEnv(jwks.jwksUri, extra) });
  const now = Math.floor(Date.now() / 1000);
  const token = await signToken(key, tokenClaims({ scope: 'registry:read registry:write', org_id: 'org-leeds', iat: now, exp: now + 300 }));
  const reader = await signToken(key, tokenClaims({ scope: 'registry:read', org_id: 'org-leeds', iat: now, exp: now + 300 }));
  const register = (cardUrl: string, bearer = token) =>
    registry.call({
      method: 'POST',
      url: '/v1/agents/from-card',
      headers: writeHeaders({ authorization: `Bearer ${bearer}` }),
      payload: { card_url: cardUrl, jurisdiction: 'GB' },
    });
  return { registry, register, reader };
}

for (const backend of BACKENDS) {
  describe(`registration from a card in production [${backend}]`, () => {
    test('a card on a loopback or private address is refused without a request; the setting that allows them lets a signed card in', async (t) => {
      const server = await startCardServer(t);
      server.card = cardFor(server.origin);
      const { registry, register } = await productionRegistry(t, backend);
      const port = new URL(server.origin).port;
      for (const host of ['127.0.0.1', 'localhost', '[::1]', '[::ffff:127.0.0.1]', '2130706433', '10.0.0.7', '169.254.169.254']) {
        const answer = await register(`http://${host}:${port}/.well-known/agent-card.json`);
        assert.equal(answer.status, 422, `${host}: ${JSON.stringify(answer.body)}`);
        assert.equal(answer.body.error.code, 'CARD_PRIVATE_ADDRESS', host);
      }
      assert.equal(server.hits.length, 0, 'the card server was never contacted');
      assert.equal((await registry.call({ method: 'GET', url: '/v1/agents', headers: {} })).status, 401, 'production asks for a credential');
      const agents = await registry.storage.db.selectFrom('agents').select('id').execute();
      assert.equal(agents.length, 0);

      const allowed = await productionRegistry(t, backend, { REGISTRY_ALLOW_PRIVATE_ENDPOINTS: 'true' });
      const unsigned = await allowed.register(server.cardUrl);
      assert.equal(unsigned.status, 422);
      assert.equal(unsigned.body.error.code, 'CARD_UNSIGNED', 'production requires signatures by default');
      const ward = await listenAgent(t, createEchoAgent());
      const readOnly = await allowed.register(`${ward.url}.well-known/agent-card.json`, allowed.reader);
      assert.equal(readOnly.status, 403);
      assert.equal(readOnly.body.error.code, 'INSUFFICIENT_SCOPE', 'registration from a card needs the write scope');
      const registered = await allowed.register(`${ward.url}.well-known/agent-card.json`);
      assert.equal(registered.status, 201, JSON.stringify(registered.body));
      assert.equal(registered.body.owner.org_id, 'org-leeds', "the token's organisation owns it");
      assert.ok(registered.body.source.signed_by.kid);
    });
  });
}
