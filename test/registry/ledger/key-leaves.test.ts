/**
 * Bug pinned (issue 48, finding 2): every `api_key.created` leaf of the public ledger carried the key's
 * id, organisation, tier, scopes and `key_prefix` (characters of the raw key), readable by any
 * registry:read key for ever; and `GET /v1/events` and the change stream gave another organisation's
 * key events to any business-tier key. Key leaves are now sealed (a salted digest of the event) and
 * key events go only to their organisation and administrators, on SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { auditLedger } from '../../../src/client/ledger-audit.ts';
import { createRegistryClient } from '../../../src/client/registry-client.ts';
import { stringify } from 'safe-stable-stringify';
import { encodeLedgerEntry } from '../../../src/core/ledger-entry.ts';
import { appendLeaves, hashLeaf, toHex } from '../../../src/core/crypto/merkle.ts';
import { insertEvents, numberEvents } from '../../../src/registry/storage/stores/event-store.ts';
import { insertLedgerAppend, readLedgerTree } from '../../../src/registry/storage/stores/ledger-store.ts';
import { BACKENDS } from '../../helpers/registry.ts';
import { collectEvents, registerOverHttp, startRegistries, testScope } from '../../helpers/listening.ts';

type Key = { key_id: string; raw_key: string; key_prefix: string; org_id: string };
type Event = { seq: number; type: string; subject: string; occurred_at: string; data: Record<string, unknown> };

for (const backend of BACKENDS) {
  describe(`API keys in the ledger and the change stream [${backend}]`, () => {
    test('key leaves publish a salted digest only; the event that holds the salt recomputes the leaf, and its inclusion proof verifies', async (t) => {
      const scope = testScope(t);
      const [registry] = await startRegistries(scope, backend);
      const base = registry!.baseUrl;
      const admin = createRegistryClient({ baseUrl: base });
      const created: Key[] = [];
      for (const org of ['org-a', 'org-b']) {
        const answer = await admin.createApiKey({ org_id: org, display_name: `key of ${org}`, tier: 'business', scopes: ['registry:read'] });
        assert.ok(answer.ok && answer.body.raw_key, answer.text);
        created.push(answer.body as unknown as Key);
      }
      const revoked = await admin.revokeApiKey(created[0]!.key_id);
      assert.ok(revoked.ok);

      // What any reader gets: a business key of org-b reads the whole ledger.
      const reader = admin.as(created[1]!.raw_key);
      const entries = await reader.ledgerEntries({ start: 0, limit: 100 });
      assert.ok(entries.ok, entries.ok ? '' : entries.text);
      const leaves = entries.body.entries as Array<{ leaf_index: number; seq: number; leaf: string }>;
      assert.equal(leaves.length, 3, 'two creations and a revocation');
      for (const entry of leaves) {
        for (const key of created) {
          for (const secretish of [key.key_id, key.key_prefix, key.raw_key.slice(3, 11), key.org_id]) {
            assert.ok(!entry.leaf.includes(secretish), `leaf ${entry.leaf_index} discloses ${secretish}: ${entry.leaf}`);
          }
        }
        const leaf = JSON.parse(entry.leaf);
        assert.deepEqual(Object.keys(leaf.data), ['event_sha256'], entry.leaf);
        assert.match(leaf.data.event_sha256, /^[0-9a-f]{64}$/);
        assert.equal(leaf.subject, 'sealed');
      }
      assert.deepEqual(leaves.map((entry) => JSON.parse(entry.leaf).type), ['api_key.created', 'api_key.created', 'api_key.revoked']);

      // The administrator holds the events (with their salt, without any part of the key): each recomputes its leaf.
      const events = await admin.events({ limit: 10 });
      assert.ok(events.ok, events.ok ? '' : events.text);
      for (const event of events.body.events as Event[]) {
        assert.equal(event.data.key_prefix, undefined, 'no prefix of the secret in the event');
        assert.match(String(event.data.ledger_salt), /^[A-Za-z0-9_-]{22}$/);
        const entry = leaves.find((candidate) => candidate.seq === event.seq);
        assert.equal(entry?.leaf, encodeLedgerEntry(event), `leaf of seq ${event.seq} recomputed from its event`);
      }
      // Change one member (another organisation, say) and the digest no longer matches.
      const first = (events.body.events as Event[]).at(-1)!;
      assert.notEqual(encodeLedgerEntry({ ...first, data: { ...first.data, org_id: 'org-b' } }), leaves[0]!.leaf);

      const report = await auditLedger({ registry: reader, leaves: [0, 1, 2], full: true });
      assert.ok(report.ok, JSON.stringify(report.checks));
    });

    test("GET /v1/events and the stream give key events to their organisation and administrators only", async (t) => {
      const scope = testScope(t);
      const [registry] = await startRegistries(scope, backend);
      const base = registry!.baseUrl;
      const admin = createRegistryClient({ baseUrl: base });
      const keyOf = async (org: string) => {
        const answer = await admin.createApiKey({ org_id: org, display_name: `reader of ${org}`, tier: 'business', scopes: ['registry:read'] });
        assert.ok(answer.ok && answer.body.raw_key, answer.text);
        return answer.body as unknown as Key;
      };
      const readerA = await keyOf('org-a');
      const readerB = await keyOf('org-b');
      const withKey = (raw: string): typeof fetch => (input, init) => fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers)), authorization: `Bearer ${raw}` } });
      const streamOfB = collectEvents(scope, `${base}/v1/events/stream?cursor=0`, { fetch: withKey(readerB.raw_key) });
      const streamOfAdmin = collectEvents(scope, `${base}/v1/events/stream?cursor=0`);
      await Promise.all([streamOfB.opened, streamOfAdmin.opened]);
      const laterA = await keyOf('org-a');
      const laterB = await keyOf('org-b');
      await admin.revokeApiKey(laterA.key_id);
      await admin.revokeApiKey(laterB.key_id);
      const agent = await registerOverHttp(base, `After the keys ${randomUUID()}`);
      const seen = (events: ReadonlyArray<(typeof streamOfB.events)[number]>) => events.some((event) => event.data.subject === agent);
      await streamOfB.waitUntil(seen, "the agent's registration, after every key event");
      await streamOfAdmin.waitUntil(seen, "the agent's registration, after every key event");

      const keySubjects = (events: ReadonlyArray<{ type: string; data: { subject: string } }>) => events.filter((event) => event.type.startsWith('api_key.')).map((event) => `${event.type} ${event.data.subject}`);
      assert.deepEqual(keySubjects(streamOfB.events), [`api_key.created ${readerB.key_id}`, `api_key.created ${laterB.key_id}`, `api_key.revoked ${laterB.key_id}`]);
      assert.equal(keySubjects(streamOfAdmin.events).length, 6, 'an administrator sees every key event');

      const history = async (raw: string | undefined, query: Record<string, unknown> = {}) => {
        const answer = await admin.as(raw).events({ limit: 50, ...query });
        assert.ok(answer.ok, answer.ok ? '' : answer.text);
        return keySubjects((answer.body.events as Event[]).map((event) => ({ type: event.type, data: { subject: event.subject } })));
      };
      assert.deepEqual(await history(readerB.raw_key), [`api_key.revoked ${laterB.key_id}`, `api_key.created ${laterB.key_id}`, `api_key.created ${readerB.key_id}`]);
      assert.deepEqual(await history(readerA.raw_key, { event_types: 'api_key.created' }), [`api_key.created ${laterA.key_id}`, `api_key.created ${readerA.key_id}`]);
      assert.deepEqual(await history(readerB.raw_key, { subject: laterA.key_id }), [], "another organisation's key, asked for by id");
      assert.equal((await history(undefined)).length, 6);
      // The other events are everyone's: each reader sees the registration.
      const agentEvents = await admin.as(readerA.raw_key).events({ subject: agent });
      assert.ok(agentEvents.ok && agentEvents.body.events.length > 0);
    });
    test('a key leaf written before the change (with its key prefix) still verifies beside sealed ones, as the ledger cannot forget it', async (t) => {
      const scope = testScope(t);
      const [registry] = await startRegistries(scope, backend);
      const base = registry!.baseUrl;
      // As a build before 2026-12-01 wrote a key's creation: the event and its leaf with the data in clear.
      const old = { key_id: 'key_01JOLDKEY0000000000000000', org_id: 'org-a', tier: 'business', scopes: ['registry:read'], key_prefix: 'rk_OldPrefx' };
      await registry!.storage.db.transaction().execute(async (tx) => {
        const events = numberEvents(0, [{ type: 'api_key.created', subject: old.key_id, occurred_at: new Date().toISOString(), data: old }]);
        await insertEvents(tx, events);
        const event = events[0]!;
        const entry = stringify({ seq: event.seq, type: event.type, subject: event.subject, occurred_at: event.occurred_at, data: old }) as string;
        const leafHash = hashLeaf(new TextEncoder().encode(entry));
        const tree = await readLedgerTree(tx);
        const { created } = appendLeaves(tree.peaks, tree.size, [leafHash]);
        await insertLedgerAppend(tx, {
          leaves: [{ leaf_index: tree.size, seq: event.seq, leaf_hash: toHex(leafHash), entry, subject: event.subject }],
          nodes: created.map((node) => ({ level: node.level, node_index: node.index, hash: toHex(node.hash) })),
        });
        await tx.updateTable('event_sequence').set({ last_seq: event.seq }).execute();
      });
      const admin = createRegistryClient({ baseUrl: base });
      const created = await admin.createApiKey({ org_id: 'org-a', display_name: 'after the change', tier: 'business', scopes: ['registry:read'] });
      assert.ok(created.ok, created.ok ? '' : created.text);
      await registerOverHttp(base, `After both keys ${randomUUID()}`);
      const entries = await admin.ledgerEntries({ start: 0, limit: 10 });
      assert.ok(entries.ok);
      const leaves = entries.body.entries as Array<{ leaf: string }>;
      assert.match(leaves[0]!.leaf, /"key_prefix":"rk_OldPrefx"/, 'what an older build published stays published');
      assert.equal(JSON.parse(leaves[1]!.leaf).subject, 'sealed');
      const report = await auditLedger({ registry: admin, leaves: [0, 1, 2], full: true });
      assert.ok(report.ok, JSON.stringify(report.checks));
    });
  });
}
