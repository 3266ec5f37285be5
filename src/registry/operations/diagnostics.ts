import type { Redis } from 'ioredis';
import type { Clock } from '../../core/clock.ts';
import { ConfigSchema, type Config } from '../../core/config.ts';
import { isSecretSetting, sourcesOf, type SettingSource } from '../../core/settings-catalogue.ts';
import type { Storage } from '../storage/database.ts';
import { migrationStatus } from '../storage/migrator.ts';
import { lastCommittedSeq, oldestRetainedSeq } from '../storage/stores/event-store.ts';
import { WARD_VERSION } from '../../core/version.ts';
import type { HealthProber } from '../agents/index.ts';
import type { LedgerService } from '../ledger/index.ts';
import type { InstanceHeartbeat } from './instance-heartbeat.ts';

export const REDACTED = '[redacted]';

export type DiagnosticsDeps = {
  config: Config;
  storage: Storage;
  clock: Clock;
  startedAt: Date;
  ledger: LedgerService;
  heartbeat: InstanceHeartbeat;
  /** The discovery answer cache's lookups and size. */
  discoveryCacheStats(): { hits: number; misses: number; entries: number; max_entries: number };
  healthProber: HealthProber;
  redis?: Redis;
  registryId: string;
  baseUrl(): string;
};

/**
 * `GET /v1/admin/diagnostics`: this instance and what it depends on, for the console's diagnostics
 * and settings pages: version and uptime, storage and its migration level, the event log's position,
 * the ledger's size, how many instances share the database, Redis, the discovery cache, the prober,
 * and the effective configuration with secrets redacted.
 */
export async function buildDiagnostics(deps: DiagnosticsDeps) {
  const now = deps.clock.now();
  const [migrations, lastSeq, oldestSeq, head, instances, redis] = await Promise.all([
    migrationStatus(deps.storage),
    lastCommittedSeq(deps.storage.db),
    oldestRetainedSeq(deps.storage.db),
    deps.ledger.signedTreeHead(),
    deps.heartbeat.liveInstances(),
    pingRedis(deps.redis),
  ]);
  const cache = deps.discoveryCacheStats();
  const lookups = cache.hits + cache.misses;
  return {
    version: WARD_VERSION,
    node_version: process.versions.node,
    instance_id: deps.heartbeat.instanceId,
    started_at: deps.startedAt.toISOString(),
    uptime_s: Math.floor((now.getTime() - deps.startedAt.getTime()) / 1000),
    registry: {
      registry_id: deps.registryId,
      tier: deps.config.REGISTRY_TIER,
      jurisdiction: deps.config.REGISTRY_JURISDICTION,
      base_url: deps.baseUrl(),
      environment: deps.config.REGISTRY_ENV,
      auth_mode: deps.config.REGISTRY_AUTH_MODE,
    },
    storage: { backend: deps.storage.backend, migrations },
    events: { last_seq: lastSeq, oldest_retained_seq: oldestSeq, retention_days: deps.config.REGISTRY_EVENT_RETENTION_DAYS },
    ledger: { tree_size: head.tree_size },
    instances: { live: instances },
    redis,
    discovery_cache: { ...cache, hit_ratio: lookups === 0 ? null : cache.hits / lookups },
    health_prober: {
      enabled: deps.config.REGISTRY_HEALTH_PROBES,
      interval_ms: deps.config.REGISTRY_HEALTH_INTERVAL_MS,
      last_round: deps.healthProber.lastRound(),
    },
    configuration: effectiveConfiguration(deps.config),
    configuration_sources: configurationSources(deps.config),
  };
}

/** Every configuration variable with its effective value; secrets are replaced by {@link REDACTED}. */
export function effectiveConfiguration(config: Config): Record<string, string | number | boolean | null> {
  const values: Record<string, string | number | boolean | null> = {};
  for (const name of Object.keys(ConfigSchema.properties).sort()) {
    const value = (config as Record<string, unknown>)[name];
    if (value === undefined) values[name] = null;
    else values[name] = isSecretSetting(name) ? REDACTED : (value as string | number | boolean);
  }
  return values;
}

/**
 * Where each variable's value came from (environment, a file, the default), as the configuration was
 * loaded; `unknown` for a configuration built in code rather than read from an environment.
 */
export function configurationSources(config: Config): Record<string, SettingSource | 'unknown'> {
  const known = sourcesOf(config);
  return Object.fromEntries(Object.keys(ConfigSchema.properties).sort().map((name) => [name, known?.[name] ?? 'unknown']));
}

async function pingRedis(redis: Redis | undefined) {
  if (!redis) return { configured: false, reachable: null, latency_ms: null };
  const started = performance.now();
  try {
    await Promise.race([redis.ping(), new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 1000).unref())]);
    return { configured: true, reachable: true, latency_ms: Math.round(performance.now() - started) };
  } catch {
    return { configured: true, reachable: false, latency_ms: null };
  }
}

export type Diagnostics = Awaited<ReturnType<typeof buildDiagnostics>>;
