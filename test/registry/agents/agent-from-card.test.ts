/**
 * `POST /v1/agents/from-card` and the card re-reads (docs/mesh.md, "Signed cards"), on both
 * backends, against real card servers on loopback: a real Ward agent serving its signed card, and
 * hand-made cards. The registry runs in test mode, where loopback is allowed as in development; the
 * private-address refusal is tested on a production registry (card-private-address.test.ts).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { describe, test, type TestContext } from 'node:test';
import { decodeProtectedHeader } from 'jose';
import { createEchoAgent } from '../../mesh/fixtures/echo-agent.ts';
import { listenAgent } from '../../mesh/helpers.ts';
import { createRegistryClient } from '../../../src/client/registry-client.ts';
import { eventually } from '../../helpers/eventually.ts';
import { BACKENDS, buildTestRegistry, ulidOf, writeHeaders, type TestRegistry } from '../../helpers/registry.ts';
import { cardFor, cardKeyPair, signed, startCardServer, startSignedCardServer } from './card-fixtures.ts';

const count = async (registry: TestRegistry, table: 'agents' | 'events' | 'ledger_leaves' | 'agent_cards') =>
  Number((await registry.storage.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

const written = async (registry: TestRegistry) => ({
  agents: await count(registry, 'agents'),
  events: await count(registry, 'events'),
  ledger: await count(registry, 'ledger_leaves'),
  cards: await count(registry, 'agent_cards'),
});

const fromCard = (registry: TestRegistry, cardUrl: string, extra: Record<string, unknown> = {}, headers = writeHeaders()) =>
  registry.call({ method: 'POST', url: '/v1/agents/from-card', headers, payload: { card_url: cardUrl, jurisdiction: 'GB', owner: { org_id: 'org-leeds' }, ...extra } });

async function eventTypes(registry: TestRegistry, agentId: string): Promise<string[]> {
  const rows = await registry.storage.db.selectFrom('events').select(['type', 'subject']).orderBy('seq').execute();
  return rows.filter((row) => row.subject === agentId).map((row) => row.type);
}

for (const backend of BACKENDS) {
  describe(`registration from an agent card [${backend}]`, () => {
    test('a Ward agent registers from its signed card, is discoverable by its skill, and a replay writes nothing more', async (t) => {
      const agent = await listenAgent(t, createEchoAgent());
      const registry = await buildTestRegistry(t, backend);
      const cardUrl = `${agent.url}.well-known/agent-card.json`;
      const card: any = await (await fetch(cardUrl)).json();
      const keyless = await fromCard(registry, cardUrl, {}, {});
      assert.equal(keyless.status, 400);
      assert.equal(keyless.body.error.code, 'IDEMPOTENCY_KEY_REQUIRED');
      const headers = writeHeaders();
      const answer = await fromCard(registry, cardUrl, { policy_tags: { purpose_of_use: ['treatment'] } }, headers);
      assert.equal(answer.status, 201, JSON.stringify(answer.body));
      const record = answer.body;
      assert.equal(record.display_name, card.name);
      assert.equal(record.description, card.description);
      assert.deepEqual(record.endpoints.map((e: any) => [e.url, e.protocol]), [[agent.url, 'a2a-jsonrpc']]);
      assert.deepEqual(record.capabilities.skills, ['test.echo']);
      assert.deepEqual(record.capabilities.protocols, ['a2a-jsonrpc']);
      assert.deepEqual(record.capabilities.features, ['auth.http']);
      assert.equal(record.capabilities.streaming, true);
      assert.deepEqual(record.owner, { org_id: 'org-leeds' });
      assert.deepEqual(record.policy_tags, { purpose_of_use: ['treatment'] });
      const { read_at: readAt, ...source } = record.source;
      assert.deepEqual(source, {
        kind: 'a2a-agent-card',
        card_url: cardUrl,
        signed_by: { kid: decodeProtectedHeader(card.signatures[0]).kid, jku: `${agent.url}.well-known/jwks.json` },
      });
      // The card is read before the write: its reading time is at or before the record's creation.
      assert.ok(Date.parse(readAt) <= Date.parse(record.created_at), `read at ${readAt}, created at ${record.created_at}`);
      assert.equal(answer.headers.location, `/v1/agents/${ulidOf(record.agent_id)}`);

      const found = await registry.call({ method: 'GET', url: '/v1/discover?capability=test.echo&jurisdiction=GB' });
      assert.equal(found.status, 200);
      assert.ok(JSON.stringify(found.body).includes(record.agent_id), 'discovery finds it by its skill');

      const before = await written(registry);
      const replay = await fromCard(registry, cardUrl, { policy_tags: { purpose_of_use: ['treatment'] } }, headers);
      assert.equal(replay.status, 200);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.body.agent_id, record.agent_id);
      assert.deepEqual(replay.body.source, record.source);
      assert.deepEqual(await written(registry), before, 'the replay wrote nothing');
      assert.deepEqual(before, { agents: 1, events: before.events, ledger: before.ledger, cards: 1 });
      assert.ok((await eventTypes(registry, record.agent_id)).includes('agent.registered'));
    });

    test('each refusal is 422 with its own code and writes nothing', async (t) => {
      const server = await startCardServer(t);
      const elsewhere = await startCardServer(t);
      const key = await cardKeyPair('k1');
      const stranger = await cardKeyPair('k-stranger');
      server.keys = [key.jwk];
      elsewhere.keys = [stranger.jwk];
      const registry = await buildTestRegistry(t, backend);
      const strict = await buildTestRegistry(t, backend, { env: { REGISTRY_CARD_SIGNATURES: 'required' } });
      const good = await signed(cardFor(server.origin), key, server.jwksUrl);

      const cases: Array<[string, () => Promise<void> | void, string, TestRegistry?]> = [
        ['tampered', () => void (server.card = { ...good, description: 'Now also prescribes.' }), 'CARD_SIGNATURE_INVALID'],
        ['signature garbled', () => void (server.card = { ...good, signatures: [{ protected: 'e30', signature: 'AAAA' }] }), 'CARD_SIGNATURE_INVALID'],
        ['signed with a key the origin does not publish', async () => void (server.card = await signed(cardFor(server.origin), stranger, server.jwksUrl)), 'CARD_SIGNATURE_UNTRUSTED'],
        ['jku on another origin', async () => void (server.card = await signed(cardFor(server.origin), stranger, elsewhere.jwksUrl)), 'CARD_SIGNATURE_UNTRUSTED'],
        ['signed without a jku', async () => void (server.card = await signed(cardFor(server.origin), key, '')), 'CARD_SIGNATURE_UNTRUSTED'],
        ['unsigned under required', () => void (server.card = cardFor(server.origin)), 'CARD_UNSIGNED', strict],
        ['oversized (Content-Length)', () => void (server.card = { ...cardFor(server.origin), description: 'x'.repeat(70_000) }), 'CARD_TOO_LARGE'],
        [
          'oversized (chunked, no length)',
          () =>
            void server.routes.set('/.well-known/agent-card.json', (_request, response) => {
              response.writeHead(200, { 'content-type': 'application/json' });
              for (let i = 0; i < 80; i += 1) response.write('x'.repeat(1024));
              response.end();
            }),
          'CARD_TOO_LARGE',
        ],
        ['not JSON', () => void server.routes.set('/.well-known/agent-card.json', (_q, r) => void r.writeHead(200, { 'content-type': 'text/html' }).end('<html>hello</html>')), 'CARD_INVALID'],
        ['JSON but not a card', () => void (server.card = { hello: 'world' }), 'CARD_INVALID'],
        ['a name the record cannot hold', () => void (server.card = cardFor(server.origin, { name: 'n'.repeat(300) })), 'CARD_INVALID'],
        ['redirect off the origin', () => void server.routes.set('/.well-known/agent-card.json', (_q, r) => void r.writeHead(302, { location: `${elsewhere.origin}/.well-known/agent-card.json` }).end()), 'CARD_REDIRECT_OFF_ORIGIN'],
        ['an interface on another origin', () => void (server.card = cardFor(elsewhere.origin)), 'CARD_ENDPOINT_OFF_ORIGIN'],
        ['a 0.3 url on another origin', () => void (server.card = cardFor(server.origin, { url: `${elsewhere.origin}/a2a` })), 'CARD_ENDPOINT_OFF_ORIGIN'],
        ['gone', () => void server.routes.set('/.well-known/agent-card.json', (_q, r) => void r.writeHead(404).end()), 'CARD_UNREACHABLE'],
      ];
      elsewhere.card = await signed(cardFor(elsewhere.origin), stranger, elsewhere.jwksUrl);
      for (const [name, arrange, code, target = registry] of cases) {
        server.routes.clear();
        await arrange();
        const before = await written(target);
        const answer = await fromCard(target, server.cardUrl);
        assert.equal(answer.status, 422, `${name}: ${JSON.stringify(answer.body)}`);
        assert.equal(answer.body.error.code, code, name);
        assert.deepEqual(await written(target), before, `${name}: nothing written`);
      }
      assert.equal((await written(registry)).agents, 0);

      // The same server, put right: accepted (a redirect within the origin is followed).
      server.routes.clear();
      server.card = good;
      server.routes.set('/card', (_q, r) => void r.writeHead(301, { location: '/.well-known/agent-card.json' }).end());
      const accepted = await fromCard(registry, `${server.origin}/card`);
      assert.equal(accepted.status, 201, JSON.stringify(accepted.body));
      assert.equal(accepted.body.source.signed_by.kid, 'k1');
      assert.deepEqual(accepted.body.capabilities.features, ['auth.oauth2']);
      // if-present (the development default) takes an unsigned card, as unsigned.
      server.card = cardFor(server.origin, { name: 'Unsigned summariser' });
      const unsigned = await fromCard(registry, server.cardUrl);
      assert.equal(unsigned.status, 201, JSON.stringify(unsigned.body));
      assert.equal(unsigned.body.source.signed_by, null);
    });

    test('a re-read updates a changed card within one round, and suspends an agent whose key was rotated away or whose card is gone', async (t) => {
      const key = await cardKeyPair('k1');
      const server = await startSignedCardServer(t, key);
      const gone = await startSignedCardServer(t, key, { name: 'Soon gone' });
      const registry = await buildTestRegistry(t, backend);
      const ward = await listenAgent(t, createEchoAgent());
      const first = (await fromCard(registry, server.cardUrl)).body;
      const second = (await fromCard(registry, gone.cardUrl)).body;
      const third = (await fromCard(registry, `${ward.url}.well-known/agent-card.json`)).body;
      assert.ok(first.agent_id && second.agent_id && third.agent_id);

      const unchanged = await written(registry);
      assert.deepEqual(await registry.app.ward.cards.rereadAll(), { read: 3, updated: 0, suspended: 0, failed: 0 });
      assert.deepEqual(await written(registry), unchanged, 'unchanged cards write no event');

      server.card = await signed(
        cardFor(server.origin, { skills: [{ id: 'discharge.summarise', name: 'S', description: 'd', tags: [] }, { id: 'Referral Letters', name: 'R', description: 'd', tags: [] }] }),
        key,
        server.jwksUrl,
      );
      const ledgerBefore = await count(registry, 'ledger_leaves');
      assert.deepEqual(await registry.app.ward.cards.rereadAll(), { read: 3, updated: 1, suspended: 0, failed: 0 });
      const updated = (await registry.call({ method: 'GET', url: `/v1/agents/${ulidOf(first.agent_id)}` })).body;
      assert.equal(updated.version, 2);
      assert.deepEqual(updated.capabilities.skills, ['discharge.summarise', 'referral-letters']);
      assert.deepEqual(updated.owner, { org_id: 'org-leeds' }, 'the owner stays the registration’s');
      assert.ok((await eventTypes(registry, first.agent_id)).includes('agent.updated'));
      assert.ok((await count(registry, 'ledger_leaves')) > ledgerBefore, 'the update is in the ledger');

      // The origin rotates its key away but the card is still signed with the old one; the other card goes.
      const rotated = await cardKeyPair('k2');
      server.keys = [rotated.jwk];
      gone.routes.set('/.well-known/agent-card.json', (_q, r) => void r.writeHead(404).end());
      assert.deepEqual(await registry.app.ward.cards.rereadAll(), { read: 3, updated: 0, suspended: 2, failed: 0 });
      const suspended = (await registry.call({ method: 'GET', url: `/v1/agents/${ulidOf(first.agent_id)}` })).body;
      assert.equal(suspended.status, 'suspended');
      assert.match(suspended.status_reason, /CARD_SIGNATURE_UNTRUSTED/);
      assert.ok((await eventTypes(registry, first.agent_id)).includes('agent.suspended'));
      const goneRecord = (await registry.call({ method: 'GET', url: `/v1/agents/${ulidOf(second.agent_id)}` })).body;
      assert.equal(goneRecord.status, 'suspended');
      assert.match(goneRecord.status_reason, /CARD_UNREACHABLE/);
      const wardRecord = (await registry.call({ method: 'GET', url: `/v1/agents/${ulidOf(third.agent_id)}` })).body;
      assert.equal(wardRecord.status, 'active', 'the Ward agent re-signs its card and stays');

      // Suspended agents are read again but not suspended twice.
      const events = await count(registry, 'events');
      assert.deepEqual(await registry.app.ward.cards.rereadAll(), { read: 3, updated: 0, suspended: 0, failed: 2 });
      assert.equal(await count(registry, 'events'), events);
    });

    test('a listening registry re-reads on its own every REGISTRY_CARD_REREAD_INTERVAL_MS', async (t: TestContext) => {
      const key = await cardKeyPair('k1');
      const server = await startSignedCardServer(t, key);
      const registry = await buildTestRegistry(t, backend, { env: { REGISTRY_CARD_REREAD_INTERVAL_MS: '1000', REGISTRY_HEALTH_PROBES: 'false' } });
      await registry.app.listen({ host: '127.0.0.1', port: 0 });
      const { port } = registry.app.server.address() as AddressInfo;
      // Through the registry client, over HTTP, as a tool would.
      const client = createRegistryClient({ baseUrl: `http://127.0.0.1:${port}` });
      const answer = await client.registerAgentFromCard({ card_url: server.cardUrl, jurisdiction: 'GB' }, { idempotencyKey: randomUUID() });
      assert.ok(answer.ok, answer.text);
      const record = answer.body;
      assert.equal(record.source.signed_by?.kid, 'k1');
      server.card = await signed(cardFor(server.origin, { description: 'Summarises discharge letters, now in Welsh too.' }), key, server.jwksUrl);
      const updated = await eventually(async () => {
        const current = (await registry.call({ method: 'GET', url: `/v1/agents/${ulidOf(record.agent_id)}` })).body;
        return current.version === 2 ? current : undefined;
      }, 'the scheduled re-read');
      assert.equal(updated.description, 'Summarises discharge letters, now in Welsh too.');
    });
  });
}
