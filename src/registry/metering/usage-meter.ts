import type { Storage } from '../storage/database.ts';
import { addUsageCounts, type UsageCount } from './storage/usage-store.ts';

/**
 * The operation classes usage is counted in (docs/api.md "Limits and usage"):
 * - `general`: every request admitted for the key (what the daily quota counts);
 * - `discovery`, `routing`: the admitted GET /v1/discover and POST /v1/route among them;
 * - `rate_limited`: requests refused with 429 (RATE_LIMITED or QUOTA_EXCEEDED), counted apart so
 *   that refusals never inflate what a key is billed for, yet a client hammering its limit shows.
 */
export const USAGE_CLASSES = ['general', 'discovery', 'routing', 'rate_limited'] as const;
export type UsageClass = (typeof USAGE_CLASSES)[number];

/** Counts requests in memory and adds them to the database in batches. */
export type UsageMeter = {
  /** Counts one request; never waits and never fails (the request must not pay for metering). */
  record(entry: { keyId: string; orgId: string; day: string; usageClass: UsageClass }): void;
  /** Writes everything counted so far; resolves once it is stored (or rejects, keeping the counts). */
  flush(): Promise<void>;
  /** Stops the timer and writes what is left; call before the storage closes. */
  close(): Promise<void>;
};

/** Options of {@link createUsageMeter}. */
export type UsageMeterOptions = {
  storage: Storage;
  /** How often pending counts are written; default 1000 ms. */
  flushEveryMs?: number;
  log?: (error: unknown) => void;
};

/**
 * Batches counts per (key, day, class) and writes them every second and on close: one upsert per
 * second whatever the request rate, instead of one write per request on the hot path. The price
 * (docs/operations.md): a crash loses at most the last second of counts of that instance, and a
 * failed write is retried at the next tick with the counts kept. The limiter's daily count (what
 * enforcement uses) is separate and unaffected.
 */
export function createUsageMeter(options: UsageMeterOptions): UsageMeter {
  let pending = new Map<string, UsageCount>();
  // Flushes run one at a time, so a close waits for a tick's write in flight, and two writes
  // never race over the same counts.
  let chain: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    meter.flush().catch((error: unknown) => options.log?.(error));
  }, options.flushEveryMs ?? 1000);
  timer.unref();

  async function write(): Promise<void> {
    if (pending.size === 0) return;
    const batch = pending;
    pending = new Map();
    try {
      await addUsageCounts(options.storage.db, [...batch.values()]);
    } catch (error) {
      for (const [key, entry] of batch) add(key, entry);
      throw error;
    }
  }

  function add(key: string, entry: UsageCount): void {
    const existing = pending.get(key);
    if (existing) existing.count += entry.count;
    else pending.set(key, { ...entry });
  }

  const meter: UsageMeter = {
    record({ keyId, orgId, day, usageClass }) {
      add(`${keyId} ${day} ${usageClass}`, {
        key_id: keyId,
        org_id: orgId,
        day,
        class: usageClass,
        count: 1,
      });
    },
    flush() {
      const run = chain.then(write);
      chain = run.catch(() => undefined);
      return run;
    },
    async close() {
      clearInterval(timer);
      await meter.flush();
    },
  };
  return meter;
}
