/**
 * The rate limiter's contract (contract §7): per API key, three token buckets and a daily counter,
 * checked together and taken together. Two implementations: memory-rate-limiter.ts (one instance)
 * and redis-rate-limiter.ts (shared by instances). Both return raw state; what it means for the
 * response (headers, 429s) is decided once, in limit-policy.ts.
 */

/** The three buckets of a key: every request, discovery (GET /v1/discover), routing (POST /v1/route). */
export const BUCKET_NAMES = ['general', 'discovery', 'routing'] as const;
export type BucketName = (typeof BUCKET_NAMES)[number];

/** What one request asks of the limiter. Buckets with no figure (unlimited) are left out. */
export type LimitRequest = {
  keyId: string;
  /** The buckets this request draws from, each with its capacity (tokens per minute). */
  buckets: ReadonlyArray<{ name: BucketName; capacity: number }>;
  /** Requests allowed per UTC day; null = unlimited (the day's count is still kept). */
  dailyLimit: number | null;
  nowMs: number;
};

/** The state after the request, as the limiter saw it at `nowMs`. */
export type LimitState = {
  /** Whether every bucket had a token and the day's quota had room. */
  admitted: boolean;
  /** Per requested bucket: units after refill, and after the take when admitted. */
  buckets: ReadonlyArray<{ name: BucketName; capacity: number; units: number }>;
  /** Requests admitted so far this UTC day (this one included when admitted). */
  dailyCount: number;
  dailyLimit: number | null;
};

/**
 * Shared by every instance that serves the same keys (Redis) or private to one (memory).
 * Both methods reject when the state cannot be reached; the caller must then refuse the request.
 */
export interface RateLimiter {
  /**
   * Checks every bucket and the daily quota, and only if all have room takes one token from each
   * and counts the request: atomically, so concurrent requests (on any instance sharing the state)
   * can never together take more than there is, and a refused request takes nothing.
   */
  take(request: LimitRequest): Promise<LimitState>;
  /** The same answer without taking or counting anything (live usage). */
  peek(request: LimitRequest): Promise<LimitState>;
  /** Which implementation, for logs and health: `memory` or `redis`. */
  readonly kind: 'memory' | 'redis';
}
