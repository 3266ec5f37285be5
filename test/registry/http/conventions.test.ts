import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BACKENDS, agentBody, buildTestRegistry, writeHeaders } from '../../helpers/registry.ts';

/** Asserts the contract §2 envelope exactly: five fields, nothing else. */
function assertEnvelope(body: any, code: string, retryable = false) {
  assert.deepEqual(Object.keys(body), ['error']);
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'details', 'message', 'retry_after_ms', 'retryable']);
  assert.equal(body.error.code, code);
  assert.equal(typeof body.error.message, 'string');
  assert.equal(body.error.retryable, retryable);
}

for (const backend of BACKENDS) {
  describe(`HTTP conventions [${backend}]`, () => {
    test('an unknown route is 404 ROUTE_NOT_FOUND in the envelope, for any method', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      for (const method of ['GET', 'POST', 'DELETE', 'PATCH'] as const) {
        const response = await registry.call({ method, url: '/v1/nothing-here' });
        assert.equal(response.status, 404);
        assertEnvelope(response.body, 'ROUTE_NOT_FOUND');
      }
      const wrongMethod = await registry.call({ method: 'DELETE', url: '/v1/agents' });
      assert.equal(wrongMethod.status, 404);
      assertEnvelope(wrongMethod.body, 'ROUTE_NOT_FOUND');
    });

    test('malformed JSON, a prototype-poisoning key and an empty JSON body are 400 MALFORMED_JSON', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      for (const payload of ['{"display_name": ', '[1,2', '{"__proto__": {"x": 1}}', '']) {
        const response = await registry.call({
          method: 'POST',
          url: '/v1/agents',
          headers: writeHeaders({ 'content-type': 'application/json' }),
          payload,
        });
        assert.equal(response.status, 400, payload);
        assertEnvelope(response.body, 'MALFORMED_JSON');
      }
    });

    test('a body that is not JSON is 415 UNSUPPORTED_MEDIA_TYPE', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'multipart/form-data; boundary=x']) {
        const response = await registry.call({ method: 'POST', url: '/v1/agents', headers: writeHeaders({ 'content-type': type }), payload: 'a=b' });
        assert.equal(response.status, 415, type);
        assertEnvelope(response.body, 'UNSUPPORTED_MEDIA_TYPE');
      }
      const charset = await registry.call({
        method: 'POST',
        url: '/v1/agents',
        headers: writeHeaders({ 'content-type': 'application/json; charset=utf-8' }),
        payload: JSON.stringify(agentBody()),
      });
      assert.equal(charset.status, 201);
    });

    test('a body over 1 MiB is 413 PAYLOAD_TOO_LARGE and nothing is stored', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const payload = JSON.stringify(agentBody({ description: 'x'.repeat(1024 * 1024) }));
      const response = await registry.call({ method: 'POST', url: '/v1/agents', headers: writeHeaders({ 'content-type': 'application/json' }), payload });
      assert.equal(response.status, 413);
      assertEnvelope(response.body, 'PAYLOAD_TOO_LARGE');
      assert.equal((await registry.call({ method: 'GET', url: '/v1/agents' })).body.total_count, 0);
    });

    test('validation failures are 422 with every problem as a JSON pointer and a reason', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const response = await registry.call({
        method: 'POST',
        url: '/v1/agents',
        headers: writeHeaders(),
        payload: {
          ...agentBody(),
          display_name: 42,
          endpoints: [{ url: 'not a url', protocol: 'mesh-a2a-jsonrpc', priority: -1, weight: 0 }],
          capabilities: { skills: ['Bad Skill'], token_binding: 'magic' },
          unexpected: true,
        },
      });
      assert.equal(response.status, 422);
      assertEnvelope(response.body, 'VALIDATION_ERROR');
      const pointers = response.body.error.details.errors.map((e: { pointer: string }) => e.pointer).sort();
      assert.deepEqual(pointers, [
        '/capabilities/skills/0',
        '/capabilities/token_binding',
        '/display_name',
        '/endpoints/0/priority',
        '/endpoints/0/url',
        '/endpoints/0/weight',
        '/unexpected',
      ]);
      for (const error of response.body.error.details.errors) {
        assert.equal(error.in, 'body');
        assert.equal(typeof error.reason, 'string');
      }
    });

    test('wrong types are refused, not coerced: a string where a number belongs is 422', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const body = agentBody({ endpoints: [{ url: 'https://a.example.org', protocol: 'fhir-rest', priority: '5' }] });
      const response = await registry.call({ method: 'POST', url: '/v1/agents', headers: writeHeaders(), payload: body });
      assert.equal(response.status, 422);
      assert.equal(response.body.error.details.errors[0].pointer, '/endpoints/0/priority');
    });

    test('required fields, endpoint bounds and element sizes are enforced', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ endpoints: [] }, '/endpoints'],
        [{ endpoints: Array.from({ length: 17 }, () => ({ url: 'https://a.example.org', protocol: 'fhir-rest' })) }, '/endpoints'],
        [{ display_name: '' }, '/display_name'],
        [{ trust: { certificates: ['x'.repeat(16385)] } }, '/trust/certificates/0'],
        [{ policy_tags: { purpose_of_use: ['marketing'] } }, '/policy_tags/purpose_of_use/0'],
      ];
      for (const [override, pointer] of cases) {
        const response = await registry.call({ method: 'POST', url: '/v1/agents', headers: writeHeaders(), payload: agentBody(override) });
        assert.equal(response.status, 422, pointer);
        assert.ok(response.body.error.details.errors.some((e: { pointer: string }) => e.pointer === pointer), JSON.stringify(response.body));
      }
      for (const field of ['display_name', 'jurisdiction', 'endpoints', 'capabilities', 'trust']) {
        const { [field]: _omitted, ...rest } = agentBody();
        const response = await registry.call({ method: 'POST', url: '/v1/agents', headers: writeHeaders(), payload: rest });
        assert.equal(response.status, 422, field);
        assert.deepEqual(response.body.error.details.errors, [{ in: 'body', pointer: `/${field}`, reason: 'is required' }]);
      }
    });

    test('query parameters are validated: limit outside 1..100 and unknown parameters are 422', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      for (const query of ['limit=0', 'limit=101', 'limit=abc', 'status=deleted', 'colour=blue']) {
        const response = await registry.call({ method: 'GET', url: `/v1/agents?${query}` });
        assert.equal(response.status, 422, query);
        assert.equal(response.body.error.details.errors[0].in, 'query');
      }
    });

    test('every response carries a request id, echoing a well-formed incoming one', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const echoed = await registry.call({ method: 'GET', url: '/v1/agents', headers: { 'x-request-id': 'trace-123' } });
      assert.equal(echoed.headers['x-request-id'], 'trace-123');
      const fresh = await registry.call({ method: 'GET', url: '/v1/nope', headers: { 'x-request-id': 'bad id with spaces' } });
      assert.match(String(fresh.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    });
  });
}
