import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadConfig } from '../../../src/core/config.ts';
import { buildRegistry } from '../../../src/registry/app.ts';
import { bearer } from '../../helpers/keys.ts';
import { BACKENDS, buildTestRegistry, openTestStorage } from '../../helpers/registry.ts';
import { LIMITER_ENVS, burst, keyOfTier, manualClock } from './helpers.ts';

const USAGE = '/v1/admin/billing/usage';
const zero = { general: 0, discovery: 0, routing: 0, rate_limited: 0 };

for (const backend of BACKENDS) {
  describe(`usage metering [${backend}]`, () => {
    test('counts each key per UTC day and class; refusals are counted apart', async (t) => {
      const clock = manualClock('2030-01-15T23:59:00.000Z');
      const registry = await buildTestRegistry(t, backend, { clock });
      const { key, send } = await keyOfTier(registry, 'developer');
      await burst(send, 'general', 3);
      await burst(send, 'discovery', 31); // 30 admitted, 1 refused
      await burst(send, 'routing', 2);
      clock.set('2030-01-16T00:00:30.000Z');
      await burst(send, 'routing', 1);
      const summary = await registry.call({
        method: 'GET',
        url: `${USAGE}?since=2030-01-15T00:00:00Z&until=2030-01-16T23:59:59Z`,
      });
      assert.equal(summary.status, 200);
      assert.deepEqual(summary.body, {
        since: '2030-01-15T00:00:00.000Z',
        until: '2030-01-16T23:59:59.000Z',
        totals: { general: 36, discovery: 30, routing: 3, rate_limited: 1 },
        keys: [
          {
            key_id: key.key_id,
            org_id: 'org-a',
            totals: { general: 36, discovery: 30, routing: 3, rate_limited: 1 },
            days: [
              { day: '2030-01-15', general: 35, discovery: 30, routing: 2, rate_limited: 1 },
              { day: '2030-01-16', ...zero, general: 1, routing: 1 },
            ],
          },
        ],
      });
    });

    test('the summary filters by days, organisation and key', async (t) => {
      const clock = manualClock('2030-01-15T12:00:00.000Z');
      const registry = await buildTestRegistry(t, backend, { clock });
      const a = await keyOfTier(registry, 'team', { org_id: 'org-a' });
      const b = await keyOfTier(registry, 'team', { org_id: 'org-b' });
      const b2 = await keyOfTier(registry, 'team', { org_id: 'org-b' });
      await burst(a.send, 'general', 1);
      await burst(b.send, 'general', 2);
      await burst(b2.send, 'discovery', 3);
      clock.set('2030-01-17T12:00:00.000Z');
      await burst(b.send, 'general', 4);
      const summary = async (query: string) =>
        (await registry.call({ method: 'GET', url: `${USAGE}?${query}` })).body;
      const all = await summary('since=2030-01-01T00:00:00Z&until=2030-01-31T00:00:00Z');
      assert.deepEqual(all.totals, { ...zero, general: 10, discovery: 3 });
      assert.deepEqual(
        all.keys.map((k: any) => k.key_id).sort(),
        [a.key.key_id, b.key.key_id, b2.key.key_id].sort(),
      );
      const orgB = await summary('since=2030-01-01T00:00:00Z&until=2030-01-31T00:00:00Z&org_id=org-b');
      assert.deepEqual(orgB.totals, { ...zero, general: 9, discovery: 3 });
      assert.ok(orgB.keys.every((k: any) => k.org_id === 'org-b'));
      const oneKey = await summary(
        `since=2030-01-01T00:00:00Z&until=2030-01-31T00:00:00Z&key_id=${b.key.key_id}`,
      );
      assert.deepEqual(
        oneKey.keys.map((k: any) => [k.key_id, k.days.map((d: any) => [d.day, d.general])]),
        [
          [
            b.key.key_id,
            [
              ['2030-01-15', 2],
              ['2030-01-17', 4],
            ],
          ],
        ],
      );
      const lastDay = await summary('since=2030-01-18T00:30:00%2B01:00&until=2030-01-17T23:59:00Z');
      assert.deepEqual(
        lastDay.totals,
        { ...zero, general: 4 },
        'days are UTC: 00:30+01:00 on the 18th is the 17th',
      );
      const none = await summary('since=2030-01-16T00:00:00Z&until=2030-01-16T23:59:59Z');
      assert.deepEqual(none, {
        since: '2030-01-16T00:00:00.000Z',
        until: '2030-01-16T23:59:59.000Z',
        totals: zero,
        keys: [],
      });
    });

    test('the summary validates its range', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const refused = async (query: string) => {
        const response = await registry.call({ method: 'GET', url: `${USAGE}?${query}` });
        assert.equal(response.status, 422, query);
        assert.equal(response.body.error.code, 'VALIDATION_ERROR', query);
        return response.body.error.details.errors;
      };
      assert.deepEqual(await refused('since=2030-01-02T00:00:00Z&until=2030-01-01T00:00:00Z'), [
        { in: 'query', pointer: '/until', reason: 'must not be before since' },
      ]);
      assert.deepEqual(await refused('since=2030-01-01T00:00:00Z&until=2031-01-03T00:00:00Z'), [
        { in: 'query', pointer: '/until', reason: 'the range may span at most 366 days' },
      ]);
      assert.equal(
        (
          await registry.call({
            method: 'GET',
            url: `${USAGE}?since=2030-01-01T00:00:00Z&until=2031-01-02T00:00:00Z`,
          })
        ).status,
        200,
        '366 days exactly',
      );
      await refused('until=2030-01-01T00:00:00Z');
      await refused('since=yesterday&until=2030-01-01T00:00:00Z');
      await refused('since=2030-01-01T00:00:00Z&until=2030-01-02T00:00:00Z&key_id=nope');
      await refused('since=2030-01-01T00:00:00Z&until=2030-01-02T00:00:00Z&extra=1');
    });

    test('counts are durable: written at close and read by the next instance', async (t) => {
      const storage = await openTestStorage(t, backend);
      const clock = manualClock();
      const config = loadConfig({ REGISTRY_ENV: 'test', ...storage.env });
      const first = await buildRegistry({ config, storage, clock, logger: false });
      const created = await first.inject({
        method: 'POST',
        url: '/v1/admin/billing/api-keys',
        payload: { org_id: 'org-a', display_name: 'k' },
      });
      const key = created.json();
      for (let i = 0; i < 5; i += 1)
        await first.inject({ method: 'GET', url: '/v1/agents', headers: bearer(key.raw_key) });
      await first.close();
      const second = await buildRegistry({ config, storage, clock, logger: false });
      t.after(() => second.close());
      const summary = (
        await second.inject({
          method: 'GET',
          url: `${USAGE}?since=2030-01-15T00:00:00Z&until=2030-01-15T00:00:00Z`,
        })
      ).json();
      assert.deepEqual(summary.totals, { ...zero, general: 5 });
    });
  });

  for (const [limiterName, env] of Object.entries(LIMITER_ENVS)) {
    describe(`live usage [${backend}, ${limiterName}]`, () => {
      test("live usage reports the limiter's own numbers without taking any", async (t) => {
        const clock = manualClock('2030-01-15T10:00:00.000Z');
        const registry = await buildTestRegistry(t, backend, { clock, env });
        const { key, send } = await keyOfTier(registry, 'developer');
        await burst(send, 'general', 5);
        await burst(send, 'discovery', 2);
        const live = async (keyId = key.key_id) =>
          registry.call({ method: 'GET', url: `${USAGE}/${keyId}/live` });
        const expected = {
          key_id: key.key_id,
          tier: 'developer',
          daily_count: 7,
          daily_limit: 1000,
          tokens_remaining: { general: 53, discovery: 28, routing: 30 },
          reset_at: '2030-01-16T00:00:00.000Z',
        };
        assert.deepEqual((await live()).body, expected);
        assert.deepEqual((await live()).body, expected, 'reading takes nothing');
        const next = await send('general');
        assert.equal(next.headers['ratelimit-remaining'], '52', 'the headers and live usage agree');
        clock.advance(2000);
        assert.deepEqual(
          (await live()).body.tokens_remaining,
          { general: 54, discovery: 29, routing: 30 },
          'refilled as the clock moved',
        );
        const unknown = await live('key_00000000000000000000000000');
        assert.deepEqual([unknown.status, unknown.body.error.code], [404, 'API_KEY_NOT_FOUND']);
      });

      test('an enterprise key without overrides shows no limits but still its count', async (t) => {
        const registry = await buildTestRegistry(t, backend, { clock: manualClock(), env });
        const { key, send } = await keyOfTier(registry, 'enterprise');
        await burst(send, 'routing', 3);
        const body = (await registry.call({ method: 'GET', url: `${USAGE}/${key.key_id}/live` })).body;
        assert.deepEqual(body, {
          key_id: key.key_id,
          tier: 'enterprise',
          daily_count: 3,
          daily_limit: null,
          tokens_remaining: { general: null, discovery: null, routing: null },
          reset_at: '2030-01-16T00:00:00.000Z',
        });
      });
    });
  }
}
