import type { Clock } from '../../core/clock.ts';
import type { Storage } from '../storage/database.ts';
import { countActiveEndpoints, countAgentsBy, findAgent, listTrustExpiring } from '../agents/index.ts';
import { countActiveEndpointHealth, listDownEndpoints } from '../agents/index.ts';
import { listEventsNewestFirst } from '../storage/stores/event-store.ts';
import { AGENT_STATUSES, type AgentStatus } from '../../contract/agent-record.ts';
import { flappingEndpoints, replayHealthHistory, type HealthChange } from './health-history.ts';
import type { TrafficStats } from './traffic-stats.ts';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** Trust evidence lapsing within this is reported (the console alerts on it). */
export const TRUST_EXPIRY_HORIZON_DAYS = 30;
/** Health changes of one endpoint within an hour that make it "flapping". */
export const FLAPPING_CHANGES_PER_HOUR = 3;
/** At most this many health changes are read to draw the last day (a busier day is drawn from its newest part). */
const HEALTH_CHANGES_READ = 5000;
const LIST_LIMIT = 50;

export type OverviewDeps = {
  storage: Storage;
  clock: Clock;
  traffic: TrafficStats;
  instanceId: string;
  /** A healthy endpoint answering this slowly or slower counts as degraded: half the probe timeout. */
  degradedLatencyMs: number;
};

/**
 * `GET /v1/admin/overview`: what an operator looks at first (the console's dashboard and alerts),
 * assembled from indexed counts rather than by reading every record: agents by status and trust,
 * endpoints by health class, endpoints down or flapping, trust evidence near expiry, endpoint health
 * over the last day, and this instance's request rates over the last hour.
 */
export async function buildOverview(deps: OverviewDeps) {
  const { db } = deps.storage;
  const now = deps.clock.now();
  const [byStatus, byTrust, endpointTotal, health, down, expiring, changes] = await Promise.all([
    countAgentsBy(db, 'status'),
    countAgentsBy(db, 'trust_state'),
    countActiveEndpoints(db),
    countActiveEndpointHealth(db, deps.degradedLatencyMs),
    listDownEndpoints(db, LIST_LIMIT),
    listTrustExpiring(db, new Date(now.getTime() + TRUST_EXPIRY_HORIZON_DAYS * DAY_MS).toISOString(), LIST_LIMIT),
    recentHealthChanges(deps.storage, now),
  ]);
  const unknown = Math.max(0, endpointTotal - health.healthy - health.degraded - health.down);
  const lastHour = new Date(now.getTime() - HOUR_MS).toISOString();
  const flapping = flappingEndpoints(changes.filter((change) => change.occurred_at >= lastHour), FLAPPING_CHANGES_PER_HOUR).slice(0, LIST_LIMIT);
  const names = new Map<string, string>();
  for (const entry of flapping) {
    const ulid = entry.subject.slice(entry.subject.lastIndexOf('/') + 1);
    const row = names.has(entry.subject) ? undefined : await findAgent(db, ulid);
    if (row) names.set(entry.subject, row.display_name);
  }
  return {
    generated_at: now.toISOString(),
    agents: {
      total: Object.values(byStatus).reduce((sum, count) => sum + count, 0),
      by_status: Object.fromEntries(AGENT_STATUSES.map((status) => [status, byStatus[status] ?? 0])) as Record<AgentStatus, number>,
      by_trust_state: { validated: byTrust.validated ?? 0, failed: byTrust.failed ?? 0, pending: byTrust.pending ?? 0 },
    },
    endpoints: { total: endpointTotal, ...health, unknown, degraded_latency_ms: deps.degradedLatencyMs },
    endpoints_down: down.map((row) => ({
      agent_id: row.agent_uri,
      display_name: row.display_name,
      endpoint_index: row.endpoint_index,
      url: row.url,
      reason: row.reason,
      checked_at: row.checked_at,
      down_since: downSince(changes, row.agent_uri, row.endpoint_index),
    })),
    endpoints_flapping: flapping.map((entry) => ({
      agent_id: entry.subject,
      display_name: names.get(entry.subject) ?? null,
      endpoint_index: entry.endpoint_index,
      url: entry.url,
      changes_last_hour: entry.changes,
      last_change_at: entry.last_change_at,
    })),
    trust_expiring: expiring.map((row) => ({
      agent_id: row.agent_uri,
      display_name: row.display_name,
      status: row.status,
      expires_at: row.trust_expires_at as string,
    })),
    health_history: replayHealthHistory(
      { healthy: health.healthy + health.degraded, down: health.down, unknown },
      changes,
      now,
      HOUR_MS,
      25,
    ),
    traffic: { instance_id: deps.instanceId, minutes: deps.traffic.minutes() },
  };
}

/** The last day's health changes (at most {@link HEALTH_CHANGES_READ}), newest first. */
async function recentHealthChanges(storage: Storage, now: Date): Promise<HealthChange[]> {
  const since = new Date(now.getTime() - DAY_MS).toISOString();
  const events = await listEventsNewestFirst(storage.db, { types: ['agent.health_changed'], limit: HEALTH_CHANGES_READ });
  return events
    .filter((event) => event.occurred_at >= since)
    .map((event) => ({
      occurred_at: event.occurred_at,
      subject: event.subject,
      endpoint_index: Number(event.data.endpoint_index),
      url: String(event.data.url),
      from: String(event.data.from),
      to: String(event.data.to),
    }));
}

/** When the endpoint last turned unhealthy within the day read, or null when earlier than that. */
function downSince(changes: readonly HealthChange[], subject: string, endpointIndex: number): string | null {
  const turned = changes.find((change) => change.subject === subject && change.endpoint_index === endpointIndex && change.to === 'unhealthy');
  return turned?.occurred_at ?? null;
}

export type Overview = Awaited<ReturnType<typeof buildOverview>>;
