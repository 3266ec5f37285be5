import type { Kysely } from 'kysely';
import { insertRows } from '../../storage/compiled-statements.ts';
import type { Database } from '../../storage/schema.ts';

/**
 * The protocols of each agent's endpoints (migration 015), written by agent-store.ts with every agent
 * write: the FHIR directory's `Endpoint?connection-type=` reads the agents that have one as an index
 * range, in agent id order.
 */
type Db = Kysely<Database>;

/** The distinct protocols of a record's endpoints. */
export function endpointProtocolsOf(record: Record<string, unknown>): string[] {
  const endpoints = (record as { endpoints?: Array<{ protocol: string }> }).endpoints ?? [];
  return [...new Set(endpoints.map((endpoint) => endpoint.protocol))];
}

export async function insertEndpointRows(tx: Db, agentId: string, protocols: readonly string[]): Promise<void> {
  await insertRows(tx, 'agent_endpoints', protocols.map((protocol) => ({ protocol, agent_id: agentId })));
}

/** An agent's rows after a write that may have changed its endpoints. */
export async function replaceEndpointRows(tx: Db, agentId: string, protocols: readonly string[]): Promise<void> {
  await tx.deleteFrom('agent_endpoints').where('agent_id', '=', agentId).execute();
  await insertEndpointRows(tx, agentId, protocols);
}

/** The ids of the agents with an endpoint of any of these protocols, in id order, after `afterId`. */
export async function listAgentIdsWithProtocols(db: Db, protocols: readonly string[], page: { afterId?: string; limit: number }): Promise<string[]> {
  if (protocols.length === 0) return [];
  let query = db.selectFrom('agent_endpoints').select('agent_id').distinct().where('protocol', 'in', protocols);
  if (page.afterId !== undefined) query = query.where('agent_id', '>', page.afterId);
  const rows = await query.orderBy('agent_id', 'asc').limit(page.limit).execute();
  return rows.map((row) => row.agent_id);
}
