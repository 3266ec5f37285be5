import { sql, type Kysely } from 'kysely';
import { createTable } from './create-table.ts';

/**
 * Every version of every agent record, written in the same transaction as the agent row it copies
 * (agent-store.ts), so the FHIR directory can answer `Device/{id}/_history` and `vread` (docs/fhir.md).
 * The columns are those a version changes; the agent URI, jurisdiction and creation time never change
 * and are read from the agent row.
 *
 * Backfill: the registry kept only the current record before this migration (the events name the
 * status and display name of a change, not the record), so each existing agent gets its current
 * version alone; its earlier versions are not recoverable, and its history starts there.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createTable(
    db,
    'agent_versions',
    { agent_id: 'text not null', version: 'integer not null', status: 'text not null', record: 'text not null', updated_at: 'text not null' },
    { primaryKey: ['agent_id', 'version'] },
  );
  await sql`insert into agent_versions (agent_id, version, status, record, updated_at) select id, version, status, record, updated_at from agents`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('agent_versions').execute();
}
