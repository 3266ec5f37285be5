import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { requiredScope } from '../../src/registry/credentials/route-scopes.ts';
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
        for (const tag of operation.tags ?? []) if (!declared.has(tag)) problems.push(`${where}: tag ${tag} is not declared in src/registry/openapi/openapi-routes.ts`);
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

  test('names the registry it describes: servers is its listening address, or REGISTRY_PUBLIC_URL; info has contact and license', async (t) => {
    const registry = await buildTestRegistry(t, 'sqlite');
    const address = await registry.app.listen({ host: '127.0.0.1', port: 0 });
    const document = await (await fetch(`${address}/v1/openapi.json`)).json();
    assert.deepEqual(document.servers.map((server: { url: string }) => server.url), [address]);
    assert.ok(document.info.contact && document.info.license.name === 'Apache-2.0');
    const published = await buildTestRegistry(t, 'sqlite', { env: { REGISTRY_PUBLIC_URL: 'https://registry.example.org/' } });
    assert.equal((await published.call({ method: 'GET', url: '/v1/openapi.json' })).body.servers[0].url, 'https://registry.example.org');
  });

  test('security follows the scope table: an API key in every mode, the token scheme of the running mode, 401 everywhere and 403 where a scope is needed', async (t) => {
    const jwtEnv = { REGISTRY_AUTH_MODE: 'jwt', REGISTRY_JWT_JWKS_URI: 'http://127.0.0.1:9/jwks.json', REGISTRY_JWT_ISSUER: 'https://issuer.example.org', REGISTRY_JWT_AUDIENCE: 'ward' };
    const expected = [
      { env: {} as Record<string, string>, schemes: ['apiKey'], anonymous: true },
      { env: jwtEnv, schemes: ['apiKey', 'bearerJwt'], anonymous: false },
      { env: { ...jwtEnv, REGISTRY_AUTH_MODE: 'dpop' }, schemes: ['apiKey', 'dpop'], anonymous: false },
    ];
    for (const { env, schemes, anonymous } of expected) {
      const registry = await buildTestRegistry(t, 'sqlite', { env });
      const document = (await registry.call({ method: 'GET', url: '/v1/openapi.json' })).body;
      assert.deepEqual(Object.keys(document.components.securitySchemes).sort(), schemes, JSON.stringify(env));
      for (const [path, operations] of Object.entries<Record<string, any>>(document.paths)) {
        for (const [method, operation] of Object.entries<any>(operations)) {
          const where = `${method} ${path} (${env.REGISTRY_AUTH_MODE ?? 'disabled'})`;
          const scope = requiredScope(method.toUpperCase(), path.replace(/\{([^}]+)\}/g, ':$1'));
          assert.equal(operation['x-required-scope'], scope, where);
          const requirements = operation.security.map((requirement: object) => Object.keys(requirement).join('+'));
          assert.deepEqual(requirements, [...(scope === 'public' || anonymous ? [''] : []), ...schemes], where);
          assert.ok(operation.responses['401'], `${where}: no 401`);
          if (scope !== 'public') assert.ok(operation.responses['403'], `${where}: no 403`);
        }
      }
    }
  });

  test('the answers that follow from a request document their statuses: 404 with a path parameter, 409 with an idempotency key, 412 with If-Match', async (t) => {
    const registry = await buildTestRegistry(t, 'sqlite');
    const document = (await registry.call({ method: 'GET', url: '/v1/openapi.json' })).body;
    for (const [path, operations] of Object.entries<Record<string, any>>(document.paths)) {
      for (const [method, operation] of Object.entries<any>(operations)) {
        const parameters = new Set((operation.parameters ?? []).map((p: { in: string; name: string }) => `${p.in}:${p.name}`));
        const statuses = new Set(Object.keys(operation.responses));
        const where = `${method} ${path}`;
        for (const status of ['422', '429', '503']) assert.ok(statuses.has(status), `${where}: ${status}`);
        if ([...parameters].some((p) => String(p).startsWith('path:'))) assert.ok(statuses.has('404'), `${where}: 404`);
        if (parameters.has('header:x-idempotency-key')) assert.ok(statuses.has('409') && statuses.has('400'), `${where}: 400, 409`);
        if (parameters.has('header:if-match')) assert.ok(statuses.has('412'), `${where}: 412`);
      }
    }
    assert.ok(document.paths['/v1/agents/{id}'].put.responses['428']);
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
