/**
 * Security round 4, finding 2 (issue 41): a card nested 2 000 levels, or holding more values than any
 * card needs, is a 422 CARD_INVALID (not a stack overflow's 500), at registration and on a re-read;
 * and a re-read that keeps failing for a reason without a CARD_* code suspends the agent (docs/mesh.md,
 * "Re-reads"). Real card servers on loopback, both backends.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BACKENDS, buildTestRegistry, registerAgent, ulidOf, writeHeaders, type TestRegistry } from '../../helpers/registry.ts';
import { cardFor, cardKeyPair, signed, startCardServer, startSignedCardServer } from './card-fixtures.ts';

const fromCard = (registry: TestRegistry, cardUrl: string) =>
  registry.call({ method: 'POST', url: '/v1/agents/from-card', headers: writeHeaders(), payload: { card_url: cardUrl, jurisdiction: 'GB', owner: { org_id: 'org-leeds' } } });

/** `{"a":{"a":…{}…}}`, `levels` deep. */
function nested(levels: number): unknown {
  let value: unknown = {};
  for (let i = 0; i < levels; i += 1) value = { a: value };
  return value;
}

/** The card with a value nested `levels` deep where the signed content reads it (an extension's params). */
const deepCard = (origin: string, levels: number) =>
  cardFor(origin, { capabilities: { streaming: true, extensions: [{ uri: 'https://example.org/ext', params: nested(levels) }] } });

const agentsCount = async (registry: TestRegistry) => Number((await registry.storage.db.selectFrom('agents').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

for (const backend of BACKENDS) {
  describe(`cards outside the shape bounds [${backend}]`, () => {
    test('a card nested 2 000 levels (unsigned, and with a signature): 422 CARD_INVALID naming where, nothing written', async (t) => {
      const server = await startCardServer(t);
      const registry = await buildTestRegistry(t, backend);
      const key = await cardKeyPair('k1');
      server.keys = [key.jwk];
      const deep = deepCard(server.origin, 2000);
      for (const card of [deep, { ...deep, signatures: [{ protected: 'eyJhbGciOiJFUzI1NiIsImtpZCI6ImsxIn0', signature: 'AAAA' }] }]) {
        server.card = card;
        assert.ok(JSON.stringify(card).length < 65_536, 'within the size limit: only its depth is wrong');
        const answer = await fromCard(registry, server.cardUrl);
        assert.equal(answer.status, 422, JSON.stringify(answer.body));
        assert.equal(answer.body.error.code, 'CARD_INVALID');
        assert.match(answer.body.error.details.errors[0].pointer, /^\/capabilities\/extensions\/0\/params(\/a)+$/);
        assert.match(answer.body.error.details.errors[0].reason, /deeper than 32/);
      }
      assert.equal(await agentsCount(registry), 0);
    });

    test('a card holding more values than any card needs (12 000 tags): 422 CARD_INVALID; a card of usual depth still registers', async (t) => {
      const server = await startCardServer(t);
      const registry = await buildTestRegistry(t, backend);
      server.card = cardFor(server.origin, { skills: [{ id: 'wide', name: 'Wide', tags: Array.from({ length: 12_000 }, () => 't') }] });
      const wide = await fromCard(registry, server.cardUrl);
      assert.equal(wide.status, 422, JSON.stringify(wide.body));
      assert.equal(wide.body.error.code, 'CARD_INVALID');
      assert.match(wide.body.error.details.errors[0].reason, /more than 10000 values/);
      server.card = deepCard(server.origin, 20);
      const fine = await fromCard(registry, server.cardUrl);
      assert.equal(fine.status, 201, JSON.stringify(fine.body));
    });

    test('a registered card that turns 2 000 levels deep suspends its agent on the next re-read (CARD_INVALID), the reading recorded', async (t) => {
      const key = await cardKeyPair('k1');
      const server = await startSignedCardServer(t, key);
      const registry = await buildTestRegistry(t, backend);
      const registered = await fromCard(registry, server.cardUrl);
      assert.equal(registered.status, 201, JSON.stringify(registered.body));
      server.card = await signed(deepCard(server.origin, 20), key, server.jwksUrl);
      server.card = { ...deepCard(server.origin, 2000), signatures: (server.card as { signatures: unknown }).signatures };
      const round = await registry.app.ward.cards.rereadAll();
      assert.deepEqual(round, { read: 1, updated: 0, suspended: 1, failed: 0 });
      const agent = (await registry.call({ method: 'GET', url: `/v1/agents/${ulidOf(registered.body.agent_id)}` })).body;
      assert.equal(agent.status, 'suspended');
      assert.match(agent.status_reason, /^agent card re-read failed: CARD_INVALID/);
      const row = await registry.storage.db.selectFrom('agent_cards').selectAll().where('agent_id', '=', ulidOf(registered.body.agent_id)).executeTakeFirstOrThrow();
      assert.match(String(row.last_error), /CARD_INVALID/);
    });

    test('a re-read that keeps failing without a CARD_* code (the card renames the agent to a name its organisation already uses): recorded, then suspended the round after', async (t) => {
      const key = await cardKeyPair('k1');
      const server = await startSignedCardServer(t, key);
      const registry = await buildTestRegistry(t, backend);
      const registered = await fromCard(registry, server.cardUrl);
      assert.equal(registered.status, 201, JSON.stringify(registered.body));
      await registerAgent(registry, { display_name: 'Taken name', owner: { org_id: 'org-leeds' } });
      server.card = await signed(cardFor(server.origin, { name: 'Taken name' }), key, server.jwksUrl);
      const id = ulidOf(registered.body.agent_id);
      const status = async () => (await registry.call({ method: 'GET', url: `/v1/agents/${id}` })).body;

      const first = await registry.app.ward.cards.rereadAll();
      assert.deepEqual(first, { read: 1, updated: 0, suspended: 0, failed: 1 });
      assert.equal((await status()).status, 'active', 'one failure is recorded, not yet held against the agent');
      const row = await registry.storage.db.selectFrom('agent_cards').selectAll().where('agent_id', '=', id).executeTakeFirstOrThrow();
      assert.match(String(row.last_error), /AGENT_CONFLICT|already|conflict/i);

      const second = await registry.app.ward.cards.rereadAll();
      assert.deepEqual(second, { read: 1, updated: 0, suspended: 1, failed: 0 });
      const agent = await status();
      assert.equal(agent.status, 'suspended');
      assert.match(agent.status_reason, /^agent card re-read failed twice in a row: /);
    });
  });
}
