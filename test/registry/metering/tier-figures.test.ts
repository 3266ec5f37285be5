import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PRICING_TIERS, type PricingTier } from '../../../src/core/pricing-tiers.ts';
import { decide, limitRequestFor } from '../../../src/registry/metering/limit-policy.ts';
import { createMemoryRateLimiter } from '../../../src/registry/metering/memory-rate-limiter.ts';
import { BACKENDS, buildTestRegistry } from '../../helpers/registry.ts';
import { admitted, burst, keyOfTier, manualClock, type RequestKind } from './helpers.ts';

/** The spec's Limits table, written out here so that a change to tiers.ts cannot pass unnoticed. */
const FIGURES: Record<
  Exclude<PricingTier, 'enterprise'>,
  { general: number; discovery: number; routing: number; day: number }
> = {
  developer: { general: 60, discovery: 30, routing: 30, day: 1000 },
  team: { general: 300, discovery: 100, routing: 100, day: 10_000 },
  business: { general: 1000, discovery: 500, routing: 500, day: 100_000 },
  scale: { general: 5000, discovery: 2000, routing: 2000, day: 1_000_000 },
};

const LIMIT_NAMES = {
  general: 'requests_per_minute',
  discovery: 'discovery_per_minute',
  routing: 'routing_per_minute',
} as const;

for (const backend of BACKENDS) {
  describe(`each tier's per-minute figures over HTTP [${backend}]`, () => {
    // Every tier on SQLite; on PostgreSQL the two smaller ones (the larger differ only in numbers).
    const tiers = Object.entries(FIGURES).filter(
      ([tier]) => backend === 'sqlite' || tier === 'developer' || tier === 'team',
    );
    for (const [tier, figures] of tiers) {
      test(`${tier}: ${figures.discovery} discovery, ${figures.routing} routing and ${figures.general} requests a minute, the next one refused`, async (t) => {
        const clock = manualClock();
        const registry = await buildTestRegistry(t, backend, { clock });
        const { send } = await keyOfTier(registry, tier);
        for (const kind of ['discovery', 'routing', 'general'] as const satisfies RequestKind[]) {
          const first = await send(kind);
          assert.equal(first.headers['ratelimit-limit'], String(figures[kind]), `${kind}: the limit named`);
          assert.deepEqual(
            admitted([first.status, ...(await burst(send, kind, figures[kind]))]),
            { admitted: figures[kind], firstRefused: figures[kind] },
            kind,
          );
          const refused = await send(kind);
          assert.deepEqual(
            refused.body.error.details,
            { limit: LIMIT_NAMES[kind], value: figures[kind], tier },
            kind,
          );
          clock.advance(60_000); // every bucket full again for the next kind
        }
      });
    }
  });
}

describe("each tier's daily quota, driven by the clock through a UTC day", () => {
  for (const [tier, figures] of Object.entries(FIGURES)) {
    test(`${tier}: ${figures.day} requests a UTC day, then QUOTA_EXCEEDED until midnight`, async () => {
      const limiter = createMemoryRateLimiter();
      let nowMs = Date.parse('2030-01-15T00:00:00.000Z');
      const step = Math.ceil(60_000 / figures.general); // one general token comes back each step
      const limits = PRICING_TIERS[tier as PricingTier];
      let count = 0;
      for (;;) {
        const state = await limiter.take(limitRequestFor('key_t', limits, 'general', nowMs));
        if (!state.admitted) {
          const decision = decide(state, nowMs);
          assert.equal(decision.refusal?.code, 'QUOTA_EXCEEDED');
          assert.deepEqual(decision.refusal?.details, { limit: 'requests_per_day', value: figures.day });
          break;
        }
        count += 1;
        nowMs += step;
      }
      assert.equal(count, figures.day);
      assert.ok(nowMs < Date.parse('2030-01-16T00:00:00.000Z'), 'all within one UTC day');
      assert.equal(
        (
          await limiter.take(
            limitRequestFor('key_t', limits, 'general', Date.parse('2030-01-16T00:00:00.000Z')),
          )
        ).admitted,
        true,
      );
    });
  }
});
