import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bearer } from '../../helpers/keys.ts';
import { BACKENDS, agentBody, buildTestRegistry, writeHeaders } from '../../helpers/registry.ts';
import { LIMITER_ENVS, admitted, burst, keyOfTier, manualClock } from './helpers.ts';

function rateLimitHeaders(headers: Record<string, unknown>) {
  return {
    limit: headers['ratelimit-limit'],
    remaining: headers['ratelimit-remaining'],
    reset: headers['ratelimit-reset'],
    retryAfter: headers['retry-after'],
  };
}

for (const backend of BACKENDS) {
  for (const [limiterName, env] of Object.entries(LIMITER_ENVS)) {
    describe(`rate limits over HTTP [${backend}, ${limiterName}]`, () => {
      test("a developer key's 61st request in a minute is 429 RATE_LIMITED with exact headers, and tokens come back continuously", async (t) => {
        const clock = manualClock();
        const registry = await buildTestRegistry(t, backend, { clock, env });
        const { send } = await keyOfTier(registry, 'developer');
        const first = await send('general');
        assert.equal(first.status, 200);
        assert.deepEqual(rateLimitHeaders(first.headers), {
          limit: '60',
          remaining: '59',
          reset: '1',
          retryAfter: undefined,
        });
        assert.deepEqual(await burst(send, 'general', 59), Array(59).fill(200));

        const refused = await send('general');
        assert.equal(refused.status, 429);
        assert.deepEqual(refused.body, {
          error: {
            code: 'RATE_LIMITED',
            message: "The key is over its tier's rate limit.",
            details: { limit: 'requests_per_minute', value: 60, tier: 'developer' },
            retryable: true,
            retry_after_ms: 1000,
          },
        });
        assert.deepEqual(rateLimitHeaders(refused.headers), {
          limit: '60',
          remaining: '0',
          reset: '60',
          retryAfter: '1',
        });

        clock.advance(500);
        const halfway = await send('general');
        assert.deepEqual(
          [halfway.status, halfway.body.error.retry_after_ms, halfway.headers['retry-after']],
          [429, 500, '1'],
        );
        clock.advance(500);
        const refilled = await send('general');
        assert.equal(refilled.status, 200, 'one token a second at 60/min');
        assert.deepEqual(rateLimitHeaders(refilled.headers), {
          limit: '60',
          remaining: '0',
          reset: '60',
          retryAfter: undefined,
        });
        assert.equal((await send('general')).status, 429);
        clock.advance(30_000);
        assert.deepEqual(
          admitted(await burst(send, 'general', 31)),
          { admitted: 30, firstRefused: 30 },
          '30 tokens after 30 s',
        );
      });

      test('a request refused by the discovery bucket takes no token from the general one', async (t) => {
        const registry = await buildTestRegistry(t, backend, { clock: manualClock(), env });
        const { send } = await keyOfTier(registry, 'developer');
        assert.deepEqual(admitted(await burst(send, 'discovery', 31)), { admitted: 30, firstRefused: 30 });
        const refused = await send('discovery');
        assert.deepEqual(refused.body.error.details, {
          limit: 'discovery_per_minute',
          value: 30,
          tier: 'developer',
        });
        assert.deepEqual(rateLimitHeaders(refused.headers), {
          limit: '30',
          remaining: '0',
          reset: '60',
          retryAfter: '2',
        });
        await burst(send, 'discovery', 10);
        assert.deepEqual(
          admitted(await burst(send, 'general', 31)),
          { admitted: 30, firstRefused: 30 },
          'general still had 60 - 30',
        );
      });

      test('routing requests draw on the routing bucket: 30 a minute for a developer key', async (t) => {
        const registry = await buildTestRegistry(t, backend, { clock: manualClock(), env });
        const { send } = await keyOfTier(registry, 'developer');
        const statuses = await burst(send, 'routing', 31);
        assert.deepEqual(admitted(statuses), { admitted: 30, firstRefused: 30 });
        assert.ok(
          statuses.slice(0, 30).every((s) => s === 422),
          'admitted: routing ran (NO_ROUTE with no agents)',
        );
        assert.equal((await send('routing')).body.error.details.limit, 'routing_per_minute');
      });

      test("the day's quota: the 1001st request of a UTC day is 429 QUOTA_EXCEEDED until midnight", async (t) => {
        const clock = manualClock('2030-01-15T23:00:00.000Z');
        const registry = await buildTestRegistry(t, backend, { clock, env });
        const { send } = await keyOfTier(registry, 'developer');
        for (let i = 0; i < 1000; i += 1) {
          const response = await send('general');
          if (response.status !== 200) assert.fail(`request ${i + 1} was ${response.status}`);
          clock.advance(1000); // the general bucket refills as fast as it is used
        }
        // 23:16:40 now: 2600 s to midnight.
        const refused = await send('general');
        assert.equal(refused.status, 429);
        assert.deepEqual(refused.body.error, {
          code: 'QUOTA_EXCEEDED',
          message: "The key has used its tier's requests for this UTC day.",
          details: { limit: 'requests_per_day', value: 1000, tier: 'developer' },
          retryable: true,
          retry_after_ms: 2_600_000,
        });
        assert.deepEqual(rateLimitHeaders(refused.headers), {
          limit: '1000',
          remaining: '0',
          reset: '2600',
          retryAfter: '2600',
        });
        clock.set('2030-01-15T23:59:59.999Z');
        assert.equal((await send('general')).status, 429);
        clock.set('2030-01-16T00:00:00.000Z');
        const nextDay = await send('general');
        assert.equal(nextDay.status, 200);
      });

      test('unauthenticated and under-scoped requests are refused before the limiter and take no token', async (t) => {
        const registry = await buildTestRegistry(t, backend, { clock: manualClock(), env });
        const { key, send } = await keyOfTier(registry, 'developer');
        for (let i = 0; i < 20; i += 1) {
          const forbidden = await registry.call({
            method: 'POST',
            url: '/v1/agents',
            headers: { ...bearer(key.raw_key), ...writeHeaders() },
            payload: agentBody(),
          });
          assert.equal(forbidden.status, 403);
          assert.equal(forbidden.headers['ratelimit-limit'], undefined);
        }
        assert.deepEqual(admitted(await burst(send, 'general', 61)), { admitted: 60, firstRefused: 60 });
      });

      test('admitted requests that fail still carry the headers and count', async (t) => {
        const registry = await buildTestRegistry(t, backend, { clock: manualClock(), env });
        const { key } = await keyOfTier(registry, 'developer');
        const missing = await registry.call({
          method: 'GET',
          url: '/v1/agents/01J00000000000000000000000',
          headers: bearer(key.raw_key),
        });
        assert.equal(missing.status, 404);
        assert.deepEqual(rateLimitHeaders(missing.headers), {
          limit: '60',
          remaining: '59',
          reset: '1',
          retryAfter: undefined,
        });
        const invalid = await registry.call({
          method: 'GET',
          url: '/v1/agents?limit=0',
          headers: bearer(key.raw_key),
        });
        assert.equal(invalid.status, 422);
        assert.equal(invalid.headers['ratelimit-remaining'], '58');
      });

      test('enterprise keys are unlimited unless the key carries overrides', async (t) => {
        const clock = manualClock();
        const registry = await buildTestRegistry(t, backend, { clock, env });
        const unlimited = await keyOfTier(registry, 'enterprise');
        const statuses = await burst(unlimited.send, 'discovery', 150);
        assert.ok(statuses.every((s) => s === 200));
        const response = await unlimited.send('general');
        assert.equal(response.headers['ratelimit-limit'], undefined, 'no limit, no headers');

        const custom = await keyOfTier(registry, 'enterprise', {
          limits: { requests_per_minute: 5, discovery_per_minute: 2, requests_per_day: 8 },
        });
        assert.deepEqual(admitted(await burst(custom.send, 'discovery', 3)), {
          admitted: 2,
          firstRefused: 2,
        });
        assert.deepEqual(
          admitted(await burst(custom.send, 'routing', 4)),
          { admitted: 3, firstRefused: 3 },
          'routing unlimited: general (5) binds',
        );
        clock.advance(60_000);
        assert.deepEqual(
          admitted(await burst(custom.send, 'general', 4)),
          { admitted: 3, firstRefused: 3 },
          '8 a day: 5 + 3',
        );
        const quota = await custom.send('general');
        assert.deepEqual(quota.body.error.details, {
          limit: 'requests_per_day',
          value: 8,
          tier: 'enterprise',
        });
      });
    });
  }
}
