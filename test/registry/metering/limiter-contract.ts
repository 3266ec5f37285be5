import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LimitRequest, RateLimiter } from '../../../src/registry/metering/rate-limiter.ts';
import { UNITS_PER_TOKEN } from '../../../src/registry/metering/token-bucket.ts';

/**
 * The behaviour every RateLimiter must have (contract §7), run against the in-memory and the
 * Redis limiter alike. `make` returns a limiter with state of its own (a fresh Redis prefix).
 */
export function limiterContract(make: (t: { after(fn: () => unknown): void }) => Promise<RateLimiter>): void {
  const T0 = Date.parse('2030-01-15T10:00:00.000Z');
  let n = 0;
  const keyId = () => `key_${process.pid}_${Date.now()}_${(n += 1)}`;
  const developer = (
    id: string,
    nowMs: number,
    bucket: 'general' | 'discovery' | 'routing' = 'general',
  ): LimitRequest => ({
    keyId: id,
    buckets:
      bucket === 'general'
        ? [{ name: 'general', capacity: 60 }]
        : [
            { name: bucket, capacity: 30 },
            { name: 'general', capacity: 60 },
          ],
    dailyLimit: 1000,
    nowMs,
  });

  async function takeUntilRefused(
    limiter: RateLimiter,
    request: LimitRequest,
    max = 10_000,
  ): Promise<number> {
    for (let i = 0; i < max; i += 1) if (!(await limiter.take(request)).admitted) return i;
    throw new Error(`still admitting after ${max}`);
  }

  test('admits exactly the capacity at one instant, then refuses; a refusal changes nothing', async (t) => {
    const limiter = await make(t);
    const id = keyId();
    assert.equal(await takeUntilRefused(limiter, developer(id, T0)), 60);
    const refused = await limiter.take(developer(id, T0));
    assert.deepEqual(refused, {
      admitted: false,
      buckets: [{ name: 'general', capacity: 60, units: 0 }],
      dailyCount: 60,
      dailyLimit: 1000,
    });
  });

  test('reports the state after the take: units left and the day count including this request', async (t) => {
    const limiter = await make(t);
    const id = keyId();
    assert.deepEqual(await limiter.take(developer(id, T0, 'discovery')), {
      admitted: true,
      buckets: [
        { name: 'discovery', capacity: 30, units: 29 * UNITS_PER_TOKEN },
        { name: 'general', capacity: 60, units: 59 * UNITS_PER_TOKEN },
      ],
      dailyCount: 1,
      dailyLimit: 1000,
    });
  });

  test('peek answers the same without taking or counting', async (t) => {
    const limiter = await make(t);
    const id = keyId();
    await limiter.take(developer(id, T0));
    const before = await limiter.peek(developer(id, T0));
    assert.deepEqual(await limiter.peek(developer(id, T0)), before);
    assert.equal(before.dailyCount, 1);
    assert.equal(before.buckets[0]?.units, 59 * UNITS_PER_TOKEN);
    assert.equal(
      (await limiter.peek(developer(keyId(), T0))).buckets[0]?.units,
      60 * UNITS_PER_TOKEN,
      'an unused key is full',
    );
  });

  test('a request refused by one bucket takes no token from the others, and is not counted', async (t) => {
    const limiter = await make(t);
    const id = keyId();
    assert.equal(await takeUntilRefused(limiter, developer(id, T0, 'discovery')), 30);
    for (let i = 0; i < 5; i += 1)
      assert.equal((await limiter.take(developer(id, T0, 'discovery'))).admitted, false);
    const state = await limiter.peek(developer(id, T0));
    assert.equal(state.buckets[0]?.units, 30 * UNITS_PER_TOKEN, 'general lost only the 30 admitted');
    assert.equal(state.dailyCount, 30);
    assert.equal(await takeUntilRefused(limiter, developer(id, T0)), 30);
  });

  test('tokens refill continuously as the clock moves', async (t) => {
    const limiter = await make(t);
    const id = keyId();
    await takeUntilRefused(limiter, developer(id, T0));
    assert.equal((await limiter.take(developer(id, T0 + 999))).admitted, false);
    assert.equal((await limiter.take(developer(id, T0 + 1000))).admitted, true);
    assert.equal((await limiter.take(developer(id, T0 + 1000))).admitted, false);
    assert.equal(await takeUntilRefused(limiter, developer(id, T0 + 31_000)), 30, '30 s later, 30 tokens');
    assert.equal(
      await takeUntilRefused(limiter, developer(id, T0 + 10 * 60_000)),
      60,
      'never more than full',
    );
  });

  test('a clock that steps back mints no tokens', async (t) => {
    const limiter = await make(t);
    const id = keyId();
    await takeUntilRefused(limiter, developer(id, T0 + 5000));
    assert.equal((await limiter.take(developer(id, T0))).admitted, false);
    assert.equal((await limiter.take(developer(id, T0 + 5999))).admitted, false);
    assert.equal((await limiter.take(developer(id, T0 + 6000))).admitted, true);
  });

  test('the daily quota refuses at its figure, takes no bucket token, and resets at UTC midnight', async (t) => {
    const limiter = await make(t);
    const id = keyId();
    const late = Date.parse('2030-01-15T23:59:00.000Z');
    const request = (nowMs: number): LimitRequest => ({
      keyId: id,
      buckets: [{ name: 'general', capacity: 60 }],
      dailyLimit: 3,
      nowMs,
    });
    assert.equal(await takeUntilRefused(limiter, request(late)), 3);
    const refused = await limiter.take(request(late + 1000));
    assert.equal(refused.admitted, false);
    assert.equal(refused.dailyCount, 3);
    assert.equal(
      refused.buckets[0]?.units,
      58 * UNITS_PER_TOKEN,
      'the refusal took no token (57 left, 1 refilled)',
    );
    const midnight = Date.parse('2030-01-16T00:00:00.000Z');
    assert.equal((await limiter.take(request(midnight - 1))).admitted, false);
    const next = await limiter.take(request(midnight));
    assert.deepEqual([next.admitted, next.dailyCount], [true, 1]);
  });

  test('without a daily limit the day is still counted; without buckets nothing limits', async (t) => {
    const limiter = await make(t);
    const id = keyId();
    for (let i = 1; i <= 3; i += 1) {
      assert.deepEqual(await limiter.take({ keyId: id, buckets: [], dailyLimit: null, nowMs: T0 }), {
        admitted: true,
        buckets: [],
        dailyCount: i,
        dailyLimit: null,
      });
    }
  });

  test('keys do not share buckets', async (t) => {
    const limiter = await make(t);
    const a = keyId();
    await takeUntilRefused(limiter, developer(a, T0));
    assert.equal((await limiter.take(developer(keyId(), T0))).admitted, true);
  });

  test('concurrent takes never admit more than the bucket holds', async (t) => {
    const limiter = await make(t);
    const id = keyId();
    const results = await Promise.all(Array.from({ length: 100 }, () => limiter.take(developer(id, T0))));
    assert.equal(results.filter((r) => r.admitted).length, 60);
    assert.deepEqual(
      [...new Set(results.filter((r) => r.admitted).map((r) => r.dailyCount))].length,
      60,
      'each admitted request counted once',
    );
  });
}
