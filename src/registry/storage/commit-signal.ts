import { sql, type RawBuilder } from 'kysely';
import type { Storage } from './database.ts';
import { callbacksPerStorage } from './storage-callbacks.ts';

/**
 * Wake-ups for event readers once a write unit's events are committed. They carry no events: a
 * woken reader reads `seq > last delivered` from the events table, the one source of truth, so a
 * lost or duplicated wake-up delays nothing beyond the reader's next poll and never skips an event.
 *
 * Two paths:
 * - in this process, after the commit returns ({@link signalEventsCommitted});
 * - on PostgreSQL, `pg_notify` inside the write transaction, which PostgreSQL delivers only when
 *   the transaction commits (and never if it rolls back) to every instance LISTENing on the schema's
 *   channel (see commit-listener.ts).
 */
const listeners = callbacksPerStorage<[lastSeq: number]>();

/** Calls `listener` with the last sequence number after each write unit that committed events. */
export function onEventsCommitted(storage: Storage, listener: (lastSeq: number) => void): () => void {
  return listeners.add(storage, listener);
}

/** Tells this process's listeners that events up to `lastSeq` are committed. */
export function signalEventsCommitted(storage: Storage, lastSeq: number): void {
  listeners.call(storage, lastSeq);
}

/**
 * The channel name, computed by SQL on the connection itself so writers and listeners agree on the
 * schema they really use. Per schema, because several registries (and test runs) may share one
 * database; hashed, because a channel name is an identifier of at most 63 bytes.
 */
export const COMMIT_CHANNEL_EXPRESSION = "'ward_events_' || md5(current_schema())";

/**
 * The cross-instance wake-up as an SQL expression, for a write transaction on PostgreSQL to select:
 * PostgreSQL queues it and sends it at commit (and never if the transaction rolls back). SQLite has
 * no other instance to tell.
 */
export function commitNotification(lastSeq: number): RawBuilder<unknown> {
  return sql`pg_notify(${sql.raw(COMMIT_CHANNEL_EXPRESSION)}, ${String(lastSeq)})`;
}

/** The channel this storage's writers notify on (PostgreSQL only). */
export async function commitChannelOf(storage: Storage): Promise<string> {
  const { rows } = await sql<{ channel: string }>`select ${sql.raw(COMMIT_CHANNEL_EXPRESSION)} as channel`.execute(storage.db);
  return (rows[0] as { channel: string }).channel;
}
