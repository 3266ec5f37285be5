import type { Kysely } from 'kysely';
import type { Database } from '../schema.ts';

/**
 * Agent rows. The indexed columns (status, jurisdiction, owner, version, trust state) live beside the
 * JSON document the owner wrote, so filters use indexes and the document stays one value.
 */
export type AgentRow = {
  id: string;
  agent_uri: string;
  jurisdiction: string;
  status: string;
  display_name: string;
  org_id: string | null;
  version: number;
  trust_state: string;
  trust_level: number;
  record: Record<string, unknown>;
  created_at: string;
  updated_at: string;
};

type Db = Kysely<Database>;

function fromRow(row: Database['agents']): AgentRow {
  return { ...row, version: Number(row.version), trust_level: Number(row.trust_level), record: JSON.parse(row.record) };
}

function toRow(agent: AgentRow): Database['agents'] {
  return { ...agent, record: JSON.stringify(agent.record) };
}

export async function insertAgent(tx: Db, agent: AgentRow): Promise<void> {
  await tx.insertInto('agents').values(toRow(agent)).execute();
}

export async function findAgent(db: Db, id: string): Promise<AgentRow | undefined> {
  const row = await db.selectFrom('agents').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/**
 * Replaces an agent row only if its version is still `expectedVersion`. Returns false when another
 * write got there first (the caller answers VERSION_CONFLICT).
 */
export async function replaceAgent(tx: Db, agent: AgentRow, expectedVersion: number): Promise<boolean> {
  const { id, agent_uri: _uri, created_at: _created, ...changes } = toRow(agent);
  const result = await tx
    .updateTable('agents')
    .set(changes)
    .where('id', '=', id)
    .where('version', '=', expectedVersion)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Whether another non-revoked agent of the organisation already uses the display name. */
export async function hasNameConflict(
  db: Db,
  orgId: string,
  displayName: string,
  exceptId?: string,
): Promise<boolean> {
  let query = db
    .selectFrom('agents')
    .select('id')
    .where('org_id', '=', orgId)
    .where('display_name', '=', displayName)
    .where('status', '!=', 'revoked');
  if (exceptId) query = query.where('id', '!=', exceptId);
  return (await query.limit(1).executeTakeFirst()) !== undefined;
}

export type AgentFilter = { jurisdiction?: string; status?: string };

/** A page of agents in id (creation) order after `afterId`. */
export async function listAgentPage(
  db: Db,
  filter: AgentFilter,
  page: { afterId?: string; limit: number },
): Promise<AgentRow[]> {
  let query = db.selectFrom('agents').selectAll();
  if (filter.jurisdiction) query = query.where('jurisdiction', '=', filter.jurisdiction);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (page.afterId) query = query.where('id', '>', page.afterId);
  const rows = await query.orderBy('id', 'asc').limit(page.limit).execute();
  return rows.map(fromRow);
}

export async function countAgents(db: Db, filter: AgentFilter): Promise<number> {
  let query = db.selectFrom('agents').select((eb) => eb.fn.countAll<number | string>().as('count'));
  if (filter.jurisdiction) query = query.where('jurisdiction', '=', filter.jurisdiction);
  if (filter.status) query = query.where('status', '=', filter.status);
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.count);
}
