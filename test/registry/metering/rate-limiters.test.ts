import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { createMemoryRateLimiter } from '../../../src/registry/metering/memory-rate-limiter.ts';
import { createRedisRateLimiter } from '../../../src/registry/metering/redis-rate-limiter.ts';
import { REDIS_URL, uniquePrefix } from './helpers.ts';
import { limiterContract } from './limiter-contract.ts';

const T0 = Date.parse('2030-01-15T10:00:00.000Z');

function redisClient(t: { after(fn: () => unknown): void }): Redis {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  t.after(() => redis.disconnect());
  return redis;
}

describe('in-memory rate limiter', () => {
  limiterContract(async () => createMemoryRateLimiter());

  test('sweeping forgets full buckets and past days, and changes no answer', async () => {
    const limiter = createMemoryRateLimiter({ sweepEvery: 1 });
    const request = {
      keyId: 'key_a',
      buckets: [{ name: 'general' as const, capacity: 2 }],
      dailyLimit: 10,
      nowMs: T0,
    };
    await limiter.take(request);
    await limiter.take({ ...request, keyId: 'key_b', nowMs: T0 + 60_000 });
    assert.deepEqual(await limiter.peek({ ...request, nowMs: T0 + 60_000 }), {
      admitted: true,
      buckets: [{ name: 'general', capacity: 2, units: 120_000 }],
      dailyCount: 1,
      dailyLimit: 10,
    });
  });
});

describe('Redis rate limiter', () => {
  limiterContract(async (t) => createRedisRateLimiter(redisClient(t), { prefix: uniquePrefix() }));

  test('instances on separate connections share one set of buckets, atomically', async (t) => {
    const prefix = uniquePrefix();
    const instances = [
      createRedisRateLimiter(redisClient(t), { prefix }),
      createRedisRateLimiter(redisClient(t), { prefix }),
    ];
    const request = {
      keyId: 'key_shared',
      buckets: [{ name: 'general' as const, capacity: 60 }],
      dailyLimit: 1000,
      nowMs: T0,
    };
    const results = await Promise.all(
      Array.from({ length: 150 }, (_, i) => (instances[i % 2] as (typeof instances)[0]).take(request)),
    );
    assert.equal(results.filter((r) => r.admitted).length, 60);
  });

  test('keys live in one hash slot per API key and expire', async (t) => {
    const redis = redisClient(t);
    const prefix = uniquePrefix();
    const limiter = createRedisRateLimiter(redis, { prefix });
    await limiter.take({
      keyId: 'key_x',
      buckets: [
        { name: 'routing', capacity: 30 },
        { name: 'general', capacity: 60 },
      ],
      dailyLimit: null,
      nowMs: T0,
    });
    const keys = (await redis.keys(`${prefix}*`)).sort();
    assert.deepEqual(keys, [
      `${prefix}{key_x}:day:2030-01-15`,
      `${prefix}{key_x}:general`,
      `${prefix}{key_x}:routing`,
    ]);
    for (const key of keys) {
      const ttl = await redis.pttl(key);
      assert.ok(
        ttl > 0 && ttl <= (key.includes(':day:') ? 2 * 86_400_000 : 61_000),
        `${key} expires (${ttl} ms)`,
      );
    }
    await redis.del(...keys);
  });

  test('an unreachable Redis rejects instead of admitting', async (t) => {
    const down = new Redis('redis://127.0.0.1:1', {
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      lazyConnect: true,
    });
    down.on('error', () => undefined);
    t.after(() => down.disconnect());
    const limiter = createRedisRateLimiter(down, { prefix: uniquePrefix() });
    await assert.rejects(limiter.take({ keyId: 'key_y', buckets: [], dailyLimit: null, nowMs: T0 }));
  });

  test('a Redis that does not answer in time rejects', async () => {
    const hanging = { defineCommand() {}, wardCheckAndTake: () => new Promise(() => undefined) };
    const limiter = createRedisRateLimiter(hanging as never, { timeoutMs: 10 });
    await assert.rejects(
      limiter.take({ keyId: 'key_z', buckets: [], dailyLimit: null, nowMs: T0 }),
      /did not answer within 10 ms/,
    );
  });
});
