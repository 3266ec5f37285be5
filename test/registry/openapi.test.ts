import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { buildTestRegistry } from '../helpers/registry.ts';

describe('OpenAPI document', () => {
  test('is a valid OpenAPI 3.0.3 document according to the official schema', async (t) => {
    const registry = await buildTestRegistry(t, 'sqlite');
    const document = (await registry.call({ method: 'GET', url: '/v1/openapi.json' })).body;
    assert.equal(document.openapi, '3.0.3');
    const result = await new Validator().validate(document);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
  });

  test('lists every registered route with its method', async (t) => {
    const registry = await buildTestRegistry(t, 'sqlite');
    const document = (await registry.call({ method: 'GET', url: '/v1/openapi.json' })).body;
    assert.ok(registry.app.ward.routes.length >= 10);
    for (const route of registry.app.ward.routes) {
      const path = route.url.replace(/:([A-Za-z_]+)/g, '{$1}');
      assert.ok(document.paths[path], `${path} is missing`);
      assert.ok(document.paths[path][route.method.toLowerCase()], `${route.method} ${path} is missing`);
    }
  });

  test('every operation documents its error responses with the envelope', async (t) => {
    const registry = await buildTestRegistry(t, 'sqlite');
    const document = (await registry.call({ method: 'GET', url: '/v1/openapi.json' })).body;
    for (const [path, operations] of Object.entries<Record<string, any>>(document.paths)) {
      if (path === '/.well-known/jwks.json' || path === '/v1/openapi.json') continue;
      for (const [method, operation] of Object.entries<any>(operations)) {
        // The FHIR directory answers its errors as OperationOutcomes in FHIR JSON (docs/fhir.md).
        const envelope = path.startsWith('/fhir/')
          ? operation.responses['422']?.content?.['application/fhir+json']?.schema?.properties?.resourceType
          : operation.responses['422']?.content?.['application/json']?.schema?.properties?.error;
        assert.ok(envelope, `${method} ${path} lacks the 422 envelope`);
      }
    }
  });

  test('state-changing operations document the X-Idempotency-Key header', async (t) => {
    const registry = await buildTestRegistry(t, 'sqlite');
    const document = (await registry.call({ method: 'GET', url: '/v1/openapi.json' })).body;
    // Contract §2: routing advice changes nothing and ignores the key; nor does asking for a trust mark's status (OIDF §8.4).
    const readOnlyPosts = new Set(['/v1/route', '/v1/oidf/trust-mark-status']);
    for (const [path, operations] of Object.entries<Record<string, any>>(document.paths)) {
      if (readOnlyPosts.has(path)) continue;
      for (const method of ['post', 'put']) {
        const operation = operations[method];
        if (!operation) continue;
        const names = (operation.parameters ?? []).filter((p: any) => p.in === 'header').map((p: any) => p.name);
        assert.ok(names.includes('x-idempotency-key'), `${method} ${path}`);
      }
    }
  });
});
