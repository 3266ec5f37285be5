import { randomUUID } from 'node:crypto';
import type { Clock } from '../../core/clock.ts';
import type { Storage } from '../storage/database.ts';
import { acquireLease, countLeases, isLeaseHeld, releaseLease } from '../storage/stores/lease-store.ts';

const PREFIX = 'instance:';

/**
 * Each listening registry instance renews a lease named after itself, so any instance can tell how
 * many share its database (the console's diagnostics page). An instance that dies stops renewing and
 * drops out of the count once its lease lapses (three intervals).
 */
export function createInstanceHeartbeat(deps: { storage: Storage; clock: Clock; intervalMs?: number; log?: (error: unknown) => void }) {
  const instanceId = randomUUID();
  const intervalMs = deps.intervalMs ?? 15_000;
  let timer: NodeJS.Timeout | undefined;

  async function beat(): Promise<void> {
    const now = deps.clock.now();
    await acquireLease(deps.storage.db, {
      name: `${PREFIX}${instanceId}`,
      holder: instanceId,
      now: now.toISOString(),
      expiresAt: new Date(now.getTime() + 3 * intervalMs).toISOString(),
    });
  }

  return {
    instanceId,
    start(): void {
      if (timer) return;
      const run = () => void beat().catch((error: unknown) => deps.log?.(error));
      run();
      timer = setInterval(run, intervalMs);
      timer.unref();
    },
    async stop(): Promise<void> {
      if (timer) clearInterval(timer);
      timer = undefined;
      await releaseLease(deps.storage.db, `${PREFIX}${instanceId}`, instanceId).catch((error: unknown) => deps.log?.(error));
    },
    /** Whether the instance `id` (this one's or another's) has a current heartbeat. */
    isLive: (id: string): Promise<boolean> => isLeaseHeld(deps.storage.db, `${PREFIX}${id}`, deps.clock.now().toISOString()),
    /** Instances whose heartbeat is current; `null` when this one has not beaten (not listening). */
    async liveInstances(): Promise<number | null> {
      if (!timer) return null;
      return countLeases(deps.storage.db, PREFIX, deps.clock.now().toISOString());
    },
  };
}

export type InstanceHeartbeat = ReturnType<typeof createInstanceHeartbeat>;
