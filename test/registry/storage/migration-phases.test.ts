/**
 * Expanding and contracting migrations (docs/operations.md, "Rolling upgrades"): a contracting step is
 * refused while a live instance (its heartbeat lease) runs a build that does not know it, or says
 * nothing of its build; an instance starting contracts only when it is alone; nothing after a refused
 * step runs; and a build is ready with only contracting steps pending.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { migrate, migrationStatus } from '../../../src/registry/storage/migrator.ts';
import { MIGRATIONS, type WardMigration } from '../../../src/registry/storage/migrations/index.ts';
import { acquireLease } from '../../../src/registry/storage/stores/lease-store.ts';
import { BACKENDS, openTestStorage } from '../../helpers/registry.ts';

const NOW = new Date();
const LATEST = Object.keys(MIGRATIONS).sort().at(-1) as string;

/** This build plus an upgrade: a column and an index (expand), the column made required (contract), one more expand. */
const UPGRADE: Record<string, WardMigration> = {
  ...MIGRATIONS,
  '900-test-note': {
    up: async (db: Kysely<unknown>) => {
      await db.schema.alterTable('agents').addColumn('test_note', 'text').execute();
      await db.schema.createIndex('agents_test_note').on('agents').column('test_note').execute();
    },
  },
  '901-test-note-required': {
    phase: 'contract',
    up: async (db: Kysely<unknown>) => {
      await sql`update agents set test_note = '' where test_note is null`.execute(db);
    },
  },
  '902-test-after': { up: async (db: Kysely<unknown>) => void (await db.schema.alterTable('agents').addColumn('test_after', 'text').execute()) },
};

async function beat(storage: Awaited<ReturnType<typeof openTestStorage>>, id: string, knows: string | null) {
  await acquireLease(storage.db, {
    name: `instance:${id}`,
    holder: id,
    now: NOW.toISOString(),
    expiresAt: new Date(NOW.getTime() + 6000).toISOString(),
    detail: knows === null ? null : JSON.stringify({ version: '0.1.0', schema: knows, started_at: NOW.toISOString() }),
  });
}

for (const backend of BACKENDS) {
  describe(`migration phases [${backend}]`, () => {
    test('a contracting step waits while an older build runs; later steps wait with it; the build is ready meanwhile', async (t) => {
      const storage = await openTestStorage(t, backend);
      assert.equal((await migrate(storage, { contract: 'unless-older' })).refused, undefined, 'this build has no contracting step');
      await beat(storage, 'old', LATEST);
      await beat(storage, 'new', '902-test-after');

      const first = await migrate(storage, { migrations: UPGRADE, contract: 'unless-older', now: NOW });
      assert.deepEqual(first.pending, [
        { name: '900-test-note', phase: 'expand' },
        { name: '901-test-note-required', phase: 'contract' },
        { name: '902-test-after', phase: 'expand' },
      ]);
      assert.deepEqual(first.applied, ['900-test-note']);
      assert.deepEqual(first.refused, { name: '901-test-note-required', reason: 'older_instances', instances: [{ id: 'old', version: '0.1.0', knows: LATEST }] });
      const status = await migrationStatus(storage, UPGRADE);
      assert.deepEqual(status.blocking, ['901-test-note-required', '902-test-after'], 'an expanding step after the refused one is still needed');

      // The old instance is rolled: only the new build's heartbeat is left.
      await storage.db.deleteFrom('leases').where('name', '=', 'instance:old').execute();
      const second = await migrate(storage, { migrations: UPGRADE, contract: 'unless-older', now: NOW });
      assert.deepEqual(second.applied, ['901-test-note-required', '902-test-after']);
      assert.equal(second.refused, undefined);
      assert.deepEqual((await migrationStatus(storage, UPGRADE)).pending, []);
    });

    test('an instance that says nothing of its build counts as older; an instance starting contracts only alone', async (t) => {
      const storage = await openTestStorage(t, backend);
      const upgrade = { ...MIGRATIONS, '900-test-note': UPGRADE['900-test-note'] as WardMigration, '901-test-note-required': UPGRADE['901-test-note-required'] as WardMigration };
      await migrate(storage, { migrations: { ...MIGRATIONS, '900-test-note': UPGRADE['900-test-note'] as WardMigration }, contract: 'unless-older' });
      await beat(storage, 'silent', null);
      const refused = await migrate(storage, { migrations: upgrade, contract: 'unless-older', now: NOW });
      assert.deepEqual(refused.refused?.instances, [{ id: 'silent', version: null, knows: null }]);
      assert.deepEqual((await migrationStatus(storage, upgrade)).blocking, [], 'only a contracting step is pending: the build serves');

      await storage.db.deleteFrom('leases').execute();
      await beat(storage, 'new', '901-test-note-required');
      const starting = await migrate(storage, { migrations: upgrade, contract: 'when-alone', now: NOW });
      assert.equal(starting.refused?.reason, 'other_instances', 'another instance is live: left to ward migrate');
      assert.deepEqual((await migrate(storage, { migrations: upgrade, contract: 'unless-older', now: NOW })).applied, ['901-test-note-required']);
    });

    test('a lapsed heartbeat holds nothing back', async (t) => {
      const storage = await openTestStorage(t, backend);
      await migrate(storage, { contract: 'unless-older' });
      await acquireLease(storage.db, { name: 'instance:dead', holder: 'dead', now: NOW.toISOString(), expiresAt: new Date(NOW.getTime() - 1).toISOString(), detail: null });
      const upgrade = { ...MIGRATIONS, '901-test-note-required': UPGRADE['901-test-note-required'] as WardMigration };
      const report = await migrate(storage, { migrations: { ...upgrade, '900-test-note': UPGRADE['900-test-note'] as WardMigration }, contract: 'when-alone', now: NOW });
      assert.deepEqual(report.applied, ['900-test-note', '901-test-note-required']);
    });
  });
}
