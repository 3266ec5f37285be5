import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { hashFromHex, hashLeaf, merkleRoot, toHex } from '../../../src/core/crypto/merkle.ts';
import { encodeLedgerEntry, isLedgerEventType, ledgerData } from '../../../src/core/ledger-entry.ts';
import { insertEvents, listEvents, numberEvents } from '../../../src/registry/storage/stores/event-store.ts';
import { migrateToLatest } from '../../../src/registry/storage/migrator.ts';
import { MIGRATIONS } from '../../../src/registry/storage/migrations/index.ts';
import { runWrite } from '../../../src/registry/storage/write-unit.ts';
import { EVENT_TYPES } from '../../../src/contract/event-types.ts';
import { verifyConsistency, verifyInclusion, verifySignedTreeHead } from '../../../src/client/ledger-verifier.ts';
import { BACKENDS, agentBody, buildTestRegistry, openTestStorage, registerAgent, ulidOf, writeHeaders, type TestRegistry } from '../../helpers/registry.ts';

const unhex = (hex: string) => hashFromHex(hex) as Uint8Array;

async function allEntries(registry: TestRegistry): Promise<Array<{ leaf_index: number; leaf_hash: string; seq: number; leaf: string }>> {
  return (await registry.call({ method: 'GET', url: '/v1/transparency/entries?limit=100' })).body.entries;
}

/** The root of the first `size` leaves, computed here from the entries' own text. */
const rootOf = (entries: Array<{ leaf: string }>, size: number) =>
  merkleRoot(entries.slice(0, size).map((e) => hashLeaf(new TextEncoder().encode(e.leaf))));

describe('ledger entry policy', () => {
  test('every event type is ledgered except observations (agent.health_changed)', () => {
    const excluded = EVENT_TYPES.filter((type) => !isLedgerEventType(type));
    assert.deepEqual(excluded, ['agent.health_changed']);
  });
});

for (const backend of BACKENDS) {
  describe(`transparency ledger [${backend}]`, () => {
    test('a leaf holds identifiers and digests, never free text; anyone holding the event recomputes it', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const agent = await registerAgent(registry, agentBody({ display_name: 'Dr Jane Smith clinic' }));
      await registry.call({ method: 'POST', url: `/v1/agents/${ulidOf(agent.agent_id)}/suspend`, headers: writeHeaders(), payload: { reason: 'patient complaint from Mrs Jones' } });
      const entries = await allEntries(registry);
      const text = entries.map((entry) => entry.leaf).join('\n');
      assert.doesNotMatch(text, /Jane|Smith|Jones|complaint/);
      const registered = JSON.parse(entries[0]?.leaf ?? '{}');
      assert.equal(registered.data.agent_id, agent.agent_id);
      assert.equal(registered.data.display_name, `sha256:${createHash('sha256').update('Dr Jane Smith clinic').digest('hex')}`);
      assert.equal(registered.data.status, 'active');
      const events = await listEvents(registry.storage.db, { afterSeq: 0, limit: 10 });
      for (const [i, event] of events.entries()) {
        assert.equal(entries[i]?.leaf, encodeLedgerEntry(event), `leaf ${i} recomputed from its event`);
      }
    });

    test('each mutation appends its events as leaves, in sequence order, with the event as canonical JSON', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const agent = await registerAgent(registry);
      const url = `/v1/agents/${ulidOf(agent.agent_id)}`;
      await registry.call({ method: 'POST', url: `${url}/suspend`, headers: writeHeaders(), payload: { reason: 'review' } });
      await registry.call({ method: 'POST', url: `${url}/reinstate`, headers: writeHeaders() });
      const events = await listEvents(registry.storage.db, { afterSeq: 0, limit: 100 });
      const entries = await allEntries(registry);
      assert.equal(entries.length, 4);
      assert.deepEqual(entries.map((e) => [e.leaf_index, e.seq]), events.map((e, i) => [i, e.seq]));
      for (const [i, entry] of entries.entries()) {
        const event = events[i];
        assert.deepEqual(JSON.parse(entry.leaf), { seq: event?.seq, type: event?.type, subject: event?.subject, occurred_at: event?.occurred_at, data: ledgerData(event?.data ?? {}) });
        assert.match(entry.leaf, /^\{"data":\{.*\},"occurred_at":"[^"]+","seq":\d+,"subject":"[^"]+","type":"[^"]+"\}$/, 'keys sorted, no spaces');
        const expected = createHash('sha256').update(Buffer.concat([Buffer.of(0), Buffer.from(entry.leaf, 'utf8')])).digest('hex');
        assert.equal(entry.leaf_hash, expected);
      }
    });

    test('a write that rolls back appends no leaf; an observation is streamed but not ledgered', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const at = new Date().toISOString();
      await assert.rejects(
        runWrite(registry.storage, async (unit) => {
          unit.emit({ type: 'agent.updated', subject: 'registry://gb/agents/x', data: {}, occurred_at: at });
          throw new Error('boom');
        }),
      );
      await runWrite(registry.storage, async (unit) => {
        unit.emit({ type: 'agent.health_changed', subject: 'registry://gb/agents/x', data: { status: 'down' }, occurred_at: at });
        unit.emit({ type: 'agent.updated', subject: 'registry://gb/agents/x', data: {}, occurred_at: at });
      });
      assert.deepEqual((await allEntries(registry)).map((e) => [e.leaf_index, e.seq, JSON.parse(e.leaf).type]), [[0, 2, 'agent.updated']]);
    });

    test('the signed tree head verifies with the registry JWKS and is the root of the entries', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const empty = (await registry.call({ method: 'GET', url: '/v1/transparency/sth' })).body;
      const jwks = (await registry.call({ method: 'GET', url: '/.well-known/jwks.json' })).body;
      assert.equal((await verifySignedTreeHead(empty, jwks)).treeSize, 0);
      assert.equal(empty.root_hash, createHash('sha256').digest('hex'), 'the empty tree hashes to SHA-256 of nothing');
      for (let i = 0; i < 3; i += 1) await registerAgent(registry);
      const sth = (await registry.call({ method: 'GET', url: '/v1/transparency/sth' })).body;
      const verified = await verifySignedTreeHead(sth, jwks);
      assert.equal(verified.treeSize, 6);
      assert.equal(toHex(verified.rootHash), toHex(rootOf(await allEntries(registry), 6)));
      assert.match(sth.timestamp, /Z$/);
    });

    test('inclusion proofs of every leaf in every tree size verify, by index and by leaf hash', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      for (let i = 0; i < 6; i += 1) await registerAgent(registry); // 12 leaves
      const entries = await allEntries(registry);
      for (let size = 1; size <= entries.length; size += 1) {
        const root = rootOf(entries, size);
        for (let index = 0; index < size; index += 1) {
          const proof = (await registry.call({ method: 'GET', url: `/v1/transparency/proof/inclusion?leaf_index=${index}&tree_size=${size}` })).body;
          assert.equal(proof.leaf_hash, entries[index]?.leaf_hash);
          assert.equal(verifyInclusion(unhex(proof.leaf_hash), index, size, proof.inclusion_path.map(unhex), root), true, `${index}/${size}`);
        }
      }
      const byHash = (await registry.call({ method: 'GET', url: `/v1/transparency/proof/inclusion?leaf_hash=${entries[7]?.leaf_hash.toUpperCase()}` })).body;
      assert.equal(byHash.leaf_index, 7);
      assert.equal(byHash.tree_size, 12);
      assert.equal(verifyInclusion(unhex(byHash.leaf_hash), 7, 12, byHash.inclusion_path.map(unhex), rootOf(entries, 12)), true);
    });

    test('consistency proofs between every pair of tree sizes verify', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      for (let i = 0; i < 5; i += 1) await registerAgent(registry); // 10 leaves
      const entries = await allEntries(registry);
      for (let second = 0; second <= entries.length; second += 1) {
        for (let first = 0; first <= second; first += 1) {
          const proof = (await registry.call({ method: 'GET', url: `/v1/transparency/proof/consistency?first=${first}&second=${second}` })).body;
          const ok = verifyConsistency(first, second, rootOf(entries, first), rootOf(entries, second), proof.consistency_path.map(unhex));
          assert.equal(ok, true, `${first} → ${second}`);
        }
      }
      const current = (await registry.call({ method: 'GET', url: '/v1/transparency/proof/consistency?first=3' })).body;
      assert.equal(current.second, 10, 'second defaults to the current size');
    });

    test('entries page by cursor, or start at a leaf index', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      for (let i = 0; i < 4; i += 1) await registerAgent(registry); // 8 leaves
      const seen: number[] = [];
      let url = '/v1/transparency/entries?limit=3';
      for (;;) {
        const page = (await registry.call({ method: 'GET', url })).body;
        assert.equal(page.tree_size, 8);
        seen.push(...page.entries.map((e: any) => e.leaf_index));
        if (page.next_cursor === null) break;
        url = `/v1/transparency/entries?limit=3&cursor=${page.next_cursor}`;
      }
      assert.deepEqual(seen, [0, 1, 2, 3, 4, 5, 6, 7]);
      const fromSix = (await registry.call({ method: 'GET', url: '/v1/transparency/entries?start=6' })).body;
      assert.deepEqual(fromSix.entries.map((e: any) => e.leaf_index), [6, 7]);
      assert.equal(fromSix.next_cursor, null);
      const past = (await registry.call({ method: 'GET', url: '/v1/transparency/entries?start=50' })).body;
      assert.deepEqual(past.entries, []);
    });

    test('requests outside the tree are refused with the field that is wrong', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      await registerAgent(registry); // 2 leaves
      const cases: Array<[string, number, string, string?]> = [
        ['/v1/transparency/proof/inclusion?leaf_index=2', 422, 'VALIDATION_ERROR', '/leaf_index'],
        ['/v1/transparency/proof/inclusion?leaf_index=0&tree_size=3', 422, 'VALIDATION_ERROR', '/tree_size'],
        ['/v1/transparency/proof/inclusion?leaf_index=0&leaf_hash=' + '0'.repeat(64), 422, 'VALIDATION_ERROR', '/leaf_index'],
        ['/v1/transparency/proof/inclusion', 422, 'VALIDATION_ERROR', '/leaf_index'],
        ['/v1/transparency/proof/inclusion?leaf_hash=' + 'ab'.repeat(32), 404, 'LEDGER_ENTRY_NOT_FOUND'],
        ['/v1/transparency/proof/inclusion?leaf_hash=xyz', 422, 'VALIDATION_ERROR', '/leaf_hash'],
        ['/v1/transparency/proof/consistency?first=2&second=1', 422, 'VALIDATION_ERROR', '/first'],
        ['/v1/transparency/proof/consistency?first=1&second=3', 422, 'VALIDATION_ERROR', '/second'],
        ['/v1/transparency/proof/consistency', 422, 'VALIDATION_ERROR', '/first'],
        ['/v1/transparency/entries?start=1&cursor=bGVkZ2VyOjE', 422, 'VALIDATION_ERROR', '/start'],
        ['/v1/transparency/entries?cursor=Zm9vOjE', 422, 'VALIDATION_ERROR', '/cursor'],
        ['/v1/transparency/entries?limit=101', 422, 'VALIDATION_ERROR', '/limit'],
      ];
      for (const [url, status, code, pointer] of cases) {
        const response = await registry.call({ method: 'GET', url });
        assert.equal(response.status, status, url);
        assert.equal(response.body.error.code, code, url);
        if (pointer) assert.ok(response.body.error.details.errors.some((e: any) => e.pointer === pointer), `${url}: ${JSON.stringify(response.body.error.details)}`);
      }
    });

    test('concurrent writers produce one leaf per event and a tree the signed head agrees with', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      await Promise.all(Array.from({ length: 20 }, () => registerAgent(registry)));
      const entries = await allEntries(registry);
      assert.deepEqual(entries.map((e) => e.seq), Array.from({ length: 40 }, (_, i) => i + 1));
      const sth = (await registry.call({ method: 'GET', url: '/v1/transparency/sth' })).body;
      assert.equal(sth.root_hash, toHex(rootOf(entries, 40)));
    });

    test('the ledger migration appends the events committed before it existed, then the ledger carries on', async (t) => {
      const storage = await openTestStorage(t, backend);
      const before = Object.fromEntries(Object.entries(MIGRATIONS).filter(([name]) => name < '003-ledger'));
      await migrateToLatest(storage, before);
      const at = new Date().toISOString();
      await storage.db.transaction().execute(async (tx) => {
        const events = [1, 2, 3].map((n) => ({ type: 'agent.updated', subject: `registry://gb/agents/${n}`, data: { n }, occurred_at: at }));
        await insertEvents(tx, numberEvents(0, events));
        await tx.updateTable('event_sequence').set({ last_seq: 3 }).where('id', '=', 1).execute();
      });
      await migrateToLatest(storage);
      await runWrite(storage, async (unit) => unit.emit({ type: 'agent.revoked', subject: 'registry://gb/agents/1', data: {}, occurred_at: at }));
      const leaves = await storage.db.selectFrom('ledger_leaves').select(['leaf_index', 'seq']).orderBy('leaf_index').execute();
      assert.deepEqual(leaves.map((l) => [Number(l.leaf_index), Number(l.seq)]), [[0, 1], [1, 2], [2, 3], [3, 4]]);
    });
  });
}
