import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { dereference } from '../helpers/openapi-document.ts';
import { buildTestRegistry } from '../helpers/registry.ts';

describe('OpenAPI document', () => {
  test('is a valid OpenAPI 3.0.3 document according to the official schema', async (t) => {
    const registry = await buildTestRegistry(t, 'sqlite');
    const document = (await registry.call({ method: 'GET', url: '/v1/openapi.json' })).body;
    assert.equal(document.openapi, '3.0.3');
    const result = await new Validator().validate(document);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
  });

  test('every operation has a unique camelCase operationId, a summary, a description, declared tags and a success response', async (t) => {
    const registry = await buildTestRegistry(t, 'sqlite');
    const document = (await registry.call({ method: 'GET', url: '/v1/openapi.json' })).body;
    const declared = new Set(document.tags.map((tag: { name: string }) => tag.name));
    const seen = new Map<string, string>();
    const problems: string[] = [];
    for (const [path, operations] of Object.entries<Record<string, any>>(document.paths)) {
      for (const [method, operation] of Object.entries<any>(operations)) {
        const where = `${method.toUpperCase()} ${path}`;
        const id = operation.operationId;
        if (typeof id !== 'string' || !/^[a-z][a-zA-Z0-9]*$/.test(id)) problems.push(`${where}: operationId ${id} is not camelCase`);
        else if (seen.has(id)) problems.push(`${where}: operationId ${id} is also ${seen.get(id)}`);
        else seen.set(id, where);
        if (!operation.summary?.trim()) problems.push(`${where}: no summary`);
        if (!operation.description?.trim()) problems.push(`${where}: no description`);
        if (!Array.isArray(operation.tags) || operation.tags.length === 0) problems.push(`${where}: no tags`);
        for (const tag of operation.tags ?? []) if (!declared.has(tag)) problems.push(`${where}: tag ${tag} is not declared in src/registry/routes/openapi.ts`);
        if (!Object.keys(operation.responses ?? {}).some((status) => /^2/.test(status))) problems.push(`${where}: no success response`);
      }
    }
    assert.deepEqual(problems, []);
    assert.ok(seen.size >= 60, `${seen.size} operations`);
    for (const id of ['registerAgent', 'discoverAgents', 'routeAdvice', 'createApiKey', 'getAgent', 'replaceAgent']) assert.ok(seen.has(id), id);
  });

  test('the shared types are named components, each used by $ref, and no schema is written out twice', async (t) => {
    const registry = await buildTestRegistry(t, 'sqlite');
    const document = (await registry.call({ method: 'GET', url: '/v1/openapi.json' })).body;
    const names = Object.keys(document.components.schemas);
    for (const name of ['AgentRecord', 'Endpoint', 'Capabilities', 'TrustMaterial', 'ErrorEnvelope', 'DiscoveryResponse', 'RoutingResponse', 'Event', 'ApiKey', 'PricingTier', 'RegistryRecord', 'TrustAnchor', 'TrustBundle', 'ComputerUseRun']) {
      assert.ok(names.includes(name), `${name} is not a component`);
    }
    const text = JSON.stringify(document);
    for (const name of names) assert.ok(text.includes(`"#/components/schemas/${name}"`), `${name} is never referenced`);
    for (const name of Object.keys(document.components.responses)) assert.ok(text.includes(`"#/components/responses/${name}"`), `${name} is never referenced`);
    // Outside the components, an object schema of any size written out twice should have been a component.
    const seen = new Map<string, string>();
    const repeated: string[] = [];
    const walk = (node: unknown, where: string): void => {
      if (typeof node !== 'object' || node === null) return;
      const schema = node as Record<string, unknown>;
      const json = JSON.stringify(schema);
      if (schema.type === 'object' && json.length > 200) {
        if (seen.has(json)) repeated.push(`${where} repeats ${seen.get(json)}`);
        else seen.set(json, where);
      }
      for (const [key, value] of Object.entries(schema)) walk(value, `${where}/${key}`);
    };
    walk(document.paths, '#/paths');
    for (const [name, schema] of Object.entries(document.components.schemas)) walk(schema, `#/components/schemas/${name}`);
    assert.deepEqual(repeated, []);
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
    const document = dereference((await registry.call({ method: 'GET', url: '/v1/openapi.json' })).body);
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
    // Contract §2: routing advice changes nothing and ignores the key.
    const readOnlyPosts = new Set(['/v1/route']);
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
