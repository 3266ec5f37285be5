import type { Kysely } from 'kysely';
import type { Database } from '../schema.ts';

/** An event as a change describes it; `seq` is assigned when its write unit commits. */
export type NewEvent = {
  type: string;
  subject: string;
  data: Record<string, unknown>;
  occurred_at: string;
};

export type StoredEvent = NewEvent & { seq: number };

export async function insertEvents(
  tx: Kysely<Database>,
  lastSeq: number,
  events: readonly NewEvent[],
): Promise<StoredEvent[]> {
  if (events.length === 0) return [];
  const stored = events.map((event, index) => ({ ...event, seq: lastSeq + index + 1 }));
  await tx
    .insertInto('events')
    .values(stored.map((e) => ({ seq: e.seq, type: e.type, occurred_at: e.occurred_at, subject: e.subject, data: JSON.stringify(e.data) })))
    .execute();
  return stored;
}

/** Events after `afterSeq` in sequence order, optionally of some types only. */
export async function listEvents(
  db: Kysely<Database>,
  options: { afterSeq: number; limit: number; types?: readonly string[]; subject?: string },
): Promise<StoredEvent[]> {
  let query = db.selectFrom('events').selectAll().where('seq', '>', options.afterSeq);
  if (options.types && options.types.length > 0) query = query.where('type', 'in', options.types);
  if (options.subject) query = query.where('subject', '=', options.subject);
  const rows = await query.orderBy('seq', 'asc').limit(options.limit).execute();
  return rows.map((row) => ({
    seq: Number(row.seq),
    type: row.type,
    subject: row.subject,
    occurred_at: row.occurred_at,
    data: JSON.parse(row.data) as Record<string, unknown>,
  }));
}
