import type { Kysely } from 'kysely';
import type { Database } from '../../storage/schema.ts';

type Db = Kysely<Database>;

/** A number of requests of one class made with one key on one UTC day (`YYYY-MM-DD`). */
export type UsageCount = { key_id: string; org_id: string; day: string; class: string; count: number };

/**
 * Adds the counts to what is stored, in one statement (an insert that adds on conflict, so
 * instances flushing at once both land). Rows are written in key order: two instances flushing
 * overlapping rows then take the row locks in the same order and cannot deadlock on PostgreSQL.
 */
export async function addUsageCounts(db: Db, counts: readonly UsageCount[]): Promise<void> {
  if (counts.length === 0) return;
  const sorted = [...counts].sort(
    (a, b) => compare(a.key_id, b.key_id) || compare(a.day, b.day) || compare(a.class, b.class),
  );
  await db
    .insertInto('usage_counts')
    .values(sorted)
    .onConflict((oc) =>
      oc
        .columns(['key_id', 'day', 'class'])
        .doUpdateSet((eb) => ({ count: eb('usage_counts.count', '+', eb.ref('excluded.count')) })),
    )
    .execute();
}

/** Stored counts for the days `fromDay`..`toDay` (inclusive), optionally of one org and/or key, in key, day, class order. */
export async function listUsageCounts(
  db: Db,
  filter: { fromDay: string; toDay: string; orgId?: string; keyId?: string },
): Promise<UsageCount[]> {
  let query = db
    .selectFrom('usage_counts')
    .selectAll()
    .where('day', '>=', filter.fromDay)
    .where('day', '<=', filter.toDay);
  if (filter.orgId !== undefined) query = query.where('org_id', '=', filter.orgId);
  if (filter.keyId !== undefined) query = query.where('key_id', '=', filter.keyId);
  const rows = await query.orderBy('key_id').orderBy('day').orderBy('class').execute();
  // PostgreSQL returns BIGINT as a string.
  return rows.map((row) => ({ ...row, count: Number(row.count) }));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
