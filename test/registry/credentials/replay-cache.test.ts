import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it, type TestContext } from 'node:test';
import { Redis } from 'ioredis';
import { createMemoryReplayCache, createRedisReplayCache } from '../../../src/registry/credentials/replay-cache.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A clock the test moves by hand. */
function manualClock(start = Date.parse('2026-03-01T12:00:00Z')) {
  let ms = start;
  return { now: () => new Date(ms), advance: (seconds: number) => (ms += seconds * 1000) };
}

async function redisPair(t: TestContext) {
  const prefix = `ward:dpop:test-${randomUUID()}:`;
  const clients = [new Redis(REDIS_URL), new Redis(REDIS_URL)] as const;
  t.after(async () => {
    const keys = await clients[0].keys(`${prefix}*`);
    if (keys.length > 0) await clients[0].del(...keys);
    await Promise.all(clients.map((client) => client.quit()));
  });
  return { prefix, clients };
}

describe('in-memory replay cache', () => {
  it('reports the first use of an id and refuses it again until it expires', async () => {
    const clock = manualClock();
    const cache = createMemoryReplayCache({ now: clock.now });
    assert.equal(await cache.remember('a', 120), true);
    clock.advance(119);
    assert.equal(await cache.remember('a', 120), false);
    clock.advance(1);
    assert.equal(await cache.remember('a', 120), true);
  });

  it('keeps ids apart', async () => {
    const cache = createMemoryReplayCache();
    assert.equal(await cache.remember('a', 120), true);
    assert.equal(await cache.remember('b', 120), true);
  });

  it('refuses to forget unexpired ids when full, and makes room once they expire', async () => {
    const clock = manualClock();
    const cache = createMemoryReplayCache({ maxEntries: 2, now: clock.now });
    await cache.remember('a', 60);
    await cache.remember('b', 120);
    await assert.rejects(cache.remember('c', 60), /full/);
    assert.equal(await cache.remember('a', 60), false);
    clock.advance(60);
    assert.equal(await cache.remember('c', 60), true);
    assert.equal(await cache.remember('b', 60), false);
  });

  it('refuses a size that cannot hold anything', () => {
    assert.throws(() => createMemoryReplayCache({ maxEntries: 0 }), /maxEntries/);
  });
});

describe('Redis replay cache', () => {
  it('records an id once across two connections, with the key under the prefix expiring after its lifetime', async (t) => {
    const { prefix, clients } = await redisPair(t);
    const [one, two] = clients.map((client) => createRedisReplayCache(client, { prefix }));
    assert.equal(await one?.remember('proof-1', 120), true);
    assert.equal(await two?.remember('proof-1', 120), false);
    const ttl = await clients[0].ttl(`${prefix}proof-1`);
    assert.ok(ttl > 0 && ttl <= 120, `ttl ${ttl}`);
  });

  it('lets exactly one of many simultaneous uses of an id through', async (t) => {
    const { prefix, clients } = await redisPair(t);
    const caches = clients.map((client) => createRedisReplayCache(client, { prefix }));
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => caches[i % 2]?.remember('proof-2', 120)),
    );
    assert.equal(answers.filter((answer) => answer === true).length, 1);
  });

  it('uses the ward:dpop: prefix by default', async (t) => {
    const { clients } = await redisPair(t);
    const id = `test-${randomUUID()}`;
    assert.equal(await createRedisReplayCache(clients[0]).remember(id, 5), true);
    assert.equal(await clients[0].del(`ward:dpop:${id}`), 1);
  });
});
