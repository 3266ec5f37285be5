import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { ServerMetrics } from '../../core/http/http-metrics.ts';
import type { Storage } from '../storage/database.ts';
import { countRunsByStatus } from '../computer-use/index.ts';
import { observeCommits } from '../storage/write-unit.ts';

/**
 * The registry's own metrics beside the HTTP ones (docs/operations.md, "Metrics"):
 * - `ward_write_commit_seconds` and `ward_write_units_per_commit`: each transaction of write units
 *   (group commit), commit included;
 * - `ward_discovery_cache_requests_total{result}`: signed discovery answers served from the cache or built;
 * - `ward_event_stream_subscribers` and `ward_event_stream_ended_total{reason}`: open change streams, and
 *   streams the registry ended (slow consumers dropped, cursors expired, shutdown);
 * - `ward_health_probes_total{outcome}`: endpoint probes by outcome (`healthy`, or the failure class:
 *   `timeout`, `refused`, `not_protocol`, `private_address`…);
 * - `ward_db_pool_connections{state}` (PostgreSQL): the pool's connections `in_use`, `idle`, `max`, and
 *   requests `waiting` for one;
 * - `ward_computer_use_runs{status}`: computer-use runs in the store by status (shared by every
 *   instance: `queued` and `running` are now, the ended statuses are totals);
 * - `ward_signing_key_expires_in_seconds`: time left before the active signing key's `not_after`;
 * - `ward_discovery_kept_rows_total{result}`: agent rows discovery found kept and current (`kept`) or
 *   read from the database (`read`), and `ward_discovery_kept_rows` how many are kept.
 */
export type RegistryMetricsDeps = {
  storage: Storage;
  discoveryCacheStats: () => { hits: number; misses: number };
  keptRowStats: () => { hits: number; misses: number; entries: number };
  signingKeyExpiresInSeconds: () => number;
};

export function createRegistryMetrics(server: ServerMetrics, deps: RegistryMetricsDeps) {
  const registers = [server.registry];
  const commitSeconds = new Histogram({
    name: 'ward_write_commit_seconds',
    help: 'Duration of each transaction of write units, commit included',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    registers,
  });
  const unitsPerCommit = new Histogram({ name: 'ward_write_units_per_commit', help: 'Write units committed together in one transaction', buckets: [1, 2, 4, 8, 16, 32, 64], registers });
  const stopObserving = observeCommits(deps.storage, (units, seconds) => {
    commitSeconds.observe(seconds);
    unitsPerCommit.observe(units);
  });

  hitMissCounter(registers, 'ward_discovery_cache_requests_total', 'Discovery answers served from the signed-answer cache (hit) or built (miss)', ['hit', 'miss'], deps.discoveryCacheStats);
  hitMissCounter(registers, 'ward_discovery_kept_rows_total', 'Agent rows discovery found kept and current (kept) or read from the database (read)', ['kept', 'read'], deps.keptRowStats);
  new Gauge({
    name: 'ward_discovery_kept_rows',
    help: 'Agent rows discovery keeps between answers on this instance',
    registers,
    collect() {
      this.set(deps.keptRowStats().entries);
    },
  });
  const subscribers = new Gauge({ name: 'ward_event_stream_subscribers', help: 'Open change-stream connections on this instance', registers });
  const streamsEnded = new Counter({ name: 'ward_event_stream_ended_total', help: 'Change streams ended by the registry, by reason (client closes are not counted)', labelNames: ['reason'], registers });

  const poolUse = deps.storage.poolUse?.bind(deps.storage);
  if (poolUse) {
    new Gauge({
      name: 'ward_db_pool_connections',
      help: 'PostgreSQL pool: connections in use, idle, the maximum, and requests waiting for a connection',
      labelNames: ['state'],
      registers,
      collect() {
        const use = poolUse();
        this.set({ state: 'in_use' }, use.total - use.idle);
        this.set({ state: 'idle' }, use.idle);
        this.set({ state: 'max' }, use.max);
        this.set({ state: 'waiting' }, use.waiting);
      },
    });
  }

  const RUN_STATUSES = ['queued', 'running', 'completed', 'failed', 'canceled', 'max_turns_reached'];
  new Gauge({
    name: 'ward_computer_use_runs',
    help: 'Computer-use runs in the store by status: queued and running now, the ended statuses in total',
    labelNames: ['status'],
    registers,
    async collect() {
      // A database that does not answer leaves the last values (readiness reports the outage).
      const rows = await countRunsByStatus(deps.storage.db).catch(() => undefined);
      if (!rows) return;
      const counts = new Map(rows.map((row) => [row.status, row.count]));
      for (const status of RUN_STATUSES) this.set({ status }, counts.get(status) ?? 0);
    },
  });

  new Gauge({
    name: 'ward_signing_key_expires_in_seconds',
    help: "Seconds until the active signing key's not_after (renewal rotates it REGISTRY_KEY_RENEW_DAYS before)",
    registers,
    collect() {
      this.set(deps.signingKeyExpiresInSeconds());
    },
  });

  const probes = new Counter({ name: 'ward_health_probes_total', help: 'Endpoint health probes by outcome: healthy, or the class of failure', labelNames: ['outcome'], registers });

  return {
    probed: (status: string, reason: string | null) => probes.inc({ outcome: status === 'healthy' ? 'healthy' : (reason ?? 'unhealthy') }),
    streamOpened: () => subscribers.inc(),
    streamClosed: (reason: string) => {
      subscribers.dec();
      if (reason !== 'client_closed') streamsEnded.inc({ reason });
    },
    close: stopObserving,
  };
}

export type RegistryMetrics = ReturnType<typeof createRegistryMetrics>;

/**
 * A counter of a cache's lookups by `result`, read from figures it keeps since start (hits and
 * misses): each scrape adds what changed since the last one.
 */
function hitMissCounter(
  registers: Registry[],
  name: string,
  help: string,
  [hitLabel, missLabel]: [string, string],
  stats: () => { hits: number; misses: number },
): void {
  let counted = { hits: 0, misses: 0 };
  new Counter({
    name,
    help,
    labelNames: ['result'],
    registers,
    collect() {
      const now = stats();
      this.inc({ result: hitLabel }, now.hits - counted.hits);
      this.inc({ result: missLabel }, now.misses - counted.misses);
      counted = { hits: now.hits, misses: now.misses };
    },
  });
}
