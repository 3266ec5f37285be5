import type { Storage } from '../storage/database.ts';
import type { AgentRow } from './storage/agent-store.ts';
import { listEndpointHealth, type EndpointHealthRow } from './storage/endpoint-health-store.ts';
import type { AgentDocument, AgentRecord, AgentStatus, TrustValidation } from '../../contract/agent-record.ts';

/** What the JSON document column holds besides the owner's document. */
export type StoredDocument = AgentDocument & { trust_validation: TrustValidation; status_reason: string | null };

/** Health ranks as stored: the best reading among an agent's endpoints. */
export const HEALTH_RANKS = { healthy: 2, unknown: 1, unhealthy: 0 } as const;
/** The health reason of an endpoint the prober cannot probe: it has no `health_url`. */
export const NO_HEALTH_URL = 'no_health_url';

/** An agent's rank until its endpoints are probed (again). */
export const UNKNOWN_RANK = HEALTH_RANKS.unknown;

/** The stored row of an agent: its columns for filtering and ranking, and its document. */
export function buildRow(
  meta: {
    id: string;
    uri: string;
    jurisdiction: string;
    status: string;
    version: number;
    created_at: string;
    updated_at: string;
    health_rank: number;
    /** The confusable skeleton of the display name (nameSkeletonFor in agent-writes.ts), or null. */
    name_skeleton: string | null;
  },
  document: StoredDocument,
): AgentRow {
  return {
    id: meta.id,
    agent_uri: meta.uri,
    jurisdiction: meta.jurisdiction,
    status: meta.status,
    display_name: document.display_name,
    org_id: document.owner.org_id ?? null,
    version: meta.version,
    trust_state: document.trust_validation.state,
    trust_level: document.trust_validation.level,
    token_binding: document.capabilities.token_binding,
    best_priority: Math.min(...document.endpoints.map((endpoint) => endpoint.priority)),
    health_rank: meta.health_rank,
    trust_expires_at: document.trust_validation.expires_at ?? null,
    endpoint_count: document.endpoints.length,
    name_skeleton: meta.name_skeleton,
    record: document,
    created_at: meta.created_at,
    updated_at: meta.updated_at,
  };
}

/** Records for rows, each with its endpoints' latest health readings (one query for all). */
export async function toAgentRecords(db: Storage['db'], rows: readonly AgentRow[]): Promise<AgentRecord[]> {
  const health = await listEndpointHealth(db, rows.map((row) => row.id));
  return rows.map((row) => toAgentRecord(row, health.get(row.id) ?? []));
}

/** The record of one row, with its endpoints' latest health readings. */
export async function withHealth(db: Storage['db'], row: AgentRow): Promise<AgentRecord> {
  const [record] = await toAgentRecords(db, [row]);
  return record as AgentRecord;
}

/**
 * The row as the API returns it. An endpoint without a reading whose URL matches is `unknown`
 * (never probed, or its address changed since); one without a `health_url` says so in its reason,
 * as it is never probed.
 */
export function toAgentRecord(row: AgentRow, readings: readonly EndpointHealthRow[]): AgentRecord {
  const document = row.record as StoredDocument;
  return {
    agent_id: row.agent_uri,
    display_name: document.display_name,
    jurisdiction: row.jurisdiction,
    status: row.status as AgentStatus,
    status_reason: document.status_reason,
    endpoints: document.endpoints.map((endpoint, index) => {
      const reading = readings.find((r) => r.endpoint_index === index && r.url === endpoint.url);
      return {
        ...endpoint,
        health: reading
          ? { status: reading.status, checked_at: reading.checked_at, latency_ms: reading.latency_ms, reason: reading.reason }
          : { status: 'unknown' as const, checked_at: null, latency_ms: null, reason: endpoint.health_url ? null : NO_HEALTH_URL },
      };
    }),
    capabilities: document.capabilities,
    trust: document.trust,
    owner: document.owner,
    description: document.description,
    policy_tags: document.policy_tags,
    version: row.version,
    trust_validation: document.trust_validation,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
