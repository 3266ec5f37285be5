/**
 * A write whose loss in a crash does no harm, committed without waiting for the disk. On SQLite (WAL)
 * the statements run with `synchronous=NORMAL` on the one connection, held for the whole call so no
 * other transaction can commit in between: their WAL frames reach the disk with the next durable
 * commit, and a crash before it loses them, never the database's consistency. PostgreSQL runs them
 * as usual. Used for idempotency claims: a claim lost in a crash belongs to a request that was never
 * answered, and its retry simply runs (where a durable one would have answered "in progress" until
 * its lock lapsed). Measured: a claim's own fsync was a third of a registration's database time.
 */
import { sql, type Kysely } from 'kysely';
import type { Storage } from './database.ts';
import type { Database } from './schema.ts';

export async function withRelaxedDurability<T>(storage: Storage, work: (db: Kysely<Database>) => Promise<T>): Promise<T> {
  if (storage.backend !== 'sqlite') return work(storage.db);
  return storage.db.connection().execute(async (connection) => {
    await sql`PRAGMA synchronous = NORMAL`.execute(connection);
    try {
      return await work(connection);
    } finally {
      await sql`PRAGMA synchronous = FULL`.execute(connection);
    }
  });
}
