import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bearer, createKey } from '../../helpers/keys.ts';
import { BACKENDS, buildTestRegistry } from '../../helpers/registry.ts';
import {
  AUDIENCE,
  ISSUER,
  makeSigningKey,
  signToken,
  startJwksServer,
  tokenClaims,
} from '../credentials/fixtures.ts';
import { LIMITER_ENVS, manualClock } from './helpers.ts';

// Only API keys have a tier: anonymous and token callers are neither limited nor metered, and a
// limiter that cannot answer refuses API-key requests instead of letting them through unlimited.

for (const backend of BACKENDS) {
  for (const [limiterName, env] of Object.entries(LIMITER_ENVS)) {
    describe(`callers without a tier [${backend}, ${limiterName}]`, () => {
      test('anonymous callers (disabled mode) are neither limited nor given headers', async (t) => {
        const registry = await buildTestRegistry(t, backend, { clock: manualClock(), env });
        for (let i = 0; i < 70; i += 1) {
          const response = await registry.call({ method: 'GET', url: '/v1/agents' });
          assert.equal(response.status, 200);
          assert.equal(response.headers['ratelimit-limit'], undefined);
        }
        const usage = await registry.call({
          method: 'GET',
          url: '/v1/admin/billing/usage?since=2030-01-15T00:00:00Z&until=2030-01-15T23:59:59Z',
        });
        assert.deepEqual(usage.body.keys, [], 'nor metered');
      });
    });
  }
}

describe('callers without a tier', () => {
  test('token callers (jwt mode) are not limited; an API key in the same registry is', async (t) => {
    const signing = makeSigningKey('ES256');
    const jwks = await startJwksServer(t, [signing]);
    const env = {
      REGISTRY_AUTH_MODE: 'jwt',
      REGISTRY_JWT_JWKS_URI: jwks.jwksUri,
      REGISTRY_JWT_ISSUER: ISSUER,
      REGISTRY_JWT_AUDIENCE: AUDIENCE,
    };
    const registry = await buildTestRegistry(t, 'sqlite', { env });
    const now = Math.floor(Date.now() / 1000);
    const admin = await signToken(
      signing,
      tokenClaims({ iat: now, exp: now + 300, scope: 'registry:admin registry:read' }),
    );
    for (let i = 0; i < 70; i += 1) {
      const response = await registry.call({ method: 'GET', url: '/v1/agents', headers: bearer(admin) });
      assert.equal(response.status, 200);
      assert.equal(response.headers['ratelimit-limit'], undefined);
    }
    const key = await createKey(registry, {}, bearer(admin));
    assert.equal(
      (await registry.call({ method: 'GET', url: '/v1/agents', headers: bearer(key.raw_key) })).headers[
        'ratelimit-limit'
      ],
      '60',
    );
  });
});

describe('when the shared limiter cannot be reached', () => {
  test('API-key requests are refused with 503 SERVICE_UNAVAILABLE, never run unlimited; anonymous ones are served', async (t) => {
    const registry = await buildTestRegistry(t, 'sqlite', { env: { REDIS_URL: 'redis://127.0.0.1:1' } });
    const key = await createKey(registry);
    const refused = await registry.call({ method: 'GET', url: '/v1/agents', headers: bearer(key.raw_key) });
    assert.equal(refused.status, 503);
    assert.deepEqual(refused.body.error, {
      code: 'SERVICE_UNAVAILABLE',
      message: 'Rate limits cannot be checked at the moment.',
      details: {},
      retryable: true,
      retry_after_ms: 1000,
    });
    assert.equal(refused.headers['retry-after'], '1');
    assert.equal((await registry.call({ method: 'GET', url: '/v1/agents' })).status, 200);
  });
});
