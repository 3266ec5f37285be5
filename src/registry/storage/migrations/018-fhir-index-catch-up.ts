import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * The catch-up of migrations 014 (`agent_versions`) and 015 (`agent_endpoints`) after a rolling
 * upgrade (docs/operations.md, "Migrations 013–018"): both were backfilled when they ran, but an
 * older instance that went on taking writes during the roll wrote neither, so an agent it wrote is
 * missing from `Endpoint?connection-type=` and that version from `_history`. A contracting step runs
 * only once no instance of an older build is alive, so after it nothing can write an agent without
 * these rows again: it adds what is missing, once.
 *
 * It only adds (conflicts ignored): instances of this build write both tables while it runs. A
 * protocol an older instance removed from an agent may leave its index row behind; the search checks
 * every agent's endpoints against its record, so such a row costs a read and changes no answer.
 */
export const phase = 'contract';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`insert into agent_versions (agent_id, version, status, record, updated_at)
            select id, version, status, record, updated_at from agents
            where not exists (select 1 from agent_versions v where v.agent_id = agents.id and v.version = agents.version)
            on conflict do nothing`.execute(db);
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`insert into agent_endpoints (protocol, agent_id)
              select distinct endpoint->>'protocol', agents.id from agents, jsonb_array_elements((record::jsonb)->'endpoints') endpoint
              on conflict do nothing`.execute(db);
  } else {
    await sql`insert or ignore into agent_endpoints (protocol, agent_id)
              select distinct json_extract(endpoint.value, '$.protocol'), agents.id from agents, json_each(agents.record, '$.endpoints') endpoint`.execute(db);
  }
}

/** Nothing to undo: the rows it added are those the build writes anyway. */
export async function down(): Promise<void> {}
