import type { LimitRequest, LimitState, RateLimiter } from './rate-limiter.ts';
import { hasToken, refill, takeToken, UNITS_PER_TOKEN, type Bucket } from './token-bucket.ts';
import { utcDay } from './utc-day.ts';

/** Options of {@link createMemoryRateLimiter}. */
export type MemoryRateLimiterOptions = {
  /** Sweep state that no longer matters (full buckets, past days) once this many calls; default 10000. */
  sweepEvery?: number;
};

/**
 * A rate limiter for a single instance: buckets and day counts in maps. Check-and-take runs without
 * an `await` in between, so on Node's one thread no other request can interleave: that is what makes
 * it atomic. Several instances each with their own would each allow the full figure: use Redis then.
 */
export function createMemoryRateLimiter(options: MemoryRateLimiterOptions = {}): RateLimiter {
  const sweepEvery = options.sweepEvery ?? 10_000;
  const buckets = new Map<string, Bucket>();
  const days = new Map<string, { day: string; count: number }>();
  let calls = 0;

  function evaluate(request: LimitRequest, take: boolean): LimitState {
    const day = utcDay(request.nowMs);
    const current = request.buckets.map((b) => ({
      ...b,
      key: `${request.keyId}:${b.name}`,
      bucket: refill(buckets.get(`${request.keyId}:${b.name}`), b.capacity, request.nowMs),
    }));
    const stored = days.get(request.keyId);
    const count = stored?.day === day ? stored.count : 0;
    const admitted =
      current.every((b) => hasToken(b.bucket)) && (request.dailyLimit === null || count < request.dailyLimit);
    if (take && admitted) {
      for (const b of current) {
        b.bucket = takeToken(b.bucket);
        buckets.set(b.key, b.bucket);
      }
      days.set(request.keyId, { day, count: count + 1 });
      if (++calls % sweepEvery === 0) sweep(request.nowMs);
    }
    return {
      admitted,
      buckets: current.map((b) => ({ name: b.name, capacity: b.capacity, units: b.bucket.units })),
      dailyCount: take && admitted ? count + 1 : count,
      dailyLimit: request.dailyLimit,
    };
  }

  // A bucket untouched for a whole window is full, the same as an absent one; a past day's count is
  // dead. Dropping both bounds memory by the keys active in the last minute and today.
  function sweep(nowMs: number): void {
    for (const [key, bucket] of buckets) if (nowMs - bucket.updatedMs >= UNITS_PER_TOKEN) buckets.delete(key);
    const today = utcDay(nowMs);
    for (const [key, entry] of days) if (entry.day !== today) days.delete(key);
  }

  return {
    kind: 'memory',
    async take(request) {
      return evaluate(request, true);
    },
    async peek(request) {
      return evaluate(request, false);
    },
  };
}
