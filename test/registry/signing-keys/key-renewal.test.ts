/**
 * The root's (and every registry's) own trust anchor has a validity window (#17 item 7): a new key is
 * valid for REGISTRY_KEY_LIFETIME_DAYS, renewal rotates it REGISTRY_KEY_RENEW_DAYS before its
 * not_after (once, whichever instance looks first), 0 only warns, and the time left is a metric.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { decodeProtectedHeader } from 'jose';
import type { Clock } from '../../../src/core/clock.ts';
import { loadConfig } from '../../../src/core/config.ts';
import { buildRegistry } from '../../../src/registry/app.ts';
import { BACKENDS, openTestStorage } from '../../helpers/registry.ts';

const DAY_MS = 86_400_000;

/** A clock the test moves. */
function movableClock(start = Date.parse('2026-01-01T00:00:00.000Z')) {
  let now = start;
  const clock: Clock = { now: () => new Date(now) };
  return { clock, advanceDays: (days: number) => (now += days * DAY_MS) };
}

function logLines() {
  const lines: any[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, stream };
}

async function registryOn(t: any, storage: any, clock: Clock, env: Record<string, string> = {}) {
  const logs = logLines();
  const config = loadConfig({ REGISTRY_ENV: 'test', REGISTRY_LOG_LEVEL: 'info', ...storage.env, ...env });
  const app = await buildRegistry({ config, storage, clock, logStream: logs.stream });
  t.after(() => app.close());
  const get = async (url: string) => (await app.inject({ method: 'GET', url })).json() as any;
  return { app, logs: logs.lines, anchors: async () => (await get('/v1/trust/anchors')).anchors as any[] };
}

for (const backend of BACKENDS) {
  describe(`signing key validity window and renewal [${backend}]`, () => {
    test('a new key is valid for REGISTRY_KEY_LIFETIME_DAYS: the anchor has a not_after, not null', async (t) => {
      const { clock } = movableClock();
      const storage = await openTestStorage(t, backend);
      const { anchors } = await registryOn(t, storage, clock);
      const [anchor] = await anchors();
      assert.equal(anchor.not_before, '2026-01-01T00:00:00.000Z');
      assert.equal(anchor.not_after, '2027-01-01T00:00:00.000Z');
    });

    test('renewal rotates once inside the renewal window; the old key stays published one more day', async (t) => {
      const time = movableClock();
      const storage = await openTestStorage(t, backend);
      const first = await registryOn(t, storage, time.clock);
      const second = await registryOn(t, storage, time.clock);
      const oldKid = first.app.ward.signer.kid;
      assert.equal(await first.app.ward.keyRenewal.check(), undefined, 'not due on day 0');

      time.advanceDays(340);
      const renewed = await first.app.ward.keyRenewal.check();
      assert.ok(renewed);
      assert.equal(renewed.previous?.key_id, oldKid);
      assert.equal(await second.app.ward.keyRenewal.check(), undefined, 'the other instance finds it renewed');
      const anchors = await first.anchors();
      const byKid = new Map(anchors.map((anchor) => [anchor.key_id, anchor]));
      assert.equal(byKid.get(renewed.key_id).not_after, new Date(Date.parse('2026-01-01T00:00:00.000Z') + (340 + 365) * DAY_MS).toISOString());
      assert.equal(byKid.get(oldKid).not_after, new Date(Date.parse('2026-01-01T00:00:00.000Z') + 341 * DAY_MS).toISOString());
      assert.ok(first.logs.some((line) => line.msg === 'signing key renewed before its not_after' && line.new_key_id === renewed.key_id));

      const events = (await first.app.inject({ method: 'GET', url: '/v1/events?event_types=trust.key_rotated' })).json() as any;
      assert.equal(events.events.length, 1);
      await first.app.ward.signer.reload();
      const answer = (await first.app.inject({ method: 'GET', url: '/v1/discover?capability=none.such' })).json() as any;
      assert.equal(decodeProtectedHeader(answer.signed_response).kid, renewed.key_id, 'answers are signed by the new key');
    });

    test('REGISTRY_KEY_RENEW_DAYS=0 only warns; the metric shows the time left', async (t) => {
      const time = movableClock();
      const storage = await openTestStorage(t, backend);
      const registry = await registryOn(t, storage, time.clock, { REGISTRY_KEY_RENEW_DAYS: '0' });
      time.advanceDays(340);
      assert.equal(await registry.app.ward.keyRenewal.check(), undefined);
      assert.equal((await registry.anchors()).length, 1);
      assert.ok(registry.logs.some((line) => line.level === 40 && /REGISTRY_KEY_RENEW_DAYS=0/.test(line.msg)));
      time.advanceDays(15);
      const metrics = (await registry.app.inject({ method: 'GET', url: '/metrics' })).body;
      assert.match(metrics, /^ward_signing_key_expires_in_seconds({[^}]*})? 864000$/m);
    });

    test('a key stored without a window (before this change) gets one at start, never sooner than a week away', async (t) => {
      const time = movableClock();
      const storage = await openTestStorage(t, backend);
      await registryOn(t, storage, time.clock);
      await storage.db.updateTable('signing_keys').set({ not_after: null }).execute();
      time.advanceDays(400);
      const later = await registryOn(t, storage, time.clock);
      const [anchor] = await later.anchors();
      assert.equal(anchor.not_after, new Date(Date.parse('2026-01-01T00:00:00.000Z') + 407 * DAY_MS).toISOString());
    });
  });
}

describe('signing key configuration', () => {
  test('a renewal window as long as the lifetime is refused at start, naming the variable', () => {
    assert.throws(
      () => loadConfig({ REGISTRY_ENV: 'test', REGISTRY_KEY_LIFETIME_DAYS: '30', REGISTRY_KEY_RENEW_DAYS: '30' }),
      /REGISTRY_KEY_RENEW_DAYS.*less than REGISTRY_KEY_LIFETIME_DAYS/,
    );
  });
});
