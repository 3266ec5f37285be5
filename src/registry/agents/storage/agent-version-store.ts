import type { Kysely } from 'kysely';
import { insertRows } from '../../storage/compiled-statements.ts';
import type { Database } from '../../storage/schema.ts';

/**
 * The versions of agent records (migration 014), written by agent-store.ts with each agent write:
 * the FHIR directory's `Device/{id}/_history` and `vread` read them.
 */
export type AgentVersion = { version: number; status: string; record: Record<string, unknown>; updatedAt: string };

type Db = Kysely<Database>;

const fromRow = (row: { version: number; status: string; record: string; updated_at: string }): AgentVersion => ({
  version: Number(row.version),
  status: row.status,
  record: JSON.parse(row.record) as Record<string, unknown>,
  updatedAt: row.updated_at,
});

/** One version of an agent, if it was kept. */
export async function findAgentVersion(db: Db, agentId: string, version: number): Promise<AgentVersion | undefined> {
  const row = await db.selectFrom('agent_versions').select(['version', 'status', 'record', 'updated_at']).where('agent_id', '=', agentId).where('version', '=', version).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/** A page of an agent's versions, newest first, below `beforeVersion` when given. */
export async function listAgentVersions(db: Db, agentId: string, page: { beforeVersion?: number; limit: number }): Promise<AgentVersion[]> {
  let query = db.selectFrom('agent_versions').select(['version', 'status', 'record', 'updated_at']).where('agent_id', '=', agentId);
  if (page.beforeVersion !== undefined) query = query.where('version', '<', page.beforeVersion);
  const rows = await query.orderBy('version', 'desc').limit(page.limit).execute();
  return rows.map(fromRow);
}

/** How many versions of an agent are kept. */
export async function countAgentVersions(db: Db, agentId: string): Promise<number> {
  const row = await db.selectFrom('agent_versions').select((eb) => eb.fn.countAll<number | string>().as('count')).where('agent_id', '=', agentId).executeTakeFirstOrThrow();
  return Number(row.count);
}

/**
 * The version row of an agent write, in the write's transaction (agent-store.ts calls it with every
 * insert and replace of an agent row; registration on PostgreSQL writes it inside its one statement).
 */
export async function insertAgentVersion(tx: Db, row: { id: string; version: number; status: string; record: string; updated_at: string }): Promise<void> {
  await insertRows(tx, 'agent_versions', [{ agent_id: row.id, version: row.version, status: row.status, record: row.record, updated_at: row.updated_at }]);
}
