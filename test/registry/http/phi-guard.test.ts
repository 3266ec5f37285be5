import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { loadConfig } from '../../../src/core/config.ts';
import { buildRegistry } from '../../../src/registry/app.ts';
import type { InjectOptions } from 'fastify';
import fc from 'fast-check';
import { generatedRegistration } from '../../core/phi/generated-ordinary.ts';
import { BLOCKED, ORDINARY, type BlockedSample, type OrdinarySample } from '../../core/phi/corpus.ts';
import { BACKENDS, agentBody, buildTestRegistry, openTestStorage, registerAgent, ulidOf, writeHeaders } from '../../helpers/registry.ts';

for (const backend of BACKENDS) {
  describe(`PHI guard on the registry routes [${backend}]`, () => {
    test('PHI in a registration body is 422 PHI_DETECTED naming detector and pointer, never the value', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const response = await registry.call({
        method: 'POST',
        url: '/v1/agents',
        headers: writeHeaders(),
        payload: agentBody({ owner: { org_id: 'org-1', operator: 'MRN: 12345678' } }),
      });
      assert.equal(response.status, 422);
      assert.equal(response.body.error.code, 'PHI_DETECTED');
      assert.deepEqual(response.body.error.details.findings, [{ detector: 'mrn', in: 'body', pointer: '/owner/operator' }]);
      assert.ok(!JSON.stringify(response.body).includes('12345678'));
    });

    test('PHI in a header is refused, never echoed as the request id; credentials and ordinary headers pass', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const refused = await registry.app.inject({ method: 'GET', url: '/v1/agents', headers: { 'x-request-id': 'MRN:00482913' } });
      assert.equal(refused.statusCode, 422);
      const body = refused.json() as any;
      assert.equal(body.error.code, 'PHI_DETECTED');
      assert.deepEqual(body.error.details.findings, [{ detector: 'mrn', in: 'header', pointer: '/x-request-id' }]);
      assert.notEqual(refused.headers['x-request-id'], 'MRN:00482913');
      assert.doesNotMatch(refused.body + JSON.stringify(refused.headers), /00482913/);
      const idempotency = await registry.call({ method: 'POST', url: '/v1/agents', headers: { 'x-idempotency-key': 'NHS 943 476 5919' }, payload: agentBody() });
      assert.equal(idempotency.status, 422);
      assert.deepEqual(idempotency.body.error.details.findings, [{ detector: 'uk_nhs_number', in: 'header', pointer: '/x-idempotency-key' }]);
      const ordinary = await registry.app.inject({
        method: 'GET',
        url: '/v1/agents',
        headers: {
          'x-request-id': 'req-2025-06-17-0001',
          'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/156.0.8078.73',
          traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
          authorization: 'Bearer eyJzdWIiOiIxMjMtNDUtNjc4OSJ9.e30.sig',
        },
      });
      assert.notEqual(ordinary.statusCode, 422, ordinary.body);
      assert.equal(ordinary.headers['x-request-id'], 'req-2025-06-17-0001');
    });

    test('PHI is caught before validation, in query strings and in path parameters too', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const invalidAndPhi = await registry.call({
        method: 'POST',
        url: '/v1/agents',
        headers: writeHeaders(),
        payload: { display_name: 'x', notes: { resourceType: 'Patient', name: [{ family: 'Doe' }] } },
      });
      assert.equal(invalidAndPhi.body.error.code, 'PHI_DETECTED', 'the guard runs before schema validation');
      const query = await registry.call({ method: 'GET', url: '/v1/agents?cursor=' + encodeURIComponent('SSN 123-45-6789') });
      assert.equal(query.body.error.code, 'PHI_DETECTED');
      assert.deepEqual(query.body.error.details.findings[0].in, 'query');
      const path = await registry.call({ method: 'GET', url: '/v1/agents/' + encodeURIComponent('dob: 1980-03-12') });
      assert.equal(path.body.error.code, 'PHI_DETECTED');
      assert.equal(path.body.error.details.findings[0].in, 'path');
    });

    test('every blocked sample of the corpus is refused by the registry and nothing is stored or emitted', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      for (const sample of BLOCKED) {
        const response = await registry.call(requestFor(sample));
        assert.equal(response.status, 422, sample.name);
        assert.equal(response.body.error.code, 'PHI_DETECTED', sample.name);
        assert.ok(
          response.body.error.details.findings.some((f: { detector: string }) => f.detector === sample.detector),
          sample.name,
        );
      }
      assert.equal((await registry.storage.db.selectFrom('agents').selectAll().execute()).length, 0);
      assert.equal((await registry.storage.db.selectFrom('events').selectAll().execute()).length, 0);
      assert.equal((await registry.storage.db.selectFrom('idempotency_keys').selectAll().execute()).length, 0);
    });

    test('no ordinary sample of the corpus trips the guard, and the schema-valid ones register', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      for (const sample of ORDINARY.filter((s) => s.in !== 'body')) {
        const response = await registry.call(requestFor(sample));
        assert.notEqual(response.body?.error?.code, 'PHI_DETECTED', sample.name);
      }
      const bodies = ORDINARY.filter((s) => s.in === 'body' && isRegistration(s.input));
      let registered = 0;
      for (const [index, sample] of bodies.entries()) {
        const body = { ...(sample.input as Record<string, unknown>), display_name: `Ordinary agent ${index}` };
        const response = await registry.call({ method: 'POST', url: '/v1/agents', headers: writeHeaders(), payload: body });
        assert.notEqual(response.body.error?.code, 'PHI_DETECTED', sample.name);
        if (response.status === 201) registered += 1;
      }
      // Some samples put values the policy-tag schema refuses (objects, nulls); the rest must register.
      assert.ok(registered >= 30, `only ${registered} of ${bodies.length} registered`);
    });

    test('generated legitimate registrations all register', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      // A fixed seed, so a failure names a body that fails again.
      const bodies = fc.sample(generatedRegistration, { numRuns: 60, seed: 20261126 });
      for (const [index, body] of bodies.entries()) {
        const payload = { ...body, display_name: `${body.display_name as string} ${index}` };
        const response = await registry.call({ method: 'POST', url: '/v1/agents', headers: writeHeaders(), payload });
        assert.equal(response.status, 201, `${JSON.stringify(response.body)} for ${JSON.stringify(payload)}`);
      }
    });

    test('PHI on a status change reason is refused and the status stays as it was', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const agent = await registerAgent(registry);
      const response = await registry.call({
        method: 'POST',
        url: `/v1/agents/${ulidOf(agent.agent_id)}/suspend`,
        headers: writeHeaders(),
        payload: { reason: 'patient DOB 12/03/1980 leaked' },
      });
      assert.equal(response.body.error.code, 'PHI_DETECTED');
      assert.equal((await registry.call({ method: 'GET', url: `/v1/agents/${ulidOf(agent.agent_id)}` })).body.status, 'active');
    });

    test('numeric positions are not read as text, but free-text parameters still are', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      // 9434765919 passes the NHS mod-11 check; as a sequence number or a page size it is just a number.
      const stream = await registry.call({ method: 'GET', url: '/v1/events/stream?cursor=9434765919' });
      assert.equal(stream.body.error.code, 'VALIDATION_ERROR', 'judged as a position (beyond the last event), not as PHI');
      const proof = await registry.call({ method: 'GET', url: '/v1/transparency/proof/inclusion?leaf_index=9434765919&tree_size=9434765920' });
      assert.notEqual(proof.body?.error?.code, 'PHI_DETECTED');
      const text = await registry.call({ method: 'GET', url: '/v1/discover?capability=a.b&residency=' + encodeURIComponent('nhs 943 476 5919') });
      assert.equal(text.body.error.code, 'PHI_DETECTED');
      const notDigits = await registry.call({ method: 'GET', url: '/v1/events/stream?cursor=' + encodeURIComponent('NHS 943 476 5919') });
      assert.equal(notDigits.body.error.code, 'PHI_DETECTED');
    });

    test('bodies nested deeper than the scan can see are refused', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      let deep: unknown = 'NHS number 943 476 5919';
      for (let i = 0; i < 70; i += 1) deep = { nested: deep };
      const body = agentBody({ trust: { jwks: { keys: [{ kty: 'EC', deep }] } } });
      const response = await registry.call({ method: 'POST', url: '/v1/agents', headers: writeHeaders(), payload: body });
      assert.equal(response.status, 422);
      assert.equal((await registry.storage.db.selectFrom('agents').selectAll().execute()).length, 0);
    });

    test('a refused request leaves no trace of the value in the logs', async (t) => {
      const lines: string[] = [];
      const stream = new Writable({ write: (chunk, _encoding, done) => void (lines.push(String(chunk)), done()) });
      const storage = await openTestStorage(t, backend);
      const app = await buildRegistry({
        config: loadConfig({ REGISTRY_ENV: 'test', REGISTRY_LOG_LEVEL: 'trace', ...storage.env }),
        storage,
        logStream: stream,
      });
      t.after(() => app.close());
      await app.inject({ method: 'POST', url: '/v1/agents?note=' + encodeURIComponent('SSN 123-45-6789'), headers: writeHeaders(), payload: agentBody({ description: 'NHS 943 476 5919' }) });
      await app.inject({ method: 'GET', url: '/v1/agents/' + encodeURIComponent('MRN 99887766') });
      const log = lines.join('');
      assert.ok(lines.length > 0, 'the requests were logged');
      for (const secret of ['123-45-6789', '943 476 5919', '9434765919', '99887766']) assert.ok(!log.includes(secret), secret);
    });
  });
}

/** A corpus sample as a request: a body to register, a list query, or headers on a list query. */
function requestFor(sample: BlockedSample | OrdinarySample): InjectOptions {
  switch (sample.in) {
    case 'body':
      return { method: 'POST', url: '/v1/agents', headers: writeHeaders({ 'content-type': 'application/json' }), payload: JSON.stringify(sample.input) };
    case 'query':
      return { method: 'GET', url: `/v1/agents?${new URLSearchParams(toQuery(sample.input))}` };
    case 'header':
      return { method: 'GET', url: '/v1/agents', headers: sample.input as Record<string, string> };
  }
}

function toQuery(input: unknown): Array<[string, string]> {
  return Object.entries(input as Record<string, unknown>).flatMap(([name, value]) =>
    (Array.isArray(value) ? value : [value]).map((v): [string, string] => [name, String(v)]),
  );
}

function isRegistration(input: unknown): boolean {
  return typeof input === 'object' && input !== null && 'endpoints' in input && 'jurisdiction' in input;
}
