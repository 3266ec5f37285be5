import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PRICING_TIERS, effectiveLimits } from '../../../src/core/pricing-tiers.ts';
import { bucketOf, decide, limitRequestFor } from '../../../src/registry/metering/limit-policy.ts';
import { UNITS_PER_TOKEN as U } from '../../../src/registry/metering/token-bucket.ts';

const NOW = Date.parse('2030-01-15T23:59:30.000Z'); // 30 s before UTC midnight

describe('limit policy', () => {
  test('discovery and routing requests draw on their own bucket and the general one; others on general', () => {
    assert.equal(bucketOf('GET', '/v1/discover'), 'discovery');
    assert.equal(bucketOf('HEAD', '/v1/discover'), 'discovery');
    assert.equal(bucketOf('POST', '/v1/route'), 'routing');
    assert.equal(bucketOf('GET', '/v1/route'), 'general');
    assert.equal(bucketOf('GET', '/v1/agents'), 'general');
    assert.equal(bucketOf('GET', undefined), 'general', 'an unknown route still costs a general token');
    const developer = PRICING_TIERS.developer;
    assert.deepEqual(limitRequestFor('key_1', developer, 'discovery', NOW), {
      keyId: 'key_1',
      buckets: [
        { name: 'discovery', capacity: 30 },
        { name: 'general', capacity: 60 },
      ],
      dailyLimit: 1000,
      nowMs: NOW,
    });
    assert.deepEqual(limitRequestFor('key_1', developer, 'general', NOW).buckets, [
      { name: 'general', capacity: 60 },
    ]);
  });

  test('null figures are unlimited: enterprise asks for no bucket and no daily limit unless overridden', () => {
    assert.deepEqual(limitRequestFor('k', PRICING_TIERS.enterprise, 'routing', NOW), {
      keyId: 'k',
      buckets: [],
      dailyLimit: null,
      nowMs: NOW,
    });
    const custom = effectiveLimits('enterprise', { routing_per_minute: 5, requests_per_day: 50 });
    assert.deepEqual(limitRequestFor('k', custom, 'routing', NOW), {
      keyId: 'k',
      buckets: [{ name: 'routing', capacity: 5 }],
      dailyLimit: 50,
      nowMs: NOW,
    });
  });

  test('admitted: the headers describe the limit with the fewest requests left', () => {
    const state = {
      admitted: true,
      buckets: [
        { name: 'discovery' as const, capacity: 30, units: 29 * U },
        { name: 'general' as const, capacity: 60, units: 59 * U },
      ],
      dailyCount: 1,
      dailyLimit: 1000,
    };
    assert.deepEqual(decide(state, NOW), {
      admitted: true,
      headers: { 'ratelimit-limit': '30', 'ratelimit-remaining': '29', 'ratelimit-reset': '2' },
    });
    const nearDayEnd = { ...state, dailyCount: 995 };
    assert.deepEqual(
      decide(nearDayEnd, NOW).headers,
      { 'ratelimit-limit': '1000', 'ratelimit-remaining': '5', 'ratelimit-reset': '30' },
      'the day resets at UTC midnight',
    );
    assert.deepEqual(
      decide({ admitted: true, buckets: [], dailyCount: 7, dailyLimit: null }, NOW),
      { admitted: true, headers: {} },
      'unlimited: no headers',
    );
  });

  test('refused by a bucket: RATE_LIMITED, waiting for the slowest refusing bucket', () => {
    const state = {
      admitted: false,
      buckets: [
        { name: 'routing' as const, capacity: 30, units: 0 },
        { name: 'general' as const, capacity: 60, units: 10 * U },
      ],
      dailyCount: 40,
      dailyLimit: 1000,
    };
    assert.deepEqual(decide(state, NOW), {
      admitted: false,
      headers: { 'ratelimit-limit': '30', 'ratelimit-remaining': '0', 'ratelimit-reset': '60' },
      refusal: {
        code: 'RATE_LIMITED',
        retryAfterMs: 2000,
        details: { limit: 'routing_per_minute', value: 30 },
      },
    });
    const both = {
      ...state,
      buckets: [
        { name: 'routing' as const, capacity: 30, units: U / 2 },
        { name: 'general' as const, capacity: 60, units: 0 },
      ],
    };
    const decision = decide(both, NOW);
    assert.equal(decision.refusal?.retryAfterMs, 1000, 'both must have a token again: max(1000 ms, 1000 ms)');
  });

  test('refused by the day: QUOTA_EXCEEDED until UTC midnight, even when a bucket is empty too', () => {
    const state = {
      admitted: false,
      buckets: [{ name: 'general' as const, capacity: 60, units: 0 }],
      dailyCount: 1000,
      dailyLimit: 1000,
    };
    assert.deepEqual(decide(state, NOW), {
      admitted: false,
      headers: { 'ratelimit-limit': '1000', 'ratelimit-remaining': '0', 'ratelimit-reset': '30' },
      refusal: {
        code: 'QUOTA_EXCEEDED',
        retryAfterMs: 30_000,
        details: { limit: 'requests_per_day', value: 1000 },
      },
    });
  });

  test('a zero figure refuses with no time to retry at', () => {
    const state = {
      admitted: false,
      buckets: [{ name: 'general' as const, capacity: 0, units: 0 }],
      dailyCount: 0,
      dailyLimit: null,
    };
    assert.equal(decide(state, NOW).refusal?.retryAfterMs, null);
  });
});
