/**
 * A client generated from the served OpenAPI document (issue 34): test/generated/registry-openapi.d.ts
 * is what openapi-typescript makes of it (regenerated and compared here, so it cannot drift), and
 * openapi-fetch drives a real registry on loopback with those types. `npm run check` type-checks
 * this file against them: a renamed field or operation breaks the build, not just a test.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import createClient from 'openapi-fetch';
import { GENERATED_TYPES_PATH, renderTypes, servedDocument } from '../../scripts/openapi-types-render.ts';
import type { components, paths } from '../generated/registry-openapi.d.ts';
import { BACKENDS, buildTestRegistry } from '../helpers/registry.ts';

type Registration = components['schemas']['AgentRegistration'];

const ROOT = new URL('../../', import.meta.url).pathname;

const registration = (): Registration => ({
  display_name: `Consent checker ${randomUUID().slice(0, 8)}`,
  jurisdiction: 'GB',
  endpoints: [{ url: 'https://agents.example.org/consent', protocol: 'mesh-a2a-jsonrpc', region: 'uk-south' }],
  // Extra boolean flags are allowed beside the lists; TypeScript cannot say both in one type (an index
  // signature of booleans beside array members), so the generated type needs this cast (docs/api.md).
  capabilities: { protocols: ['mesh-a2a-jsonrpc'], skills: ['consent.verify'] } as Registration['capabilities'],
  trust: { certificates: [], signatures: [], attestations: [] },
  owner: { org_id: 'org-nhs-example', org_name: 'Example NHS Trust' },
});

describe('the generated types', () => {
  test('are what openapi-typescript makes of the document the registry serves now (run `npm run openapi:types` after changing a route schema)', async () => {
    const committed = readFileSync(`${ROOT}${GENERATED_TYPES_PATH}`, 'utf8');
    assert.equal(await renderTypes(await servedDocument()), committed);
  });
});

for (const backend of BACKENDS) {
  describe(`a registry driven through openapi-fetch with the generated types [${backend}]`, () => {
    test('register, get with its ETag, replace with If-Match (and be refused with a stale one), discover, route, and an error envelope', async (t) => {
      const registry = await buildTestRegistry(t, backend, { env: { REGISTRY_HEALTH_PROBES: 'false' } });
      const client = createClient<paths>({ baseUrl: await registry.app.listen({ host: '127.0.0.1', port: 0 }) });

      const body = registration();
      const registered = await client.POST('/v1/agents', { params: { header: { 'x-idempotency-key': randomUUID() } }, body });
      assert.equal(registered.response.status, 201);
      assert.ok(registered.data, JSON.stringify(registered.error));
      const agentId = registered.data.agent_id;
      const id = agentId.slice(agentId.lastIndexOf('/') + 1);
      assert.equal(registered.response.headers.get('location'), `/v1/agents/${id}`);

      const got = await client.GET('/v1/agents/{id}', { params: { path: { id } } });
      const etag = got.response.headers.get('etag');
      assert.equal(etag, '"1"');
      assert.equal(got.data?.display_name, body.display_name);
      assert.equal(got.data?.trust_validation.state, 'validated');

      const { jurisdiction: _fixed, ...writable } = body;
      const replacement = { ...writable, description: 'Checks consent directives before a record is shared.' };
      const replaced = await client.PUT('/v1/agents/{id}', {
        params: { path: { id }, header: { 'if-match': etag ?? '', 'x-idempotency-key': randomUUID() } },
        body: replacement,
      });
      assert.equal(replaced.response.status, 200, JSON.stringify(replaced.error));
      assert.equal(replaced.data?.version, 2);
      assert.equal(replaced.data?.description, replacement.description);
      assert.equal(replaced.response.headers.get('etag'), '"2"');

      const stale = await client.PUT('/v1/agents/{id}', {
        params: { path: { id }, header: { 'if-match': '"1"', 'x-idempotency-key': randomUUID() } },
        body: replacement,
      });
      assert.equal(stale.response.status, 412);
      assert.equal(stale.data, undefined);
      assert.equal(stale.error?.error.code, 'PRECONDITION_FAILED');
      assert.equal(stale.error?.error.details.current_etag, '"2"');

      const discovered = await client.GET('/v1/discover', { params: { query: { capability: 'consent.verify', jurisdiction: 'GB' } } });
      assert.equal(discovered.response.status, 200, JSON.stringify(discovered.error));
      assert.deepEqual(discovered.data?.results.map((result) => result.agent_id), [agentId]);
      assert.equal(typeof discovered.data?.results[0]?.score, 'number');

      const routed = await client.POST('/v1/route', { body: { target: agentId } });
      assert.equal(routed.response.status, 200, JSON.stringify(routed.error));
      assert.equal(routed.data?.resolved_target, agentId);
      assert.equal(routed.data?.selected.url, body.endpoints[0]?.url);
      assert.equal(routed.data?.trust_bundle.subject, agentId);

      const missing = await client.GET('/v1/agents/{id}', { params: { path: { id: '01J00000000000000000000000' } } });
      assert.equal(missing.response.status, 404);
      assert.equal(missing.error?.error.code, 'AGENT_NOT_FOUND');
      assert.equal(missing.error?.error.retryable, false);
      assert.equal(missing.error?.error.retry_after_ms, null);

      const invalid = await client.POST('/v1/route', { body: { target: agentId, capability: 'consent.verify' } });
      assert.equal(invalid.response.status, 422);
      assert.equal(invalid.error?.error.code, 'VALIDATION_ERROR');
    });
  });
}
