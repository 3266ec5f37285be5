/**
 * Card hosts that answer badly (docs/mesh.md, "Signed cards"), on both backends, against real servers
 * on loopback. The registry in test mode reads cards with Node's fetch; production reads them with the
 * guarded node:http fetch, which refuses loopback, so its code path is reached here through
 * `createCheckedFetch` with a predicate that refuses nothing, wired into a card reader and a
 * re-reader over the test registry's own storage and agent service.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { describe, test } from 'node:test';
import { systemContext } from '../../../src/core/call-context.ts';
import { systemClock } from '../../../src/core/clock.ts';
import { isWardError } from '../../../src/core/errors.ts';
import { createCheckedFetch } from '../../../src/core/net/guarded-fetch.ts';
import { createCardReader } from '../../../src/registry/cards/card-reader.ts';
import { createCardRegistrations } from '../../../src/registry/cards/card-registrations.ts';
import { BACKENDS, buildTestRegistry, ulidOf, writeHeaders, type TestRegistry } from '../../helpers/registry.ts';
import { cardFor, cardKeyPair, signed, startCardServer } from './card-fixtures.ts';

const fromCard = (registry: TestRegistry, cardUrl: string) =>
  registry.call({ method: 'POST', url: '/v1/agents/from-card', headers: writeHeaders(), payload: { card_url: cardUrl, jurisdiction: 'GB', owner: { org_id: 'org-leeds' } } });

/** Card registrations as production builds them (guarded node:http fetch), over `registry`'s storage. */
function productionCards(registry: TestRegistry, timeoutMs = 2000) {
  const logged: unknown[] = [];
  const cards = createCardRegistrations({
    storage: registry.storage,
    clock: systemClock,
    agents: registry.app.ward.agents,
    readCard: createCardReader({ fetch: createCheckedFetch(() => false), timeoutMs, maxBytes: 65_536, signatures: 'if-present' }),
    intervalMs: 0,
    log: (error) => logged.push(error),
  });
  return { cards, logged };
}

/** A registration through `cards` as the route makes it (no idempotency key). */
const registerDirect = (cards: ReturnType<typeof productionCards>['cards'], cardUrl: string) =>
  cards.registerOnce({ ctx: systemContext(systemClock, 'test') }, { card_url: cardUrl, jurisdiction: 'GB', owner: { org_id: 'org-leeds' } });

async function cardRow(registry: TestRegistry, agentId: string) {
  return registry.storage.db.selectFrom('agent_cards').selectAll().where('agent_id', '=', ulidOf(agentId)).executeTakeFirstOrThrow();
}

async function agentStatus(registry: TestRegistry, agentId: string): Promise<{ status: string; status_reason?: string }> {
  return (await registry.call({ method: 'GET', url: `/v1/agents/${ulidOf(agentId)}` })).body;
}

/** Fails the test if anything escapes as an uncaught exception while it runs. */
function watchUncaught(t: TestContext): () => unknown[] {
  const seen: unknown[] = [];
  const listener = (error: unknown) => seen.push(error);
  process.prependListener('uncaughtException', listener);
  t.after(() => process.removeListener('uncaughtException', listener));
  return () => seen;
}

for (const backend of BACKENDS) {
  describe(`card hosts that answer badly [${backend}]`, () => {
    test('a status no HTTP answer has (600): CARD_UNREACHABLE, the re-read round records it and the process lives', async (t) => {
      const uncaught = watchUncaught(t);
      const server = await startCardServer(t);
      const key = await cardKeyPair('k1');
      server.keys = [key.jwk];
      server.card = await signed(cardFor(server.origin), key, server.jwksUrl);
      const registry = await buildTestRegistry(t, backend);
      const registered = await fromCard(registry, server.cardUrl);
      assert.equal(registered.status, 201, JSON.stringify(registered.body));
      const odd = (_q: unknown, r: { socket: { end(text: string): void } }) => r.socket.end('HTTP/1.1 600 Odd\r\ncontent-length: 2\r\n\r\n{}');
      server.routes.set('/.well-known/agent-card.json', odd as never);

      const { cards } = productionCards(registry);
      const before = await registry.storage.db.selectFrom('agents').select('id').execute();
      await assert.rejects(registerDirect(cards, server.cardUrl), (error: unknown) => isWardError(error) && error.code === 'CARD_UNREACHABLE' && error.details.reason === 'http_600');
      assert.equal((await registry.storage.db.selectFrom('agents').select('id').execute()).length, before.length, 'nothing written');

      const round = await cards.rereadAll();
      assert.deepEqual(round, { read: 1, updated: 0, suspended: 1, failed: 0 });
      const row = await cardRow(registry, registered.body.agent_id);
      assert.match(String(row.last_error), /CARD_UNREACHABLE/);
      const agent = await agentStatus(registry, registered.body.agent_id);
      assert.equal(agent.status, 'suspended');
      assert.deepEqual(uncaught(), [], 'nothing escaped');
      // The test registry's own (Node fetch) path says the same.
      const direct = await fromCard(registry, server.cardUrl);
      assert.equal(direct.status, 422);
      assert.equal(direct.body.error.code, 'CARD_UNREACHABLE');
    });
  });
}
