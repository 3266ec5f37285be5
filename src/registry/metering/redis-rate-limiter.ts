import type { Redis } from 'ioredis';
import type { LimitRequest, LimitState, RateLimiter } from './rate-limiter.ts';
import { UNITS_PER_TOKEN } from './token-bucket.ts';
import { utcDay } from './utc-day.ts';

/**
 * Check-and-take over a key's buckets and its day counter in one script: Redis runs a script
 * alone, so two instances can never both see the last token. The arithmetic is token-bucket.ts's
 * (units, clamp, never backwards); the contract tests run both limiters through the same cases.
 * KEYS: the bucket hashes (fields u = units, t = stamp ms), then the day counter.
 * ARGV: now ms, take (1) or peek (0), daily limit (-1 = unlimited), day-key TTL s, capacities.
 * Returns {admitted, day count, units of each bucket}.
 */
const CHECK_AND_TAKE = `
local UNIT = ${UNITS_PER_TOKEN}
local now = tonumber(ARGV[1])
local take = ARGV[2] == '1'
local dailyLimit = tonumber(ARGV[3])
local n = #KEYS - 1
local units, stamps = {}, {}
local admitted = 1
for i = 1, n do
  local capacity = tonumber(ARGV[4 + i])
  local full = capacity * UNIT
  local state = redis.call('HMGET', KEYS[i], 'u', 't')
  local u, t = tonumber(state[1]), tonumber(state[2])
  if u == nil or t == nil then
    u, t = full, now
  elseif now > t then
    u = math.min(full, u + math.min(now - t, UNIT) * capacity)
    t = now
  end
  units[i], stamps[i] = u, t
  if u < UNIT then admitted = 0 end
end
local count = tonumber(redis.call('GET', KEYS[n + 1]) or '0')
if dailyLimit >= 0 and count >= dailyLimit then admitted = 0 end
if take and admitted == 1 then
  for i = 1, n do
    units[i] = units[i] - UNIT
    redis.call('HSET', KEYS[i], 'u', string.format('%.0f', units[i]), 't', string.format('%.0f', stamps[i]))
    -- untouched for one window a bucket is full again, the same as absent: let it expire then
    redis.call('PEXPIRE', KEYS[i], UNIT + 1000)
  end
  count = redis.call('INCR', KEYS[n + 1])
  redis.call('EXPIRE', KEYS[n + 1], tonumber(ARGV[4]))
end
local out = {admitted, count}
for i = 1, n do out[#out + 1] = string.format('%.0f', units[i]) end
return out
`;

/** Options of {@link createRedisRateLimiter}. */
export type RedisRateLimiterOptions = {
  /** Prefix of every key; default `ward:rl:`. Tests use a fresh one each. */
  prefix?: string;
  /** A call slower than this rejects (and the request is refused with 503); default 1000 ms. */
  timeoutMs?: number;
};

type ScriptClient = Redis & {
  wardCheckAndTake(numKeys: number, ...args: Array<string | number>): Promise<[number, number, ...string[]]>;
};

/** A day's counter outlives its day by one more (clock skew, live reads just after midnight), then expires. */
const DAY_KEY_TTL_S = 2 * 86_400;

/**
 * A rate limiter shared by every registry instance using the same Redis (REDIS_URL). Keys:
 * `<prefix>{<key_id>}:<bucket>` and `<prefix>{<key_id>}:day:<YYYY-MM-DD>`; the braces keep a key's
 * state in one hash slot, so the script also runs on Redis Cluster. Time is the instance's clock
 * (passed in, so tests can drive it), which is why instances must keep their clocks in sync (NTP).
 * Any Redis failure or time-out rejects: the registry then refuses the request (docs/operations.md).
 */
export function createRedisRateLimiter(redis: Redis, options: RedisRateLimiterOptions = {}): RateLimiter {
  const prefix = options.prefix ?? 'ward:rl:';
  const timeoutMs = options.timeoutMs ?? 1000;
  const client = redis as ScriptClient;
  // Sent once per connection with EVALSHA afterwards; defining it twice on one client is harmless.
  if (typeof client.wardCheckAndTake !== 'function')
    redis.defineCommand('wardCheckAndTake', { lua: CHECK_AND_TAKE });

  async function run(request: LimitRequest, take: boolean): Promise<LimitState> {
    const slot = `${prefix}{${request.keyId}}`;
    const keys = [...request.buckets.map((b) => `${slot}:${b.name}`), `${slot}:day:${utcDay(request.nowMs)}`];
    const args = [
      request.nowMs,
      take ? 1 : 0,
      request.dailyLimit ?? -1,
      DAY_KEY_TTL_S,
      ...request.buckets.map((b) => b.capacity),
    ];
    const reply = await withTimeout(client.wardCheckAndTake(keys.length, ...keys, ...args), timeoutMs);
    const [admitted, dailyCount, ...units] = reply;
    return {
      admitted: admitted === 1,
      buckets: request.buckets.map((b, i) => ({
        name: b.name,
        capacity: b.capacity,
        units: Number(units[i]),
      })),
      dailyCount: Number(dailyCount),
      dailyLimit: request.dailyLimit,
    };
  }

  return {
    kind: 'redis',
    take: (request) => run(request, true),
    peek: (request) => run(request, false),
  };
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis did not answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
