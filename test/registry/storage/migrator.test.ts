import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { migrateToLatest } from '../../../src/registry/storage/migrator.ts';
import { MIGRATIONS } from '../../../src/registry/storage/migrations/index.ts';
import { BACKENDS, openTestStorage } from '../../helpers/registry.ts';

for (const backend of BACKENDS) {
  describe(`migrations [${backend}]`, () => {
    test('apply once, then report nothing pending', async (t) => {
      const storage = await openTestStorage(t, backend);
      assert.deepEqual(await migrateToLatest(storage), Object.keys(MIGRATIONS));
      assert.deepEqual(await migrateToLatest(storage), []);
    });

    test('concurrent runs apply each migration exactly once', async (t) => {
      const storage = await openTestStorage(t, backend);
      const runs = await Promise.all([migrateToLatest(storage), migrateToLatest(storage), migrateToLatest(storage)]);
      assert.deepEqual(runs.flat(), Object.keys(MIGRATIONS));
    });

    test('a failing migration rolls back every migration of its run', async (t) => {
      const storage = await openTestStorage(t, backend);
      const broken = {
        ...MIGRATIONS,
        '999-broken': {
          up: async (db: Kysely<unknown>) => {
            await sql`create table half_done (id integer)`.execute(db);
            throw new Error('boom');
          },
        },
      };
      await assert.rejects(migrateToLatest(storage, broken), /boom/);
      assert.deepEqual(await migrateToLatest(storage), Object.keys(MIGRATIONS), 'nothing of the failed run stayed');
    });

    test('a database with a migration this build does not know refuses to start', async (t) => {
      const storage = await openTestStorage(t, backend);
      await migrateToLatest(storage);
      await sql`insert into ward_migrations (name, applied_at) values ('998-from-the-future', 'x')`.execute(storage.db);
      await assert.rejects(migrateToLatest(storage), /does not know \(998-from-the-future\)/);
    });
  });
}
