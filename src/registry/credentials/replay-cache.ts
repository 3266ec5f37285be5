// Where DPoP proof ids are remembered so that a proof is accepted once (RFC 9449 §11.1). In memory for
// one instance; in Redis so that several instances refuse a proof any one of them has already seen.
import type { Redis } from 'ioredis';

/** Remembers proof ids for a while. */
export type ReplayCache = {
  /**
   * Records `jti` for `ttlSec` seconds; true when it was not already recorded (first use), false when
   * it was (a replay). Rejects when the cache cannot answer: callers must then refuse, not accept.
   */
  remember(jti: string, ttlSec: number): Promise<boolean>;
};

/** Options of {@link createMemoryReplayCache}. */
export type MemoryReplayCacheOptions = {
  /** Most unexpired ids kept; default 100000. */
  maxEntries?: number;
  now?: () => Date;
};

/**
 * A replay cache for a single instance: a map of id to expiry. It never forgets an id before its time,
 * because that would let the proof be replayed: when it is full of unexpired ids it rejects (the
 * verifier answers 503) until some expire. 100000 ids at the default two-minute lifetime allow about
 * 800 DPoP requests a second.
 */
export function createMemoryReplayCache(options: MemoryReplayCacheOptions = {}): ReplayCache {
  const maxEntries = options.maxEntries ?? 100_000;
  if (!Number.isInteger(maxEntries) || maxEntries < 1)
    throw new Error('maxEntries must be a positive integer');
  const now = options.now ?? (() => new Date());
  const expiries = new Map<string, number>();

  // Ids mostly arrive with the same lifetime, so insertion order is nearly expiry order: dropping
  // expired ids from the front keeps the map small at constant cost per call.
  function dropExpiredFromFront(nowMs: number): void {
    for (const [id, expiresAt] of expiries) {
      if (expiresAt > nowMs) return;
      expiries.delete(id);
    }
  }

  function dropAllExpired(nowMs: number): void {
    for (const [id, expiresAt] of expiries) if (expiresAt <= nowMs) expiries.delete(id);
  }

  return {
    async remember(jti, ttlSec) {
      const nowMs = now().getTime();
      dropExpiredFromFront(nowMs);
      const expiresAt = expiries.get(jti);
      if (expiresAt !== undefined && expiresAt > nowMs) return false;
      expiries.delete(jti);
      if (expiries.size >= maxEntries) dropAllExpired(nowMs);
      if (expiries.size >= maxEntries) throw new Error(`The DPoP replay cache is full (${maxEntries} ids).`);
      expiries.set(jti, nowMs + Math.max(1, Math.ceil(ttlSec)) * 1000);
      return true;
    },
  };
}

/** Options of {@link createRedisReplayCache}. */
export type RedisReplayCacheOptions = { prefix?: string };

/**
 * A replay cache shared by every instance using the same Redis: `SET <prefix><jti> 1 NX EX <ttl>` is
 * atomic, so of two instances seeing the same proof at once exactly one gets "first use". Key prefix
 * `ward:dpop:` by default. A Redis error rejects, so an outage refuses proofs instead of admitting replays.
 */
export function createRedisReplayCache(redis: Redis, options: RedisReplayCacheOptions = {}): ReplayCache {
  const prefix = options.prefix ?? 'ward:dpop:';
  return {
    async remember(jti, ttlSec) {
      const reply = await redis.set(`${prefix}${jti}`, '1', 'EX', Math.max(1, Math.ceil(ttlSec)), 'NX');
      return reply === 'OK';
    },
  };
}
