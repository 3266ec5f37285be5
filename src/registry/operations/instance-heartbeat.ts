import { randomUUID } from 'node:crypto';
import type { Clock } from '../../core/clock.ts';
import { WARD_VERSION } from '../../core/version.ts';
import { registerClaimHolder } from '../storage/idempotency.ts';
import type { Storage } from '../storage/database.ts';
import { MIGRATIONS } from '../storage/migrations/index.ts';
import { INSTANCE_LEASE_PREFIX } from '../storage/stores/idempotency-store.ts';
import { acquireLease, countLeases, isLeaseHeld, listLeases, releaseLease } from '../storage/stores/lease-store.ts';

/** How often a listening instance renews its heartbeat. */
export const HEARTBEAT_INTERVAL_MS = 2_000;
/** A heartbeat not renewed for this long has lapsed: the instance counts as gone. */
export const HEARTBEAT_LAPSE_INTERVALS = 3;

/** What an instance's heartbeat says of it (the lease's `detail`). */
export type InstanceDetail = {
  /** Ward's version (package.json). */
  version: string;
  /** The newest migration this instance's build knows. */
  schema: string | null;
  started_at: string;
};

/** A live instance as its heartbeat describes it (`detail` null for a build that wrote none). */
export type LiveInstance = { id: string; expires_at: string; detail: InstanceDetail | null };

/**
 * Each listening registry instance renews a lease named after itself every 2 s; it lapses after three
 * missed renewals (6 s). From it any instance can tell how many share its database (the console's
 * diagnostics page), whether the holder of an idempotency claim still runs (a claim of a lapsed
 * instance is taken over: idempotency.ts), which builds run (`ward migrate` refuses a contracting
 * step while an older one does), and whether a computer-use run's instance stopped.
 */
export function createInstanceHeartbeat(deps: {
  storage: Storage;
  clock: Clock;
  intervalMs?: number;
  /** The migrations this build knows (default: all of this build's). */
  migrations?: Record<string, unknown>;
  log?: (error: unknown) => void;
}) {
  const instanceId = randomUUID();
  const intervalMs = deps.intervalMs ?? HEARTBEAT_INTERVAL_MS;
  const lapseMs = HEARTBEAT_LAPSE_INTERVALS * intervalMs;
  const detail: InstanceDetail = {
    version: WARD_VERSION,
    schema: Object.keys(deps.migrations ?? MIGRATIONS).sort().at(-1) ?? null,
    started_at: deps.clock.now().toISOString(),
  };
  let timer: NodeJS.Timeout | undefined;
  /** Until when this instance's lease is known to hold (the expiry its last successful beat wrote). */
  let heldUntil = 0;

  async function beat(): Promise<void> {
    const now = deps.clock.now();
    const expiresAt = new Date(now.getTime() + lapseMs);
    const held = await acquireLease(deps.storage.db, {
      name: `${INSTANCE_LEASE_PREFIX}${instanceId}`,
      holder: instanceId,
      now: now.toISOString(),
      expiresAt: expiresAt.toISOString(),
      detail: JSON.stringify(detail),
    });
    if (held) heldUntil = expiresAt.getTime();
  }

  return {
    instanceId,
    /** Beats once (so claims made from now on name a live holder), then every interval. */
    async start(): Promise<void> {
      if (timer) return;
      const run = () => beat().catch((error: unknown) => deps.log?.(error));
      timer = setInterval(() => void run(), intervalMs);
      timer.unref();
      await run();
      // Claims name this instance only while its own lease is known to be current.
      registerClaimHolder(deps.storage, () => (deps.clock.now().getTime() < heldUntil ? instanceId : null));
    },
    async stop(): Promise<void> {
      if (timer) clearInterval(timer);
      timer = undefined;
      registerClaimHolder(deps.storage, undefined);
      await releaseLease(deps.storage.db, `${INSTANCE_LEASE_PREFIX}${instanceId}`, instanceId).catch((error: unknown) => deps.log?.(error));
    },
    /**
     * Whether the instance `id` (this one's or another's) has a current heartbeat, or one that lapsed
     * less than `graceMs` ago (a caller whose mistake would cost more than a wait gives it time).
     */
    isLive: (id: string, graceMs = 0): Promise<boolean> =>
      isLeaseHeld(deps.storage.db, `${INSTANCE_LEASE_PREFIX}${id}`, new Date(deps.clock.now().getTime() - graceMs).toISOString()),
    /** Instances whose heartbeat is current; `null` when this one has not beaten (not listening). */
    async liveInstances(): Promise<number | null> {
      if (!timer) return null;
      return countLeases(deps.storage.db, INSTANCE_LEASE_PREFIX, deps.clock.now().toISOString());
    },
  };
}

/** The instances sharing `storage` whose heartbeat is current, with what each says of itself. */
export async function listLiveInstances(storage: Storage, now: Date): Promise<LiveInstance[]> {
  const rows = await listLeases(storage.db, INSTANCE_LEASE_PREFIX, now.toISOString());
  return rows.map((row) => ({ id: row.name.slice(INSTANCE_LEASE_PREFIX.length), expires_at: row.expires_at, detail: parseDetail(row.detail) }));
}

function parseDetail(text: string | null): InstanceDetail | null {
  if (text === null) return null;
  try {
    const value = JSON.parse(text) as Partial<InstanceDetail>;
    return typeof value.version === 'string' ? { version: value.version, schema: value.schema ?? null, started_at: value.started_at ?? '' } : null;
  } catch {
    return null;
  }
}

export type InstanceHeartbeat = ReturnType<typeof createInstanceHeartbeat>;
