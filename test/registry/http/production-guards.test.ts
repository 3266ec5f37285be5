import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildTestRegistry } from '../../helpers/registry.ts';
import { AUDIENCE, ISSUER, makeSigningKey, startJwksServer } from '../auth/fixtures.ts';

describe('production guards', () => {
  test('in production only the configured origins may call from a browser; in development any may', async (t) => {
    const jwks = await startJwksServer(t, [makeSigningKey('ES256')]);
    const production = await buildTestRegistry(t, 'sqlite', {
      env: {
        REGISTRY_ENV: 'production',
        REGISTRY_AUTH_MODE: 'jwt',
        REGISTRY_JWT_JWKS_URI: jwks.jwksUri,
        REGISTRY_JWT_ISSUER: ISSUER,
        REGISTRY_JWT_AUDIENCE: AUDIENCE,
        MESH_JWT_SECRET: 'a-production-secret-of-at-least-32-bytes!',
        REGISTRY_CORS_ORIGINS: 'https://console.nhs.example, https://ops.nhs.example',
      },
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
