import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compactVerify, createLocalJWKSet } from 'jose';
import { BACKENDS, buildTestRegistry } from '../../helpers/registry.ts';

for (const backend of BACKENDS) {
  describe(`server metadata and keys [${backend}]`, () => {
    test('metadata is served at both paths without authentication and names every endpoint', async (t) => {
      const registry = await buildTestRegistry(t, backend, { env: { REGISTRY_PUBLIC_URL: 'https://registry.example.org', REGISTRY_NAME: 'nhs-root' } });
      const wellKnown = await registry.call({ method: 'GET', url: '/.well-known/agent-registry' });
      const v1 = await registry.call({ method: 'GET', url: '/v1/metadata' });
      assert.equal(wellKnown.status, 200);
      assert.deepEqual(v1.body, wellKnown.body);
      const { signed_metadata: _signature, ...metadata } = wellKnown.body;
      assert.deepEqual(metadata, {
        issuer: 'https://registry.example.org',
        registry_id: 'registry://gb/registries/nhs-root',
        tier: 'root',
        jurisdiction: 'GB',
        api_base_url: 'https://registry.example.org',
        jwks_uri: 'https://registry.example.org/.well-known/jwks.json',
        registration_endpoint: '/v1/agents',
        discovery_endpoint: '/v1/discover',
        routing_endpoint: '/v1/route',
        events_endpoint: '/v1/events/stream',
        trust_anchors_endpoint: '/v1/trust/anchors',
        supported_auth_methods: [],
      });
    });

    test('signed_metadata is a compact JWS by the registry key over the metadata without that field', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const { signed_metadata, ...metadata } = (await registry.call({ method: 'GET', url: '/v1/metadata' })).body;
      const jwks = (await registry.call({ method: 'GET', url: '/.well-known/jwks.json' })).body;
      const { payload, protectedHeader } = await compactVerify(signed_metadata, createLocalJWKSet(jwks));
      assert.equal(protectedHeader.alg, 'ES256');
      assert.equal(protectedHeader.kid, jwks.keys[0].kid);
      assert.deepEqual(JSON.parse(new TextDecoder().decode(payload)), metadata);
    });

    test('the JWKS holds public keys only, and the key survives a restart on the same storage', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const jwks = (await registry.call({ method: 'GET', url: '/.well-known/jwks.json' })).body;
      assert.equal(jwks.keys.length, 1);
      const [key] = jwks.keys;
      assert.deepEqual(Object.keys(key).sort(), ['alg', 'crv', 'kid', 'kty', 'not_after', 'not_before', 'use', 'x', 'y']);
      assert.ok(Date.parse(key.not_after) > Date.parse(key.not_before), 'the active key has a validity window (REGISTRY_KEY_LIFETIME_DAYS)');
      const { buildRegistry } = await import('../../../src/registry/app.ts');
      const again = await buildRegistry({ config: registry.app.ward.config, storage: registry.storage, logger: false });
      t.after(() => again.close());
      const after = JSON.parse((await again.inject({ method: 'GET', url: '/.well-known/jwks.json' })).body);
      assert.deepEqual(after, jwks);
    });

    test('EdDSA and RS256 signing keys are selectable', async (t) => {
      for (const alg of ['EdDSA', 'RS256']) {
        const registry = await buildTestRegistry(t, backend, { env: { REGISTRY_SIGNING_ALG: alg } });
        const { signed_metadata } = (await registry.call({ method: 'GET', url: '/v1/metadata' })).body;
        const jwks = (await registry.call({ method: 'GET', url: '/.well-known/jwks.json' })).body;
        const { protectedHeader } = await compactVerify(signed_metadata, createLocalJWKSet(jwks));
        assert.equal(protectedHeader.alg, alg);
        assert.ok(!('d' in jwks.keys[0]));
      }
    });

    test('the health route reports the storage back-end', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      assert.deepEqual((await registry.call({ method: 'GET', url: '/health' })).body, { status: 'ok', storage: backend });
    });
  });
}
