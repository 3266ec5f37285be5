import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SCOPES } from '../../../src/core/call-context.ts';
import { requiredScope } from '../../../src/registry/credentials/route-scopes.ts';
import { buildTestRegistry } from '../../helpers/registry.ts';
import { createKey } from '../../helpers/keys.ts';

describe('scopes on every route', () => {
  test('every route in the OpenAPI document refuses a caller without its scope, before reading the request', async (t) => {
    const registry = await buildTestRegistry(t, 'sqlite');
    const document = (await registry.call({ method: 'GET', url: '/v1/openapi.json' })).body;
    const keys = new Map<string, string>();
    for (const scope of SCOPES) {
      const others = SCOPES.filter((s) => s !== scope);
      keys.set(scope, (await createKey(registry, { scopes: others, tier: 'enterprise' })).raw_key);
    }
    let checked = 0;
    for (const [path, operations] of Object.entries<Record<string, unknown>>(document.paths)) {
      for (const method of Object.keys(operations)) {
        const scope = requiredScope(method.toUpperCase(), path.replace(/\{([^}]+)\}/g, ':$1'));
        if (scope === 'public') continue;
        const url = path.replace(/\{[^}]+\}/g, '01J00000000000000000000000');
        const response = await registry.call({ method: method.toUpperCase() as 'GET', url, headers: { authorization: `Bearer ${keys.get(scope)}` } });
        assert.equal(response.status, 403, `${method} ${path}`);
        if (path.startsWith('/fhir/')) {
          // The FHIR directory's refusals are OperationOutcomes (docs/fhir.md): the code and the scope in words.
          assert.equal(response.body.issue[0].details.coding[0].code, 'INSUFFICIENT_SCOPE', `${method} ${path}`);
          assert.match(response.body.issue[0].diagnostics, new RegExp(scope), `${method} ${path}`);
        } else {
          assert.deepEqual(response.body.error.details, { required_scope: scope }, `${method} ${path}`);
        }
        checked += 1;
      }
    }
    assert.ok(checked >= 20, `only ${checked} operations checked`);
  });

  test('the contract places reads, writes and administration', () => {
    assert.equal(requiredScope('GET', '/v1/agents'), 'registry:read');
    assert.equal(requiredScope('POST', '/v1/route'), 'registry:read');
    assert.equal(requiredScope('GET', '/v1/metadata'), 'registry:read');
    assert.equal(requiredScope('GET', '/.well-known/agent-registry'), 'public');
    assert.equal(requiredScope('POST', '/v1/agents'), 'registry:write');
    assert.equal(requiredScope('PUT', '/v1/agents/:id'), 'registry:write');
    assert.equal(requiredScope('POST', '/v1/agents/:id/revoke'), 'registry:write');
    assert.equal(requiredScope('POST', '/v1/admin/billing/api-keys'), 'registry:admin');
    assert.equal(requiredScope('GET', '/v1/admin/billing/tiers'), 'registry:admin');
    assert.equal(requiredScope('POST', '/v1/registries'), 'registry:admin');
    assert.throws(() => requiredScope('POST', '/v1/something-new'), /no scope decided/);
  });

  test('public routes answer without a credential, and still refuse a bad one', async (t) => {
    const registry = await buildTestRegistry(t, 'sqlite');
    assert.equal((await registry.call({ method: 'GET', url: '/.well-known/agent-registry' })).status, 200);
    assert.equal((await registry.call({ method: 'GET', url: '/.well-known/agent-registry', headers: { 'x-api-key': 'rk_bogus' } })).status, 401);
  });
});
