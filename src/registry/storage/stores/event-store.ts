import type { Kysely } from 'kysely';
import { insertRows } from '../compiled-statements.ts';
import type { Database } from '../schema.ts';

/** An event as a change describes it; `seq` is assigned when its write unit commits. */
export type NewEvent = {
  type: string;
  subject: string;
  data: Record<string, unknown>;
  occurred_at: string;
};

export type StoredEvent = NewEvent & { seq: number };

/** The events a write unit emitted, numbered after `lastSeq` in the order they were emitted. */
export function numberEvents(lastSeq: number, events: readonly NewEvent[]): StoredEvent[] {
  return events.map((event, index) => ({ ...event, seq: lastSeq + index + 1 }));
}

/** Rows per insert statement: five parameters a row, far below SQLite's bound-parameter limit. */
const INSERT_CHUNK = 200;

/** A numbered event as the events table stores it (`data` as JSON text). */
export type EventRow = { seq: number; type: string; occurred_at: string; subject: string; data: string };

/**
 * The rows of numbered events as stored. Throws a TypeError for an event the table would refuse (a
 * field that is not text, data that is not JSON), so a write unit fails with its own event, before
 * its batch's closing write (write-unit.ts).
 */
export function eventRows(events: readonly StoredEvent[]): EventRow[] {
  return events.map((e) => {
    const data = JSON.stringify(e.data) as string | undefined;
    if (typeof e.type !== 'string' || typeof e.subject !== 'string' || typeof e.occurred_at !== 'string' || typeof data !== 'string') {
      throw new TypeError(`event ${e.seq}: type, subject and occurred_at must be text, and data must be a JSON value`);
    }
    return { seq: e.seq, type: e.type, occurred_at: e.occurred_at, subject: e.subject, data };
  });
}

/**
 * Inserts event rows, a chunk of rows per statement. Only where their numbers are owned: in a write
 * unit's batch, under the `event_sequence` lock (write-unit.ts), which also moves the sequence.
 */
export async function insertEventRows(tx: Kysely<Database>, rows: readonly EventRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) await insertRows(tx, 'events', rows.slice(i, i + INSERT_CHUNK));
}

/** {@link insertEventRows} of numbered events. */
export async function insertEvents(tx: Kysely<Database>, events: readonly StoredEvent[]): Promise<void> {
  await insertEventRows(tx, eventRows(events));
}

/**
 * `restricted`: events of these types are left out unless they are about a key of `orgId` (their
 * subject is one of its `api_keys`): the history's rule for organisation events (event-visibility.ts).
 */
type EventFilter = { types?: readonly string[]; subject?: string; restricted?: { types: readonly string[]; orgId: string | undefined } };

/**
 * Events of the filter's types and subject (any when not given), in sequence order `forward` from
 * after `from` or `backward` from before it; from either end when `from` is undefined.
 */
async function selectEvents(
  db: Kysely<Database>,
  direction: 'forward' | 'backward',
  from: number | undefined,
  filter: EventFilter & { limit: number },
): Promise<StoredEvent[]> {
  let query = db.selectFrom('events').selectAll();
  if (from !== undefined) query = query.where('seq', direction === 'forward' ? '>' : '<', from);
  if (filter.types && filter.types.length > 0) query = query.where('type', 'in', filter.types);
  if (filter.subject) query = query.where('subject', '=', filter.subject);
  const { restricted } = filter;
  if (restricted && restricted.types.length > 0) {
    const orgId = restricted.orgId;
    query = query.where((eb) =>
      eb.or([
        eb('type', 'not in', restricted.types),
        ...(orgId === undefined ? [] : [eb('subject', 'in', eb.selectFrom('api_keys').select('key_id').where('org_id', '=', orgId))]),
      ]),
    );
  }
  const rows = await query.orderBy('seq', direction === 'forward' ? 'asc' : 'desc').limit(filter.limit).execute();
  return rows.map((row) => ({
    seq: Number(row.seq),
    type: row.type,
    subject: row.subject,
    occurred_at: row.occurred_at,
    data: JSON.parse(row.data) as Record<string, unknown>,
  }));
}

/** Events after `afterSeq` in sequence order, optionally of some types only. */
export function listEvents(
  db: Kysely<Database>,
  options: EventFilter & { afterSeq: number; limit: number },
): Promise<StoredEvent[]> {
  return selectEvents(db, 'forward', options.afterSeq, options);
}

/** Retained events before `beforeSeq` (or the newest), newest first: a history to page back through. */
export function listEventsNewestFirst(
  db: Kysely<Database>,
  options: EventFilter & { beforeSeq?: number; limit: number },
): Promise<StoredEvent[]> {
  return selectEvents(db, 'backward', options.beforeSeq, options);
}

/** The sequence number of the last committed event (0 before the first), pruned or not. */
export async function lastCommittedSeq(db: Kysely<Database>): Promise<number> {
  const row = await db.selectFrom('event_sequence').select('last_seq').where('id', '=', 1).executeTakeFirst();
  return row ? Number(row.last_seq) : 0;
}

/**
 * The lowest sequence number still kept: the retained events are always the contiguous range from
 * here to the last committed one. With every event pruned, the one after the last committed.
 */
export async function oldestRetainedSeq(db: Kysely<Database>): Promise<number> {
  // Read the counter first: if the table is then empty, nothing up to it is left.
  const last = await lastCommittedSeq(db);
  const row = await db
    .selectFrom('events')
    .select((eb) => eb.fn.min('seq').as('oldest'))
    .executeTakeFirst();
  return row?.oldest === null || row?.oldest === undefined ? last + 1 : Number(row.oldest);
}

/**
 * Deletes the events that occurred before `cutoff` (RFC 3339), always as a prefix of the sequence:
 * up to the newest such event, so a clock that ran behind on one instance can shorten an event's
 * stay but never leave a hole that a reader resuming from an older cursor would fall into.
 * Returns the number deleted.
 */
export async function pruneEventsBefore(db: Kysely<Database>, cutoff: string): Promise<number> {
  const row = await db
    .selectFrom('events')
    .select((eb) => eb.fn.max('seq').as('through'))
    .where('occurred_at', '<', cutoff)
    .executeTakeFirst();
  if (row?.through === null || row?.through === undefined) return 0;
  const result = await db.deleteFrom('events').where('seq', '<=', Number(row.through)).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** The sequence number of the latest committed event: a cheap generation number for caches. */
export async function latestSequence(db: Kysely<Database>): Promise<number> {
  const row = await db.selectFrom('event_sequence').select('last_seq').where('id', '=', 1).executeTakeFirst();
  return Number(row?.last_seq ?? 0);
}
