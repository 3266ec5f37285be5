/**
 * The owner of an agent registered from its card by a caller without an organisation (the
 * development registry's anonymous caller) when the request names none (issue 46): the card's origin
 * host, named by the card's `provider.organization` when it has one, never `owner: {}`. A requested
 * owner is kept. Both backends, real card servers on loopback.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BACKENDS, buildTestRegistry, writeHeaders } from '../../helpers/registry.ts';
import { cardKeyPair, startSignedCardServer } from './card-fixtures.ts';

for (const backend of BACKENDS) {
  describe(`card registration owner [${backend}]`, () => {
    test('no owner given: the card origin\'s host, named by the provider; a given owner is kept', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const key = await cardKeyPair('owner-key');
      const withProvider = await startSignedCardServer(t, key, { name: 'Provider card', provider: { organization: 'Leeds Teaching Hospitals', url: 'https://leeds.example.org' } });
      const host = new URL(withProvider.origin).host;
      const registered = await registry.call({ method: 'POST', url: '/v1/agents/from-card', headers: writeHeaders(), payload: { card_url: withProvider.cardUrl, jurisdiction: 'GB' } });
      assert.equal(registered.status, 201, JSON.stringify(registered.body));
      assert.deepEqual(registered.body.owner, { org_id: host, org_name: 'Leeds Teaching Hospitals' });

      const bare = await startSignedCardServer(t, key, { name: 'Bare card' });
      const bareHost = new URL(bare.origin).host;
      const plain = await registry.call({ method: 'POST', url: '/v1/agents/from-card', headers: writeHeaders(), payload: { card_url: bare.cardUrl, jurisdiction: 'GB', owner: { operator: 'ops@example.org' } } });
      assert.equal(plain.status, 201, JSON.stringify(plain.body));
      assert.deepEqual(plain.body.owner, { org_id: bareHost, org_name: bareHost, operator: 'ops@example.org' });

      const given = await startSignedCardServer(t, key, { name: 'Owned card' });
      const owned = await registry.call({ method: 'POST', url: '/v1/agents/from-card', headers: writeHeaders(), payload: { card_url: given.cardUrl, jurisdiction: 'GB', owner: { org_id: 'org-leeds', org_name: 'Leeds' } } });
      assert.equal(owned.status, 201, JSON.stringify(owned.body));
      assert.deepEqual(owned.body.owner, { org_id: 'org-leeds', org_name: 'Leeds' });
    });
  });
}
