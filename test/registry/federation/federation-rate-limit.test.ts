/**
 * The public federation routes carry no API key (other registries call them), so they are limited
 * per client address (issue 19, item 5): over REGISTRY_FEDERATION_RATE_PER_MINUTE a caller gets 429
 * RATE_LIMITED with Retry-After; 0 turns the limit off.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildTestRegistry } from '../../helpers/registry.ts';

describe('rate limits on the public federation routes', () => {
  test('one address over its per-minute limit is refused with 429 and Retry-After; another address is not', async (t) => {
    const registry = await buildTestRegistry(t, 'sqlite', { env: { REGISTRY_FEDERATION_RATE_PER_MINUTE: '3' } });
    const ask = (remoteAddress: string, path = '/v1/federation/status?sub=registry%3A%2F%2Fgb%2Fregistries%2Fnone') =>
      registry.app.inject({ method: 'GET', url: path, remoteAddress });
    const statuses = [];
    for (let i = 0; i < 3; i += 1) statuses.push((await ask('203.0.113.7')).statusCode);
    assert.ok(statuses.every((status) => status !== 429), statuses.join(' '));
    const refused = await ask('203.0.113.7', '/v1/federation/fetch?sub=registry%3A%2F%2Fgb%2Fregistries%2Fnone');
    assert.equal(refused.statusCode, 429);
    assert.equal((refused.json() as any).error.code, 'RATE_LIMITED');
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    assert.notEqual((await ask('203.0.113.8')).statusCode, 429, 'the limit is per address');
    assert.notEqual((await registry.app.inject({ method: 'GET', url: '/v1/metadata', remoteAddress: '203.0.113.7' })).statusCode, 429, 'other routes are not affected');
  });

  test('the trust mark endpoints, public and answering about an agent by its identifier, share the per-address limit (regression)', async (t) => {
    const registry = await buildTestRegistry(t, 'sqlite', { env: { REGISTRY_FEDERATION_RATE_PER_MINUTE: '3' } });
    const mark = (remoteAddress: string) =>
      registry.app.inject({ method: 'GET', url: '/v1/oidf/trust-mark?trust_mark_type=urn%3Award%3Atrust-mark%3Atrust-validated&sub=http%3A%2F%2Fx.example%2Fv1%2Fagents%2Fnobody', remoteAddress });
    const status = (remoteAddress: string) =>
      registry.app.inject({ method: 'POST', url: '/v1/oidf/trust-mark-status', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'trust_mark=a.b.c', remoteAddress });
    const answered = [(await mark('203.0.113.9')).statusCode, (await status('203.0.113.9')).statusCode, (await mark('203.0.113.9')).statusCode];
    assert.deepEqual(answered, [404, 200, 404]);
    const list = (remoteAddress: string) =>
      registry.app.inject({ method: 'GET', url: '/v1/oidf/trust-mark-list?trust_mark_type=urn%3Award%3Atrust-mark%3Adelegated-registry', remoteAddress });
    for (const refused of [await mark('203.0.113.9'), await status('203.0.113.9'), await list('203.0.113.9')]) {
      assert.equal(refused.statusCode, 429);
      // OIDF endpoints refuse in OIDF's format, before the route too (issue 41, finding 5).
      assert.equal((refused.json() as any).error, 'temporarily_unavailable');
      assert.match((refused.json() as any).error_description, /\(RATE_LIMITED\)$/);
      assert.ok(Number(refused.headers['retry-after']) >= 1);
    }
    assert.equal((await mark('203.0.113.10')).statusCode, 404, 'the limit is per address');
    assert.equal((await list('203.0.113.11')).statusCode, 200, 'the list endpoint answers without an API key');
  });

  test('0 turns the limit off', async (t) => {
    const registry = await buildTestRegistry(t, 'sqlite', { env: { REGISTRY_FEDERATION_RATE_PER_MINUTE: '0' } });
    for (let i = 0; i < 10; i += 1) {
      const answer = await registry.app.inject({ method: 'GET', url: '/v1/federation/status?sub=x', remoteAddress: '203.0.113.7' });
      assert.notEqual(answer.statusCode, 429);
    }
  });

  test('a limiter that cannot be reached refuses the federation routes with 503, never serves them unlimited', async (t) => {
    const registry = await buildTestRegistry(t, 'sqlite', { env: { REDIS_URL: 'redis://127.0.0.1:1' } });
    const refused = await registry.app.inject({ method: 'GET', url: '/v1/federation/status?sub=x', remoteAddress: '203.0.113.7' });
    assert.equal(refused.statusCode, 503);
    assert.equal((refused.json() as any).error.code, 'SERVICE_UNAVAILABLE');
    assert.equal(refused.headers['retry-after'], '1');
  });
});
