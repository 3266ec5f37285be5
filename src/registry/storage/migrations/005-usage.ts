import type { Kysely } from 'kysely';
import { createTable } from './create-table.ts';

/**
 * Usage metering (contract §7, docs/api.md "Limits and usage"): one row per API key, UTC day and
 * operation class, holding how many requests of that class the key made that day. `org_id` is
 * copied from the key (it never changes) so a summary by organisation reads one table.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createTable(db, 'usage_counts', {
    key_id: 'text not null',
    day: 'text not null',
    class: 'text not null',
    org_id: 'text not null',
    count: 'bigint not null',
  }, { primaryKey: ['key_id', 'day', 'class'] });
  await db.schema.createIndex('usage_counts_day').on('usage_counts').columns(['day', 'key_id']).execute();
  await db.schema.createIndex('usage_counts_org_day').on('usage_counts').columns(['org_id', 'day']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('usage_counts').execute();
}
