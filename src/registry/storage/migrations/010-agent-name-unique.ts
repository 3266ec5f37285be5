import { sql, type Kysely } from 'kysely';

/**
 * One live agent per organisation and display name (contract §3's AGENT_CONFLICT) becomes a unique
 * index over the agents that are not revoked, so registration can insert with ON CONFLICT DO NOTHING
 * instead of reading first: one statement fewer inside the write lock (docs/performance.md,
 * "Registration"). Write units have always enforced the rule, so stored data already obeys it; the
 * older index on (org_id, display_name) stays for the lookups by organisation.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create unique index agents_org_name_live on agents (org_id, display_name) where status <> 'revoked'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index agents_org_name_live`.execute(db);
}
