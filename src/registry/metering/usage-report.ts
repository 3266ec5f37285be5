import { WardError } from '../../core/errors.ts';
import type { Storage } from '../storage/database.ts';
import { listUsageCounts } from './storage/usage-store.ts';
import { effectiveLimits, type LimitOverrides, type PricingTier } from '../../core/pricing-tiers.ts';
import type { ApiKeyService } from '../credentials/index.ts';
import { bucketsFor } from './limit-policy.ts';
import { BUCKET_NAMES, type BucketName, type RateLimiter } from './rate-limiter.ts';
import { wholeTokens } from './token-bucket.ts';
import { nextUtcMidnight, utcDay } from './utc-day.ts';
import { USAGE_CLASSES, type UsageClass, type UsageMeter } from './usage-meter.ts';

/** The longest range one summary covers. */
export const MAX_SUMMARY_DAYS = 366;

type Counts = Record<UsageClass, number>;

/** The usage summary: per key, per UTC day, per class, and totals (docs/api.md "Limits and usage"). */
export type UsageSummary = {
  since: string;
  until: string;
  totals: Counts;
  keys: Array<{ key_id: string; org_id: string; totals: Counts; days: Array<{ day: string } & Counts> }>;
};

/**
 * Usage between `since` and `until` (RFC 3339): every UTC day the range touches, whole (counts are
 * kept per day). This instance's pending counts are written first, so its own requests are in;
 * another instance's last second may not be yet.
 */
export async function summariseUsage(
  deps: { storage: Storage; meter: UsageMeter },
  query: { since: string; until: string; org_id?: string; key_id?: string },
): Promise<UsageSummary> {
  const since = Date.parse(query.since);
  const until = Date.parse(query.until);
  if (until < since) throw invalid('/until', 'must not be before since');
  if (until - since > MAX_SUMMARY_DAYS * 86_400_000)
    throw invalid('/until', `the range may span at most ${MAX_SUMMARY_DAYS} days`);
  await deps.meter.flush();
  const rows = await listUsageCounts(deps.storage.db, {
    fromDay: utcDay(since),
    toDay: utcDay(until),
    ...(query.org_id !== undefined ? { orgId: query.org_id } : {}),
    ...(query.key_id !== undefined ? { keyId: query.key_id } : {}),
  });
  const totals = zero();
  const keys: UsageSummary['keys'] = [];
  for (const row of rows) {
    if (!(USAGE_CLASSES as readonly string[]).includes(row.class)) continue;
    const usageClass = row.class as UsageClass;
    let key = keys.at(-1);
    if (key?.key_id !== row.key_id)
      keys.push((key = { key_id: row.key_id, org_id: row.org_id, totals: zero(), days: [] }));
    let day = key.days.at(-1);
    if (day?.day !== row.day) key.days.push((day = { day: row.day, ...zero() }));
    day[usageClass] += row.count;
    key.totals[usageClass] += row.count;
    totals[usageClass] += row.count;
  }
  return { since: new Date(since).toISOString(), until: new Date(until).toISOString(), totals, keys };
}

/** Live usage of one key, from the limiter's state (contract §7). */
export type LiveUsage = {
  key_id: string;
  tier: PricingTier;
  daily_count: number;
  daily_limit: number | null;
  tokens_remaining: Record<BucketName, number | null>;
  reset_at: string;
};

/**
 * What the limiter holds for a key now, without taking anything: the day's count and limit, whole
 * tokens left per bucket (null = unlimited) and `reset_at`, the next UTC midnight (the daily reset).
 */
export async function liveUsage(
  deps: { apiKeys: ApiKeyService; limiter: RateLimiter },
  keyId: string,
  now: Date,
): Promise<LiveUsage> {
  const key = await deps.apiKeys.get(keyId, now);
  const limits = effectiveLimits(key.tier, key.limits as LimitOverrides | null);
  const state = await deps.limiter.peek({
    keyId,
    buckets: bucketsFor(limits, BUCKET_NAMES),
    dailyLimit: limits.requests_per_day,
    nowMs: now.getTime(),
  });
  const tokens = Object.fromEntries(BUCKET_NAMES.map((name) => [name, null])) as Record<
    BucketName,
    number | null
  >;
  for (const bucket of state.buckets) tokens[bucket.name] = wholeTokens(bucket.units);
  return {
    key_id: keyId,
    tier: key.tier,
    daily_count: state.dailyCount,
    daily_limit: state.dailyLimit,
    tokens_remaining: tokens,
    reset_at: new Date(nextUtcMidnight(now.getTime())).toISOString(),
  };
}

function zero(): Counts {
  return { general: 0, discovery: 0, routing: 0, rate_limited: 0 };
}

function invalid(pointer: string, reason: string): WardError {
  return new WardError('VALIDATION_ERROR', 'The request failed validation.', {
    errors: [{ in: 'query', pointer, reason }],
  });
}
