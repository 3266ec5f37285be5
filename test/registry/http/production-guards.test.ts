import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildTestRegistry } from '../../helpers/registry.ts';
import { makeSigningKey, productionJwtEnv, startJwksServer } from '../credentials/fixtures.ts';

describe('production guards', () => {
  test('in production only the configured origins may call from a browser; in development any may', async (t) => {
    const jwks = await startJwksServer(t, [makeSigningKey('ES256')]);
    const production = await buildTestRegistry(t, 'sqlite', {
      env: productionJwtEnv(jwks.jwksUri, { REGISTRY_CORS_ORIGINS: 'https://console.nhs.example, https://ops.nhs.example' }),
    });
    const preflight = (registry: typeof production, origin: string) =>
      registry.app.inject({
        method: 'OPTIONS',
        url: '/v1/agents',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
      });
    const allowed = await preflight(production, 'https://console.nhs.example');
    assert.equal(allowed.headers['access-control-allow-origin'], 'https://console.nhs.example');
    const refused = await preflight(production, 'https://evil.example');
    assert.equal(refused.headers['access-control-allow-origin'], undefined);
    const simple = await production.app.inject({ method: 'GET', url: '/.well-known/agent-registry', headers: { origin: 'https://evil.example' } });
    assert.equal(simple.headers['access-control-allow-origin'], undefined);

    const development = await buildTestRegistry(t, 'sqlite');
    assert.equal((await preflight(development, 'https://anything.example')).headers['access-control-allow-origin'], 'https://anything.example');
  });
});
