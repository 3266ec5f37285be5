import type { Kysely } from 'kysely';
import type { Database } from '../schema.ts';

/**
 * What the admin console asks of the registry (docs/console.md) without scanning documents:
 * - `events (subject, seq)`: an agent's history, newest first; `events (type, seq)`: recent health changes;
 * - `agents.trust_expires_at`: when the record's trust evidence first lapses (alerts 30 days ahead);
 * - `agents.endpoint_count`: endpoints per record, so "how many endpoints, how many probed" is a sum.
 * Existing records get their endpoint count from their documents; their expiry is learnt at their
 * next write (trust validation computes it).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('events_subject_seq').on('events').columns(['subject', 'seq']).execute();
  await db.schema.createIndex('events_type_seq').on('events').columns(['type', 'seq']).execute();
  await db.schema.alterTable('agents').addColumn('trust_expires_at', 'text').execute();
  await db.schema.alterTable('agents').addColumn('endpoint_count', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.createIndex('agents_trust_expires_at').on('agents').column('trust_expires_at').execute();

  const typed = db as unknown as Kysely<Database>;
  for (let afterId = ''; ; ) {
    const rows = await typed.selectFrom('agents').select(['id', 'record']).where('id', '>', afterId).orderBy('id').limit(500).execute();
    if (rows.length === 0) break;
    for (const row of rows) {
      const endpoints = (JSON.parse(row.record) as { endpoints?: unknown[] }).endpoints;
      await typed.updateTable('agents').set({ endpoint_count: Array.isArray(endpoints) ? endpoints.length : 0 }).where('id', '=', row.id).execute();
    }
    afterId = (rows[rows.length - 1] as { id: string }).id;
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('agents_trust_expires_at').execute();
  await db.schema.alterTable('agents').dropColumn('endpoint_count').execute();
  await db.schema.alterTable('agents').dropColumn('trust_expires_at').execute();
  await db.schema.dropIndex('events_type_seq').execute();
  await db.schema.dropIndex('events_subject_seq').execute();
}
