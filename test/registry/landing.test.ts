/**
 * `GET /` on the registry (issue 46): links to the API document, metadata, health, the console and the
 * docs, public (no credential even with authentication on), and every registry link answers.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startRegistries, testScope } from '../helpers/listening.ts';

describe('registry landing', () => {
  test('GET / answers links that work, without a credential, on a registry that authenticates', async (t) => {
    const [registry] = await startRegistries(testScope(t), 'sqlite', {
      env: { REGISTRY_AUTH_MODE: 'jwt', REGISTRY_JWT_JWKS_URI: 'http://127.0.0.1:9/jwks.json', REGISTRY_JWT_ISSUER: 'https://issuer.example', REGISTRY_JWT_AUDIENCE: 'ward' },
    });
    const baseUrl = (registry as { baseUrl: string }).baseUrl;
    const response = await fetch(`${baseUrl}/`);
    assert.equal(response.status, 200);
    const body = (await response.json()) as any;
    assert.equal(body.service, 'Ward registry');
    assert.equal(body.registry_id, 'registry://gb/registries/local');
    assert.deepEqual(Object.keys(body.links), ['openapi', 'metadata', 'health', 'agents', 'discover', 'fhir', 'console', 'docs']);
    for (const name of ['openapi', 'metadata', 'health', 'fhir']) assert.equal((await fetch(body.links[name])).status, 200, name);
    // The API itself still wants a credential; the landing only points at it.
    assert.equal((await fetch(body.links.agents)).status, 401);
    // Not an API operation: the OpenAPI document leaves it out.
    const document = (await (await fetch(body.links.openapi)).json()) as any;
    assert.equal(document.paths['/'], undefined);
    // Other methods on / are still unknown.
    assert.equal((await fetch(`${baseUrl}/`, { method: 'DELETE' })).status, 404);
  });
});
