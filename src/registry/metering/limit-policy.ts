import type { ErrorCode } from '../../core/errors.ts';
import type { PricingTierLimits } from '../../core/pricing-tiers.ts';
import type { BucketName, LimitRequest, LimitState } from './rate-limiter.ts';
import { msUntilFull, msUntilToken, wholeTokens } from './token-bucket.ts';
import { nextUtcMidnight } from './utc-day.ts';

/** Which tier figure feeds each bucket (the spec's Limits table, via `effectiveLimits`). */
export const BUCKET_FIGURES = {
  general: 'requests_per_minute',
  discovery: 'discovery_per_minute',
  routing: 'routing_per_minute',
} as const satisfies Record<BucketName, keyof PricingTierLimits>;

/** The operation class of a request: discovery and routing draw on their own bucket too. */
export function bucketOf(method: string, routeUrl: string | undefined): BucketName {
  if ((method === 'GET' || method === 'HEAD') && routeUrl === '/v1/discover') return 'discovery';
  if (method === 'POST' && routeUrl === '/v1/route') return 'routing';
  return 'general';
}

/**
 * What a request of class `bucket` asks of the limiter: always the general bucket, plus its own;
 * buckets whose figure is null (enterprise without overrides) are unlimited and left out.
 */
export function limitRequestFor(
  keyId: string,
  limits: PricingTierLimits,
  bucket: BucketName,
  nowMs: number,
): LimitRequest {
  const names: BucketName[] = bucket === 'general' ? ['general'] : [bucket, 'general'];
  return { keyId, buckets: bucketsFor(limits, names), dailyLimit: limits.requests_per_day, nowMs };
}

/** The named buckets with their capacities, leaving out the unlimited ones. */
export function bucketsFor(limits: PricingTierLimits, names: readonly BucketName[]): LimitRequest['buckets'] {
  return names.flatMap((name) => {
    const capacity = limits[BUCKET_FIGURES[name]];
    return capacity === null ? [] : [{ name, capacity }];
  });
}

/** One limit as the RateLimit-* headers describe it. */
type Policy = {
  figure: keyof PricingTierLimits;
  limit: number;
  remaining: number;
  resetMs: number;
  waitMs: number | null;
  refused: boolean;
};

/** What the HTTP layer does with a limiter's answer. */
export type LimitDecision = {
  admitted: boolean;
  /** RateLimit-Limit/Remaining/Reset for the limit nearest to refusing; empty when nothing limits the key. */
  headers: Record<string, string>;
  /** Present when refused: the code, how long to wait (null = not within any window) and the details. */
  refusal?: {
    code: Extract<ErrorCode, 'RATE_LIMITED' | 'QUOTA_EXCEEDED'>;
    retryAfterMs: number | null;
    details: Record<string, unknown>;
  };
};

/**
 * Turns the limiter's state into headers and, when refused, the 429. The headers describe one limit
 * (draft-ietf-httpapi-ratelimit-headers): when admitted, the one with the fewest requests left (ties:
 * the class's own bucket, then general, then the day); when refused, the day's quota if it is full,
 * else the bucket that holds the request back longest. `RateLimit-Reset` is the seconds until that
 * limit is whole again (a full bucket, or the next UTC midnight); `retry_after_ms` is when every
 * refusing limit has room again.
 */
export function decide(state: LimitState, nowMs: number): LimitDecision {
  const policies: Policy[] = state.buckets.map((b) => ({
    figure: BUCKET_FIGURES[b.name],
    limit: b.capacity,
    remaining: wholeTokens(b.units),
    resetMs: msUntilFull(b.units, b.capacity),
    waitMs: msUntilToken(b.units, b.capacity),
    refused: !state.admitted && msUntilToken(b.units, b.capacity) !== 0,
  }));
  if (state.dailyLimit !== null) {
    const toMidnight = nextUtcMidnight(nowMs) - nowMs;
    const full = state.dailyCount >= state.dailyLimit;
    policies.push({
      figure: 'requests_per_day',
      limit: state.dailyLimit,
      remaining: Math.max(0, state.dailyLimit - state.dailyCount),
      resetMs: state.dailyCount === 0 ? 0 : toMidnight,
      waitMs: full ? (state.dailyLimit === 0 ? null : toMidnight) : 0,
      refused: !state.admitted && full,
    });
  }
  if (policies.length === 0) return { admitted: state.admitted, headers: {} };
  if (state.admitted) return { admitted: true, headers: headersOf(pick(policies, (p) => -p.remaining)) };

  const refusing = policies.filter((p) => p.refused);
  if (refusing.length === 0) throw new Error('the limiter refused a request that every limit had room for');
  const retryAfterMs = refusing.some((p) => p.waitMs === null)
    ? null
    : Math.max(...refusing.map((p) => p.waitMs ?? 0));
  // The day's quota names the refusal whenever it is among the causes: it is the one a client must
  // plan around (a bucket is whole again within a minute).
  const quota = refusing.find((p) => p.figure === 'requests_per_day');
  const binding = quota ?? pick(refusing, (p) => p.waitMs ?? Number.POSITIVE_INFINITY);
  return {
    admitted: false,
    headers: headersOf(binding),
    refusal: {
      code: quota ? 'QUOTA_EXCEEDED' : 'RATE_LIMITED',
      retryAfterMs,
      details: { limit: binding.figure, value: binding.limit },
    },
  };
}

/** The first policy with the highest score (a stable choice, so headers are predictable). */
function pick(policies: Policy[], score: (p: Policy) => number): Policy {
  let best = policies[0] as Policy;
  for (const p of policies) if (score(p) > score(best)) best = p;
  return best;
}

function headersOf(policy: Policy): Record<string, string> {
  return {
    'ratelimit-limit': String(policy.limit),
    'ratelimit-remaining': String(policy.remaining),
    'ratelimit-reset': String(Math.ceil(policy.resetMs / 1000)),
  };
}
