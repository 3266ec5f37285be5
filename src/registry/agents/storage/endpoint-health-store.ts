import { sql, type Kysely } from 'kysely';
import type { Database } from '../../storage/schema.ts';

type Db = Kysely<Database>;

export type EndpointHealthRow = {
  agent_id: string;
  endpoint_index: number;
  url: string;
  status: 'healthy' | 'unhealthy' | 'unknown';
  reason: string | null;
  latency_ms: number | null;
  checked_at: string;
};

/** The latest readings of the given agents, grouped by agent id. */
export async function listEndpointHealth(db: Db, agentIds: readonly string[]): Promise<Map<string, EndpointHealthRow[]>> {
  const byAgent = new Map<string, EndpointHealthRow[]>();
  if (agentIds.length === 0) return byAgent;
  const rows = await db.selectFrom('endpoint_health').selectAll().where('agent_id', 'in', agentIds).execute();
  for (const row of rows) {
    const reading = { ...row, endpoint_index: Number(row.endpoint_index), latency_ms: row.latency_ms === null ? null : Number(row.latency_ms) } as EndpointHealthRow;
    const list = byAgent.get(row.agent_id) ?? [];
    list.push(reading);
    byAgent.set(row.agent_id, list);
  }
  return byAgent;
}

export async function upsertEndpointHealth(tx: Db, reading: EndpointHealthRow): Promise<void> {
  await tx
    .insertInto('endpoint_health')
    .values(reading)
    .onConflict((oc) =>
      oc.columns(['agent_id', 'endpoint_index']).doUpdateSet({
        url: reading.url,
        status: reading.status,
        reason: reading.reason,
        latency_ms: reading.latency_ms,
        checked_at: reading.checked_at,
      }),
    )
    .execute();
}

/** Forgets an agent's readings: its endpoints changed, so the old readings describe other addresses. */
export async function clearEndpointHealth(tx: Db, agentId: string): Promise<void> {
  await tx.deleteFrom('endpoint_health').where('agent_id', '=', agentId).execute();
}

/**
 * Readings of the active agents' probed endpoints by class: healthy, degraded (healthy but answering
 * in `degradedLatencyMs` or more) and down (unhealthy). Endpoints without a reading are not counted.
 */
export async function countActiveEndpointHealth(db: Db, degradedLatencyMs: number): Promise<{ healthy: number; degraded: number; down: number }> {
  const row = await db
    .selectFrom('endpoint_health as h')
    .innerJoin('agents as a', 'a.id', 'h.agent_id')
    .select([
      sql<number | string | null>`sum(case when h.status = 'unhealthy' then 1 else 0 end)`.as('down'),
      sql<number | string | null>`sum(case when h.status = 'healthy' and h.latency_ms >= ${degradedLatencyMs} then 1 else 0 end)`.as('degraded'),
      sql<number | string | null>`sum(case when h.status = 'healthy' and (h.latency_ms is null or h.latency_ms < ${degradedLatencyMs}) then 1 else 0 end)`.as('healthy'),
    ])
    .where('a.status', '=', 'active')
    .executeTakeFirstOrThrow();
  return { healthy: Number(row.healthy ?? 0), degraded: Number(row.degraded ?? 0), down: Number(row.down ?? 0) };
}

/** The active agents' endpoints that are down now, with their agent's URI and name, oldest reading first. */
export async function listDownEndpoints(db: Db, limit: number) {
  const rows = await db
    .selectFrom('endpoint_health as h')
    .innerJoin('agents as a', 'a.id', 'h.agent_id')
    .select(['a.agent_uri', 'a.display_name', 'h.endpoint_index', 'h.url', 'h.reason', 'h.checked_at'])
    .where('a.status', '=', 'active')
    .where('h.status', '=', 'unhealthy')
    .orderBy('h.checked_at', 'asc')
    .limit(limit)
    .execute();
  return rows.map((row) => ({ ...row, endpoint_index: Number(row.endpoint_index) }));
}
