/**
 * Token-bucket arithmetic (contract §7: capacity = the tier's per-minute figure, refilled
 * continuously). Pure functions of the bucket and the time, so the in-memory limiter, the Redis
 * script and the tests all share one definition.
 *
 * A bucket is counted in *units*: one token is {@link UNITS_PER_TOKEN} units and a bucket of
 * capacity `c` tokens per minute gains exactly `c` units per millisecond. Everything stays an
 * integer (no drift from fractions such as 1000/60000 tokens per ms), and integers up to
 * 1e9 tokens × 60000 units are exact in a double, in JavaScript and in Redis' Lua alike.
 */

/** Units in one token: the number of milliseconds in the bucket's one-minute window. */
export const UNITS_PER_TOKEN = 60_000;

/** A bucket's state: its units at `updatedMs`. An absent bucket is a full one. */
export type Bucket = { units: number; updatedMs: number };

/** Programmer errors only: capacities come from the tier table and validated overrides. */
function assertCapacity(capacity: number): void {
  if (!Number.isInteger(capacity) || capacity < 0)
    throw new Error(`bucket capacity must be a whole number ≥ 0, not ${capacity}`);
}

/** A full bucket of `capacity` tokens at `nowMs`. */
export function fullBucket(capacity: number, nowMs: number): Bucket {
  assertCapacity(capacity);
  return { units: capacity * UNITS_PER_TOKEN, updatedMs: nowMs };
}

/**
 * The bucket at `nowMs`: topped up by `capacity` units per elapsed millisecond, never above full.
 * A clock that went backwards (instances with slightly different clocks sharing Redis) adds
 * nothing and keeps the later stamp, so skew can never mint tokens.
 */
export function refill(bucket: Bucket | undefined, capacity: number, nowMs: number): Bucket {
  if (bucket === undefined) return fullBucket(capacity, nowMs);
  assertCapacity(capacity);
  const elapsed = nowMs - bucket.updatedMs;
  if (elapsed <= 0) return bucket;
  // After one window any bucket is full; clamping first keeps elapsed × capacity exact.
  const gained = Math.min(elapsed, UNITS_PER_TOKEN) * capacity;
  return { units: Math.min(capacity * UNITS_PER_TOKEN, bucket.units + gained), updatedMs: nowMs };
}

/** Whether the bucket holds at least one whole token. */
export function hasToken(bucket: Bucket): boolean {
  return bucket.units >= UNITS_PER_TOKEN;
}

/** The bucket after one token is taken (the caller checked {@link hasToken}). */
export function takeToken(bucket: Bucket): Bucket {
  if (!hasToken(bucket)) throw new Error('takeToken on a bucket without a whole token');
  return { units: bucket.units - UNITS_PER_TOKEN, updatedMs: bucket.updatedMs };
}

/** Whole tokens in `units`. */
export function wholeTokens(units: number): number {
  return Math.floor(units / UNITS_PER_TOKEN);
}

/** Milliseconds until `units` grow to one whole token; 0 if there is one; null if the capacity is 0 (never). */
export function msUntilToken(units: number, capacity: number): number | null {
  if (units >= UNITS_PER_TOKEN) return 0;
  if (capacity === 0) return null;
  return Math.ceil((UNITS_PER_TOKEN - units) / capacity);
}

/** Milliseconds until the bucket is full again (0 when full, or when the capacity is 0). */
export function msUntilFull(units: number, capacity: number): number {
  if (capacity === 0) return 0;
  return Math.max(0, Math.ceil((capacity * UNITS_PER_TOKEN - units) / capacity));
}
