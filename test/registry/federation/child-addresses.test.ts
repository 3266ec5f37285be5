/**
 * One active child per entity identifier (docs/federation.md, "Registries and their tiers"; decisions.md
 * 94): a child's `api_base_url` is its OpenID Federation entity identifier, so registration refuses an
 * address an active child has (trailing slashes ignored), also when two registrations race; a revoked
 * child's address may be taken again; the fetch endpoint finds the child by the store's index, rows an
 * older build wrote (no `entity_id`) included; and migration 017b goes through existing duplicates.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import { sql } from 'kysely';
import type { Storage } from '../../../src/registry/storage/database.ts';
import { migrateToLatest } from '../../../src/registry/storage/migrator.ts';
import { MIGRATIONS } from '../../../src/registry/storage/migrations/index.ts';
import { findActiveChildByEntityId, insertRegistry, type RegistryRow } from '../../../src/registry/federation/storage/registry-store.ts';
import { registrationBody, startRegistry, type RunningRegistry } from '../../helpers/federation.ts';
import { BACKENDS, openTestStorage, writeHeaders } from '../../helpers/registry.ts';

const AT = '2026-11-28T10:00:00.000Z';

function register(parent: RunningRegistry, payload: Record<string, unknown>) {
  return parent.call({ method: 'POST', url: '/v1/registries', headers: writeHeaders(), payload });
}

/** The sovereign registry `nhs` (GB) and an organisational registry `leeds` it can register. */
async function sovereignAndChild(t: Parameters<typeof startRegistry>[0], backend: (typeof BACKENDS)[number]) {
  const sovereign = await startRegistry(t, backend, { REGISTRY_TIER: 'sovereign', REGISTRY_NAME: 'nhs', REGISTRY_JURISDICTION: 'GB' });
  const child = await startRegistry(t, backend, { REGISTRY_TIER: 'organisational', REGISTRY_NAME: 'leeds', REGISTRY_JURISDICTION: 'GB' });
  return { sovereign, child };
}

/** The `registry_id` the sovereign's subordinate statement about `sub` names, or the OIDF error. */
async function subordinateAt(sovereign: RunningRegistry, sub: string): Promise<string> {
  const answer = await sovereign.app.inject({ method: 'GET', url: `/v1/oidf/fetch?sub=${encodeURIComponent(sub)}` });
  if (answer.statusCode !== 200) return `${answer.statusCode} ${JSON.parse(answer.body).error}`;
  const claims = decodeJwt(answer.body) as { sub: string; metadata: { ward_registry: { registry_id: string } } };
  assert.equal(claims.sub, sub.replace(/\/+$/, ''));
  return claims.metadata.ward_registry.registry_id;
}

async function registryRows(storage: Storage) {
  const { rows } = await sql<{ id: string; api_base_url: string | null; entity_id: string | null; status: string }>`
    select id, api_base_url, entity_id, status from registries order by id`.execute(storage.db);
  return rows;
}

async function registeredEvents(storage: Storage): Promise<string[]> {
  const { rows } = await sql<{ subject: string }>`select subject from events where type = 'registry.registered' order by seq`.execute(storage.db);
  return rows.map((row) => row.subject);
}

/** A row as an older build (before migration 017b) writes it: no `entity_id`. */
async function insertAsOlderBuild(storage: Storage, id: string, apiBaseUrl: string | null, status: 'active' | 'revoked' = 'active') {
  await sql`insert into registries (id, name, display_name, jurisdiction, tier, api_base_url, trust_anchors, jwks, status, revoked_at,
              revocation_reason, version, entity_iat, created_at, updated_at)
            values (${id}, ${id.split('/').at(-1)}, ${id}, 'GB', 'organisational', ${apiBaseUrl}, '[]', '{"keys":[]}', ${status},
              ${status === 'revoked' ? AT : null}, ${status === 'revoked' ? 'test' : null}, 1, 0, ${AT}, ${AT})`.execute(storage.db);
}

function storeRow(id: string, apiBaseUrl: string | null): RegistryRow {
  return {
    id,
    name: id.split('/').at(-1) as string,
    display_name: id,
    jurisdiction: 'GB',
    tier: 'organisational',
    api_base_url: apiBaseUrl,
    trust_anchors: [],
    jwks: { keys: [] },
    status: 'active',
    revoked_at: null,
    revocation_reason: null,
    version: 1,
    entity_iat: 0,
    created_at: AT,
    updated_at: AT,
  };
}

for (const backend of BACKENDS) {
  describe(`one active child per entity identifier [${backend}]`, () => {
    test('a second active child at an address is refused, with or without a trailing slash; a revoked child’s address may be reused', async (t) => {
      const { sovereign, child } = await sovereignAndChild(t, backend);
      const first = await register(sovereign, await registrationBody(child, 'organisational'));
      assert.equal(first.status, 201, JSON.stringify(first.body));
      assert.equal(await subordinateAt(sovereign, child.baseUrl), first.body.registry_id);

      for (const address of [child.baseUrl, `${child.baseUrl}/`, `${child.baseUrl}//`]) {
        const again = await register(sovereign, await registrationBody(child, 'organisational', { name: 'leeds-again', api_base_url: address }));
        assert.equal(again.status, 409, address);
        assert.equal(again.body.error.code, 'REGISTRY_CONFLICT');
        assert.match(again.body.error.message, /api_base_url/);
        assert.deepEqual(again.body.error.details, { api_base_url: child.baseUrl, registry_id: first.body.registry_id });
      }
      // Another address, and no address at all, are not refused.
      const elsewhere = await register(sovereign, await registrationBody(child, 'organisational', { name: 'leeds-mirror', api_base_url: 'http://127.0.0.1:9/mirror' }));
      assert.equal(elsewhere.status, 201, JSON.stringify(elsewhere.body));
      const { api_base_url: _dropped, ...unaddressed } = await registrationBody(child, 'organisational', { name: 'leeds-offline' });
      assert.equal((await register(sovereign, unaddressed)).status, 201);
      assert.equal((await register(sovereign, { ...unaddressed, name: 'leeds-offline-2' })).status, 201, 'children without an address do not collide');

      const revoked = await sovereign.call({ method: 'POST', url: `/v1/registries/${encodeURIComponent(first.body.registry_id)}/revoke`, headers: writeHeaders(), payload: { reason: 'moved' } });
      assert.equal(revoked.status, 200);
      assert.equal(await subordinateAt(sovereign, child.baseUrl), '404 not_found');
      const reused = await register(sovereign, await registrationBody(child, 'organisational', { name: 'leeds-new', api_base_url: `${child.baseUrl}/` }));
      assert.equal(reused.status, 201, JSON.stringify(reused.body));
      assert.equal(reused.body.api_base_url, child.baseUrl, 'stored as its entity identifier');
      assert.equal(await subordinateAt(sovereign, child.baseUrl), reused.body.registry_id, 'the fetch endpoint answers about the new child');
      assert.equal(await subordinateAt(sovereign, `${child.baseUrl}/`), reused.body.registry_id, 'the endpoint drops a trailing slash of sub');

      const atAddress = (await registryRows(sovereign.storage)).filter((row) => row.api_base_url === child.baseUrl);
      assert.deepEqual(
        atAddress.map((row) => [row.id, row.status, row.entity_id]),
        [
          [first.body.registry_id, 'revoked', child.baseUrl],
          [reused.body.registry_id, 'active', child.baseUrl],
        ],
      );
    });

    test('two registrations racing for one address: one is registered, the other refused, and nothing of it is written', async (t) => {
      const { sovereign, child } = await sovereignAndChild(t, backend);
      const bodies = await Promise.all(
        ['leeds-a', 'leeds-b'].map((name, n) => registrationBody(child, 'organisational', { name, api_base_url: n === 0 ? child.baseUrl : `${child.baseUrl}/` })),
      );
      const answers = await Promise.all(bodies.map((body) => register(sovereign, body)));
      assert.deepEqual(answers.map((answer) => answer.status).sort(), [201, 409], JSON.stringify(answers.map((answer) => answer.body)));
      const winner = answers.find((answer) => answer.status === 201)?.body;
      const loser = answers.find((answer) => answer.status === 409)?.body;
      assert.equal(loser.error.code, 'REGISTRY_CONFLICT');
      assert.equal(loser.error.details.registry_id, winner.registry_id);
      assert.deepEqual((await registryRows(sovereign.storage)).map((row) => row.id), [winner.registry_id], 'no row for the refused one');
      assert.deepEqual(await registeredEvents(sovereign.storage), [winner.registry_id], 'no event (nor ledger leaf) for the refused one');
      assert.equal(await subordinateAt(sovereign, child.baseUrl), winner.registry_id);
    });

    test('the store’s unique index refuses a second active row at an address even without the check before it, when inserts race', async (t) => {
      const storage = await openTestStorage(t, backend);
      await migrateToLatest(storage);
      const at = 'https://leeds.example.org';
      // Each in its own transaction, at once: on PostgreSQL the second waits on the first's index entry.
      const results = await Promise.all(
        ['registry://gb/leeds-a', 'registry://gb/leeds-b'].map((id, n) =>
          storage.db.transaction().execute((tx) => insertRegistry(tx, storeRow(id, n === 0 ? at : `${at}/`))),
        ),
      );
      assert.deepEqual([...results].sort(), [false, true]);
      const rows = await registryRows(storage);
      assert.equal(rows.length, 1);
      assert.deepEqual([rows[0]?.entity_id, rows[0]?.status], [at, 'active']);
      // Revoked, the address is free; a revoked row itself never collides.
      await sql`update registries set status = 'revoked'`.execute(storage.db);
      assert.equal(await insertRegistry(storage.db, storeRow('registry://gb/leeds-c', at)), true);
      assert.equal(await insertRegistry(storage.db, { ...storeRow('registry://gb/leeds-d', at), status: 'revoked' }), true);
      assert.equal((await findActiveChildByEntityId(storage.db, at))?.id, 'registry://gb/leeds-c');
      // Not by a statement that skips the store either: the index itself refuses.
      await assert.rejects(sql`update registries set status = 'active' where id = ${rows[0]?.id}`.execute(storage.db), /unique|UNIQUE/);
    });

    test('a child an older build wrote during a rolling upgrade (no entity_id) is found by the fetch endpoint, and its address is taken', async (t) => {
      const { sovereign, child } = await sovereignAndChild(t, backend);
      await insertAsOlderBuild(sovereign.storage, 'registry://gb/leeds-old', child.baseUrl);
      assert.equal(await subordinateAt(sovereign, child.baseUrl), 'registry://gb/leeds-old');
      const refused = await register(sovereign, await registrationBody(child, 'organisational'));
      assert.equal(refused.status, 409);
      assert.deepEqual(refused.body.error.details, { api_base_url: child.baseUrl, registry_id: 'registry://gb/leeds-old' });
    });

    test('migration 017b goes through active duplicates: the first in URI order keeps the identifier, the fetch endpoint answers as before', async (t) => {
      const storage = await openTestStorage(t, backend);
      await migrateToLatest(storage, Object.fromEntries(Object.entries(MIGRATIONS).filter(([name]) => name !== '017b-registry-entity-id')));
      const x = 'https://x.example.org';
      await insertAsOlderBuild(storage, 'registry://gb/a', x);
      await insertAsOlderBuild(storage, 'registry://gb/b', `${x}/`);
      await insertAsOlderBuild(storage, 'registry://gb/c', x);
      await insertAsOlderBuild(storage, 'registry://gb/0-revoked', x, 'revoked');
      await insertAsOlderBuild(storage, 'registry://gb/d', 'https://y.example.org/');
      await insertAsOlderBuild(storage, 'registry://gb/e', null);

      assert.deepEqual(await migrateToLatest(storage), ['017b-registry-entity-id']);
      assert.deepEqual(
        (await registryRows(storage)).map((row) => [row.id, row.entity_id]),
        [
          ['registry://gb/0-revoked', x],
          ['registry://gb/a', x],
          ['registry://gb/b', null],
          ['registry://gb/c', null],
          ['registry://gb/d', 'https://y.example.org'],
          ['registry://gb/e', null],
        ],
      );
      assert.equal((await findActiveChildByEntityId(storage.db, x))?.id, 'registry://gb/a', 'the first active one, as the scan answered');
      assert.equal((await findActiveChildByEntityId(storage.db, 'https://y.example.org'))?.id, 'registry://gb/d');
      assert.equal(await findActiveChildByEntityId(storage.db, 'https://y.example.org/'), undefined);
      assert.equal(await insertRegistry(storage.db, storeRow('registry://gb/f', x)), false, 'the index now holds');
      // The first revoked, the next duplicate in URI order answers (found by api_base_url: it has no identifier).
      await sql`update registries set status = 'revoked' where id = 'registry://gb/a'`.execute(storage.db);
      assert.equal((await findActiveChildByEntityId(storage.db, x))?.id, 'registry://gb/b');
    });
  });
}
