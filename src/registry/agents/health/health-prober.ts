import { randomUUID } from 'node:crypto';
import type { Clock } from '../../../core/clock.ts';
import type { Storage } from '../../storage/database.ts';
import { listActiveAgentPage, setHealthRank, type AgentRow } from '../storage/agent-store.ts';
import {
  listEndpointHealth,
  upsertEndpointHealth,
  type EndpointHealthRow,
} from '../storage/endpoint-health-store.ts';
import { acquireLease } from '../../storage/stores/lease-store.ts';
import { runWrite } from '../../storage/write-unit.ts';
import type { Endpoint } from '../../../contract/agent-record.ts';
import { HEALTH_RANKS } from '../agent-records.ts';
import { probeEndpoint, type ProbeOptions, type ProbeResult } from './probe.ts';

export type HealthProberOptions = ProbeOptions & { intervalMs: number; concurrency: number };

type Probe = (endpoint: { url: string; protocol: string; health_url: string }, options: ProbeOptions) => Promise<ProbeResult>;

const LEASE = 'health-prober';
const PAGE = 500;

/**
 * The background health prober (contract §4). Each round it probes every `health_url` of every active
 * agent with bounded concurrency, records the readings, keeps each agent's health rank (what discovery
 * orders by) and emits `agent.health_changed` when an endpoint's status changes. Several instances
 * share one database: a lease decides which one probes, and another takes over when it lapses.
 */
export function createHealthProber(deps: {
  storage: Storage;
  clock: Clock;
  options: HealthProberOptions;
  probe?: Probe;
  log?: (error: unknown) => void;
  /** Told of every probe's outcome (metrics). */
  onProbe?: (result: ProbeResult) => void;
}) {
  const holder = randomUUID();
  const probe = deps.probe ?? probeEndpoint;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<number> | undefined;
  let lastRound: { at: string; probed: number } | null = null;

  async function probeAgent(agent: AgentRow, previous: readonly EndpointHealthRow[]): Promise<void> {
    const endpoints = (agent.record as { endpoints: Endpoint[] }).endpoints;
    const readings: EndpointHealthRow[] = [];
    for (const [index, endpoint] of endpoints.entries()) {
      if (!endpoint.health_url) continue;
      const result = await probe({ url: endpoint.url, protocol: endpoint.protocol, health_url: endpoint.health_url }, deps.options);
      deps.onProbe?.(result);
      readings.push({ agent_id: agent.id, endpoint_index: index, url: endpoint.url, ...result, checked_at: deps.clock.now().toISOString() });
    }
    if (readings.length === 0) return;
    const changed = readings.filter((r) => previous.find((p) => p.endpoint_index === r.endpoint_index && p.url === r.url)?.status !== r.status);
    const rank = bestRank(endpoints, readings);
    if (changed.length === 0 && rank === agent.health_rank) {
      for (const reading of readings) await upsertEndpointHealth(deps.storage.db, reading);
      return;
    }
    await runWrite(deps.storage, async (unit) => {
      for (const reading of readings) await upsertEndpointHealth(unit.tx, reading);
      await setHealthRank(unit.tx, agent.id, rank);
      for (const reading of changed) {
        const before = previous.find((p) => p.endpoint_index === reading.endpoint_index && p.url === reading.url);
        unit.emit({
          type: 'agent.health_changed',
          subject: agent.agent_uri,
          occurred_at: reading.checked_at,
          data: {
            agent_id: agent.agent_uri,
            version: agent.version,
            endpoint_index: reading.endpoint_index,
            url: reading.url,
            from: before?.status ?? 'unknown',
            to: reading.status,
            reason: reading.reason,
          },
        });
      }
    });
  }

  /** One round; returns the number of agents probed (0 when another instance holds the lease). */
  async function round(): Promise<number> {
    const now = deps.clock.now();
    const leased = await acquireLease(deps.storage.db, {
      name: LEASE,
      holder,
      now: now.toISOString(),
      expiresAt: new Date(now.getTime() + 2 * deps.options.intervalMs).toISOString(),
    });
    if (!leased) return 0;
    let probed = 0;
    let afterId: string | undefined;
    for (;;) {
      const page = await listActiveAgentPage(deps.storage.db, { limit: PAGE, ...(afterId ? { afterId } : {}) });
      const withHealthUrl = page.filter((a) => (a.record as { endpoints: Endpoint[] }).endpoints.some((e) => e.health_url));
      const previous = await listEndpointHealth(deps.storage.db, withHealthUrl.map((a) => a.id));
      await forEachBounded(withHealthUrl, deps.options.concurrency, (agent) => probeAgent(agent, previous.get(agent.id) ?? []));
      probed += withHealthUrl.length;
      if (page.length < PAGE) return probed;
      afterId = page.at(-1)?.id;
    }
  }

  return {
    /** Runs one round now (tests and the timer call this); concurrent calls share the running round. */
    runOnce(): Promise<number> {
      running ??= round()
        .then((probed) => {
          lastRound = { at: deps.clock.now().toISOString(), probed };
          return probed;
        })
        .finally(() => {
          running = undefined;
        });
      return running;
    },
    /** When this instance last finished a round, and how many agents it probed (0: another instance holds the lease). */
    lastRound(): { at: string; probed: number } | null {
      return lastRound;
    },
    start(): void {
      timer ??= setInterval(() => {
        this.runOnce().catch((error: unknown) => deps.log?.(error));
      }, deps.options.intervalMs);
      timer.unref();
      this.runOnce().catch((error: unknown) => deps.log?.(error));
    },
    async stop(): Promise<void> {
      clearInterval(timer);
      timer = undefined;
      await running?.catch(() => undefined);
    },
  };
}

export type HealthProber = ReturnType<typeof createHealthProber>;

/** Endpoints without a `health_url` count as unknown; the best reading wins. */
function bestRank(endpoints: readonly Endpoint[], readings: readonly EndpointHealthRow[]): number {
  return Math.max(
    ...endpoints.map((_, index) => {
      const reading = readings.find((r) => r.endpoint_index === index);
      return reading ? HEALTH_RANKS[reading.status] : HEALTH_RANKS.unknown;
    }),
  );
}

async function forEachBounded<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next] as T;
      next += 1;
      await work(item);
    }
  });
  await Promise.all(workers);
}
