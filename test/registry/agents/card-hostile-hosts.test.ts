/**
 * Card hosts that answer badly (docs/mesh.md, "Signed cards"), on both backends, against real servers
 * on loopback. The registry in test mode reads cards with Node's fetch; production reads them with the
 * guarded node:http fetch, which refuses loopback, so its code path is reached here through
 * `createCheckedFetch` with a predicate that refuses nothing, wired into a card reader and a
 * re-reader over the test registry's own storage and agent service.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TestContext } from 'node:test';
import { describe, test } from 'node:test';
import { systemContext } from '../../../src/core/call-context.ts';
import { systemClock } from '../../../src/core/clock.ts';
import { isWardError } from '../../../src/core/errors.ts';
import { createCheckedFetch } from '../../../src/core/net/guarded-fetch.ts';
import { createCardReader } from '../../../src/registry/agents/cards/card-reader.ts';
import { createCardRegistrations } from '../../../src/registry/agents/cards/card-registrations.ts';
import { eventually } from '../../helpers/eventually.ts';
import { BACKENDS, buildTestRegistry, ulidOf, writeHeaders, type TestRegistry } from '../../helpers/registry.ts';
import { cardFor, cardKeyPair, signed, startSignedCardServer } from './card-fixtures.ts';

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

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

const count = async (registry: TestRegistry, table: 'agents' | 'events' | 'ledger_leaves' | 'agent_cards') =>
  Number((await registry.storage.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

const written = async (registry: TestRegistry) => ({
  agents: await count(registry, 'agents'),
  events: await count(registry, 'events'),
  ledger: await count(registry, 'ledger_leaves'),
  cards: await count(registry, 'agent_cards'),
});

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
      const key = await cardKeyPair('k1');
      const server = await startSignedCardServer(t, key);
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

    test('a body that stalls after its headers or is cut mid-way: 422 CARD_UNREACHABLE (timeout, reset), nothing written; a re-read suspends and records it', async (t) => {
      const key = await cardKeyPair('k1');
      const server = await startSignedCardServer(t, key);
      const registry = await buildTestRegistry(t, backend, { env: { REGISTRY_CARD_TIMEOUT_MS: '300' } });
      const registered = await fromCard(registry, server.cardUrl);
      assert.equal(registered.status, 201, JSON.stringify(registered.body));
      const stall: Handler = (_q, r) => void r.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' }).write('{"name":');
      const reset: Handler = (_q, r) => {
        r.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
        r.write('{"name":', () => setTimeout(() => r.socket?.destroy(), 20));
      };
      const { cards } = productionCards(registry, 300);
      for (const [name, handler, reason] of [['stalls', stall, 'timeout'], ['is reset', reset, 'reset']] as const) {
        server.routes.set('/.well-known/agent-card.json', handler);
        const before = await written(registry);
        const answer = await fromCard(registry, server.cardUrl);
        assert.equal(answer.status, 422, `${name}: ${JSON.stringify(answer.body)}`);
        assert.equal(answer.body.error.code, 'CARD_UNREACHABLE', name);
        assert.equal(answer.body.error.details.reason, reason, name);
        await assert.rejects(registerDirect(cards, server.cardUrl), (error: unknown) => isWardError(error) && error.code === 'CARD_UNREACHABLE' && error.details.reason === reason, `${name} (guarded fetch)`);
        assert.deepEqual(await written(registry), before, `${name}: nothing written`);
      }

      server.routes.set('/.well-known/agent-card.json', stall);
      const readBefore = (await cardRow(registry, registered.body.agent_id)).read_at;
      assert.deepEqual(await registry.app.ward.cards.rereadAll(), { read: 1, updated: 0, suspended: 1, failed: 0 });
      const row = await cardRow(registry, registered.body.agent_id);
      assert.match(String(row.last_error), /CARD_UNREACHABLE/);
      assert.ok(row.read_at > readBefore, 'the failed reading is dated');
      const agent = await agentStatus(registry, registered.body.agent_id);
      assert.equal(agent.status, 'suspended');
      assert.match(String(agent.status_reason), /CARD_UNREACHABLE/);
    });

    test('a JWKS at the jku that is not JSON, is null or lists no objects trusts no key: 422 CARD_SIGNATURE_UNTRUSTED, nothing written; a re-read suspends', async (t) => {
      const key = await cardKeyPair('k1');
      const server = await startSignedCardServer(t, key);
      const registry = await buildTestRegistry(t, backend);
      const registered = await fromCard(registry, server.cardUrl);
      assert.equal(registered.status, 201, JSON.stringify(registered.body));
      const { cards } = productionCards(registry);
      const jwks = (body: string): Handler => (_q, r) => void r.writeHead(200, { 'content-type': 'application/json' }).end(body);
      for (const body of ['<html>keys</html>', 'null', '[]', '"keys"', '{"keys":null}', '{"keys":[null,1,"k1"]}']) {
        server.routes.set('/.well-known/jwks.json', jwks(body));
        const before = await written(registry);
        const answer = await fromCard(registry, server.cardUrl);
        assert.equal(answer.status, 422, `${body}: ${JSON.stringify(answer.body)}`);
        assert.equal(answer.body.error.code, 'CARD_SIGNATURE_UNTRUSTED', body);
        await assert.rejects(registerDirect(cards, server.cardUrl), (error: unknown) => isWardError(error) && error.code === 'CARD_SIGNATURE_UNTRUSTED', `${body} (guarded fetch)`);
        assert.deepEqual(await written(registry), before, `${body}: nothing written`);
      }
      server.routes.set('/.well-known/jwks.json', jwks('null'));
      assert.deepEqual(await registry.app.ward.cards.rereadAll(), { read: 1, updated: 0, suspended: 1, failed: 0 });
      assert.match(String((await cardRow(registry, registered.body.agent_id)).last_error), /CARD_SIGNATURE_UNTRUSTED/);
    });

    test('a re-read that fails for a reason not the card\'s (the owner changed the record meanwhile) is recorded, so the card goes to the back of the queue, and suspends nothing', async (t) => {
      const key = await cardKeyPair('k1');
      const server = await startSignedCardServer(t, key);
      const other = await startSignedCardServer(t, key, { name: 'Other' });
      const registry = await buildTestRegistry(t, backend);
      const racing = (await fromCard(registry, server.cardUrl)).body;
      const second = (await fromCard(registry, other.cardUrl)).body;
      assert.ok(racing.agent_id && second.agent_id);
      // Both read now; the racing card is the oldest reading, so first in the queue.
      await registry.storage.db.updateTable('agent_cards').set({ read_at: '2000-01-01T00:00:00.000Z' }).where('agent_id', '=', ulidOf(racing.agent_id)).execute();
      // While the registry reads the changed card, its owner updates the record: the re-read's write loses.
      const changed = await signed(cardFor(server.origin, { description: 'Changed.' }), key, server.jwksUrl);
      server.routes.set('/.well-known/agent-card.json', (_q, r) => {
        void (async () => {
          const current = (await registry.call({ method: 'GET', url: `/v1/agents/${ulidOf(racing.agent_id)}` })).body;
          const { display_name, endpoints, capabilities, trust, owner, policy_tags } = current;
          const put = await registry.call({
            method: 'PUT',
            url: `/v1/agents/${ulidOf(racing.agent_id)}`,
            headers: writeHeaders({ 'if-match': `"${current.version}"` }),
            payload: { display_name: `${display_name} (renamed)`, endpoints: endpoints.map(({ health: _h, ...e }: Record<string, unknown>) => e), capabilities, trust, owner, policy_tags },
          });
          assert.equal(put.status, 200, JSON.stringify(put.body));
          r.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(changed));
        })();
      });
      const roundStart = new Date().toISOString();
      const round = await registry.app.ward.cards.rereadAll();
      assert.deepEqual(round, { read: 2, updated: 0, suspended: 0, failed: 1 });
      const row = await cardRow(registry, racing.agent_id);
      assert.ok(row.last_error, 'the failure is recorded');
      assert.ok(row.read_at >= roundStart, 'and dated this round, so the card goes behind every card not read since');
      assert.equal((await agentStatus(registry, racing.agent_id)).status, 'active', 'not suspended: not the card\'s fault');
    });

    test('a registry whose re-read waits on a card host that never answers closes before the host answers, records nothing against the card, and lets the lease go', { timeout: 50_000 }, async (t) => {
      const key = await cardKeyPair('k1');
      const server = await startSignedCardServer(t, key);
      // A read deadline far beyond the test's: only stopping can end these reads.
      const registry = await buildTestRegistry(t, backend, { env: { REGISTRY_CARD_TIMEOUT_MS: '60000' } });
      const registered = await fromCard(registry, server.cardUrl);
      assert.equal(registered.status, 201, JSON.stringify(registered.body));
      const waiting: Array<() => void> = [];
      let answered = false;
      server.routes.set('/.well-known/agent-card.json', (_q, r) => {
        // Holds the request until the test lets it go (after the close it is checking).
        waiting.push(() => {
          answered = true;
          r.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        });
      });
      const hitsBefore = server.hits.length;

      // Production's node:http fetch, stopped directly.
      const production = productionCards(registry);
      const productionRound = production.cards.rereadAll();
      await eventually(async () => server.hits.length > hitsBefore || undefined, 'the production re-read reached the host');
      await production.cards.stop();
      assert.equal(answered, false, 'stopped before the host answered');
      assert.deepEqual(await productionRound, { read: 1, updated: 0, suspended: 0, failed: 1 });
      const leases = () => registry.storage.db.selectFrom('leases').select('holder').where('name', '=', 'card-reread').execute();
      assert.deepEqual(await leases(), [], 'the lease is let go at stop');

      // The registry app's own re-reader, stopped by closing the app; a stopped re-reader takes no new round.
      assert.deepEqual(await production.cards.rereadAll(), { read: 0, updated: 0, suspended: 0, failed: 0 });
      const appRound = registry.app.ward.cards.rereadAll();
      await eventually(async () => server.hits.length > hitsBefore + 1 || undefined, 'the app re-read reached the host');
      await registry.app.close();
      assert.equal(answered, false, 'the app closed before the host answered');
      assert.deepEqual(await appRound, { read: 1, updated: 0, suspended: 0, failed: 1 });
      for (const release of waiting) release();
      const row = await cardRow(registry, registered.body.agent_id);
      assert.equal(row.last_error, null, 'a read cut short by stopping is not held against the card');
      const agent = await registry.storage.db.selectFrom('agents').select('status').where('id', '=', ulidOf(registered.body.agent_id)).executeTakeFirstOrThrow();
      assert.equal(agent.status, 'active');
      assert.deepEqual(await leases(), [], 'the lease is let go at close: another instance reads at once');
    });
  });
}
