import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BACKENDS } from '../../helpers/registry.ts';
import { startRegistries, testScope, type ListeningRegistry } from '../../helpers/listening.ts';
import { REDIS_URL, manualClock } from './helpers.ts';

const suite = BACKENDS.includes('postgres') ? describe : describe.skip;

/** Two registry instances on one PostgreSQL schema, both with the same Redis, on one test clock. */
async function twoInstances(t: Parameters<typeof testScope>[0]) {
  const clock = manualClock();
  const [a, b] = (await startRegistries(testScope(t), 'postgres', {
    count: 2,
    clock,
    env: { REDIS_URL },
  })) as [ListeningRegistry, ListeningRegistry];
  const call = async (
    instance: ListeningRegistry,
    path: string,
    init: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
  ) => {
    const response = await fetch(`${instance.baseUrl}${path}`, {
      method: init.method ?? 'GET',
      headers: { ...(init.body ? { 'content-type': 'application/json' } : {}), ...init.headers },
      ...(init.body ? { body: JSON.stringify(init.body) } : {}),
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      body: (text ? JSON.parse(text) : undefined) as any,
    };
  };
  const key = (
    await call(a, '/v1/admin/billing/api-keys', {
      method: 'POST',
      body: { org_id: 'org-a', display_name: 'shared', tier: 'developer' },
    })
  ).body;
  return { a, b, clock, call, key, auth: { authorization: `Bearer ${key.raw_key}` } };
}

suite('several instances on PostgreSQL and Redis [postgres, redis]', () => {
  test('a key revoked on one instance is refused on the other on its next request', async (t) => {
    const { a, b, call, key, auth } = await twoInstances(t);
    assert.equal((await call(b, '/v1/agents', { headers: auth })).status, 200);
    assert.equal(
      (await call(a, `/v1/admin/billing/api-keys/${key.key_id}`, { method: 'DELETE' })).status,
      204,
    );
    const refused = await call(b, '/v1/agents', { headers: auth });
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error.code, 'UNAUTHORIZED');
    assert.match(String(refused.headers.get('www-authenticate')), /invalid_token/);
  });

  test("a burst spread over both instances admits exactly the tier's figure", async (t) => {
    const { a, b, call, key, auth } = await twoInstances(t);
    // 80 concurrent requests alternating between the instances, all at one instant of the clock.
    const statuses = await Promise.all(
      Array.from({ length: 80 }, (_, i) =>
        call(i % 2 === 0 ? a : b, '/v1/agents', { headers: auth }).then((r) => r.status),
      ),
    );
    assert.equal(statuses.filter((s) => s === 200).length, 60, 'developer: 60 a minute, across both');
    assert.equal(statuses.filter((s) => s === 429).length, 20);
    for (const instance of [a, b]) {
      const live = await call(instance, `/v1/admin/billing/usage/${key.key_id}/live`);
      assert.deepEqual(
        [live.body.daily_count, live.body.tokens_remaining.general],
        [60, 0],
        'both see the one shared state',
      );
    }
  });

  test('tokens refill for both instances as the clock moves, and usage from both lands in one summary', async (t) => {
    const { a, b, clock, call, auth } = await twoInstances(t);
    for (let i = 0; i < 60; i += 1)
      await call(i % 2 === 0 ? a : b, '/v1/discover?capability=triage.assess', { headers: auth });
    clock.advance(2000); // one discovery token (30/min)
    assert.equal((await call(b, '/v1/discover?capability=triage.assess', { headers: auth })).status, 200);
    assert.equal((await call(a, '/v1/discover?capability=triage.assess', { headers: auth })).status, 429);
    await b.app.close(); // B writes its pending counts as it closes
    const summary = await call(
      a,
      '/v1/admin/billing/usage?since=2030-01-15T00:00:00Z&until=2030-01-15T23:59:59Z',
    );
    assert.deepEqual(summary.body.totals, { general: 31, discovery: 31, routing: 0, rate_limited: 31 });
  });
});
