import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * Each ledger leaf names the subject of the event it records (an agent URI, a registry URI, a run's
 * session id), indexed with the leaf index: the FHIR directory answers an agent's `Provenance` from
 * the ledger, which keeps every change for ever, where the event table keeps only its retention
 * window (docs/fhir.md). Leaves written before this migration get the subject their entry names.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('ledger_leaves').addColumn('subject', 'text').execute();
  if (db.getExecutor().adapter instanceof PostgresAdapter) await sql`update ledger_leaves set subject = (entry::jsonb)->>'subject'`.execute(db);
  else await sql`update ledger_leaves set subject = json_extract(entry, '$.subject')`.execute(db);
  await db.schema.createIndex('ledger_leaves_subject').on('ledger_leaves').columns(['subject', 'leaf_index']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('ledger_leaves_subject').execute();
  await db.schema.alterTable('ledger_leaves').dropColumn('subject').execute();
}
