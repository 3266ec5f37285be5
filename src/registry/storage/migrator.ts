import { sql, type Kysely, type Migration } from 'kysely';
import type { Storage } from './database.ts';
import { MIGRATIONS } from './migrations/index.ts';

/**
 * Applies every pending migration in one transaction and returns the names applied now.
 *
 * Ours rather than Kysely's Migrator: that one decides whether its bookkeeping tables exist by
 * introspecting every schema of the database, which both mistakes another schema's tables for ours
 * and fails outright when another schema is being changed at the same moment. Here the bookkeeping is
 * one table in our own schema, and concurrent starts queue on a lock: PostgreSQL's transaction-scoped
 * advisory lock (per schema), SQLite's write lock (the first statement writes).
 */
export async function migrateToLatest(storage: Storage, migrations: Record<string, Migration> = MIGRATIONS): Promise<string[]> {
  return storage.db.transaction().execute(async (tx) => {
    if (storage.backend === 'postgres') {
      await sql`select pg_advisory_xact_lock(hashtext('ward-migrations:' || current_schema()))`.execute(tx);
    }
    await sql`create table if not exists ward_migrations (name text primary key, applied_at text not null)`.execute(tx);
    const { rows } = await sql<{ name: string }>`select name from ward_migrations`.execute(tx);
    const applied = new Set(rows.map((row) => row.name));
    const names = Object.keys(migrations).sort();
    const unknown = [...applied].filter((name) => !names.includes(name));
    if (unknown.length > 0) {
      throw new Error(`the database has migrations this build does not know (${unknown.join(', ')}); is it older than the data?`);
    }
    const pending = names.filter((name) => !applied.has(name));
    for (const name of pending) {
      await (migrations[name] as Migration).up(tx as unknown as Kysely<unknown>);
      await sql`insert into ward_migrations (name, applied_at) values (${name}, ${new Date().toISOString()})`.execute(tx);
    }
    return pending;
  });
}

/** Which migrations the database has and which this build expects: what the diagnostics page shows. */
export async function migrationStatus(storage: Storage, migrations: Record<string, Migration> = MIGRATIONS) {
  const { rows } = await sql<{ name: string }>`select name from ward_migrations order by name`.execute(storage.db);
  const applied = rows.map((row) => row.name);
  const expected = Object.keys(migrations).sort();
  return { applied: applied.length, expected: expected.length, latest: applied.at(-1) ?? null, pending: expected.filter((name) => !applied.includes(name)) };
}
