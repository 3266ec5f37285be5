/**
 * A released migration never changes what it creates: migrations 001 to 019, applied to an empty
 * database, give exactly the schema in test/fixtures/migration-schema.json (001 to 009 taken before
 * they shared the table helper, src/registry/storage/migrations/create-table.ts; 010 to 019 added
 * with 019, issue 48). On SQLite that is the SQL of every
 * table and index as stored; on PostgreSQL the columns, indexes and constraints as the catalogue has
 * them. `UPDATE_SCHEMA_SNAPSHOT=1` rewrites the file, for a new released migration only.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import type { Storage } from '../../../src/registry/storage/database.ts';
import { migrateToLatest } from '../../../src/registry/storage/migrator.ts';
import { createTable, type ColumnSpec } from '../../../src/registry/storage/migrations/create-table.ts';
import { MIGRATIONS } from '../../../src/registry/storage/migrations/index.ts';
import { BACKENDS, openTestStorage } from '../../helpers/registry.ts';

const SNAPSHOT = new URL('../../fixtures/migration-schema.json', import.meta.url);
const LAST_IN_SNAPSHOT = '019-agent-name-skeleton';
const RELEASED = Object.fromEntries(Object.entries(MIGRATIONS).filter(([name]) => name <= LAST_IN_SNAPSHOT));

async function rows(storage: Storage, query: ReturnType<typeof sql>): Promise<unknown[]> {
  return (await query.execute(storage.db)).rows;
}

async function schemaOf(storage: Storage): Promise<unknown> {
  if (storage.backend === 'sqlite') {
    return rows(storage, sql`select type, name, tbl_name, sql from sqlite_master order by type, name`);
  }
  // The test's own schema name is cut out of the definitions that carry it.
  return {
    columns: await rows(
      storage,
      sql`select table_name, column_name, ordinal_position, data_type, is_nullable, column_default
          from information_schema.columns where table_schema = current_schema() order by table_name, ordinal_position`,
    ),
    indexes: await rows(
      storage,
      sql`select tablename, indexname, replace(indexdef, current_schema() || '.', '') as indexdef
          from pg_indexes where schemaname = current_schema() order by indexname`,
    ),
    constraints: await rows(
      storage,
      sql`select conname, contype, replace(conrelid::regclass::text, current_schema() || '.', '') as table_name,
          pg_get_constraintdef(oid) as definition
          from pg_constraint where connamespace = current_schema()::regnamespace order by conname`,
    ),
  };
}

describe('released migrations', () => {
  for (const backend of BACKENDS) {
    test(`create the schema they created when released [${backend}]`, async (t) => {
      const storage = await openTestStorage(t, backend);
      assert.deepEqual(await migrateToLatest(storage, RELEASED), Object.keys(RELEASED));
      const actual = JSON.parse(JSON.stringify(await schemaOf(storage)));
      const snapshot = JSON.parse(readFileSync(SNAPSHOT, 'utf8')) as Record<string, unknown>;
      if (process.env.UPDATE_SCHEMA_SNAPSHOT === '1') {
        writeFileSync(SNAPSHOT, `${JSON.stringify({ ...snapshot, [backend]: actual }, null, 2)}\n`);
        return;
      }
      assert.deepEqual(actual, snapshot[backend]);
    });
  }

  test('the table helper refuses a column it does not know rather than guess', async (t) => {
    const storage = await openTestStorage(t, 'sqlite');
    const db = storage.db as never;
    for (const spec of ['text not null primary key', 'varchar', 'integer default -1', 'text default "x"']) {
      await assert.rejects(createTable(db, 'never_made', { id: spec as ColumnSpec }), /not a column this helper knows/, spec);
    }
  });
});
