import { PostgresAdapter, sql, type Kysely } from 'kysely';
import { createTable } from './create-table.ts';

/**
 * The protocols of each agent's endpoints, one row per agent and protocol, keyed protocol first:
 * the FHIR directory's `Endpoint?connection-type=` reads the agents with an endpoint of a protocol
 * as one index range, in agent id order (docs/fhir.md, "Speed"), where it read agents one page after
 * another and kept those that matched, up to 1000 per request for a protocol few or none have.
 * Written by agent-store.ts with each agent write; existing agents backfilled from their records.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createTable(db, 'agent_endpoints', { protocol: 'text not null', agent_id: 'text not null' }, { primaryKey: ['protocol', 'agent_id'] });
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`insert into agent_endpoints (protocol, agent_id)
              select distinct endpoint->>'protocol', agents.id from agents, jsonb_array_elements((record::jsonb)->'endpoints') endpoint`.execute(db);
  } else {
    await sql`insert into agent_endpoints (protocol, agent_id)
              select distinct json_extract(endpoint.value, '$.protocol'), agents.id from agents, json_each(agents.record, '$.endpoints') endpoint`.execute(db);
  }
  // Rows of one agent, for its rewrite on update.
  await db.schema.createIndex('agent_endpoints_agent').on('agent_endpoints').column('agent_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('agent_endpoints').execute();
}
