import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { systemContext } from '../../../src/core/call-context.ts';
import { systemClock } from '../../../src/core/clock.ts';
import { observeCommits, runWrite } from '../../../src/registry/storage/write-unit.ts';
import { BACKENDS, agentBody, buildTestRegistry, registerAgent, ulidOf, writeHeaders } from '../../helpers/registry.ts';

for (const backend of BACKENDS) {
  describe(`agent lifecycle [${backend}]`, () => {
    test('registering returns 201 with the record, a Location and an ETag of version 1', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const body = agentBody({ jurisdiction: 'gb' });
      const response = await registry.call({ method: 'POST', url: '/v1/agents', headers: writeHeaders(), payload: body });
      assert.equal(response.status, 201);
      const record = response.body;
      assert.match(record.agent_id, /^registry:\/\/gb\/agents\/[0-9A-HJKMNP-TV-Z]{26}$/);
      assert.equal(response.headers.location, `/v1/agents/${ulidOf(record.agent_id)}`);
      assert.equal(response.headers.etag, '"1"');
      assert.equal(record.jurisdiction, 'GB');
      assert.equal(record.status, 'active');
      assert.equal(record.version, 1);
      assert.equal(record.display_name, body.display_name);
      assert.deepEqual(record.owner, body.owner);
      assert.equal(record.description, body.description);
      assert.deepEqual(record.policy_tags, body.policy_tags);
      assert.match(record.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.equal(record.created_at, record.updated_at);
      assert.deepEqual(record.trust_validation.state, 'validated');
      assert.equal(record.trust_validation.level, 0);
      assert.deepEqual(record.endpoints[0].health, { status: 'unknown', checked_at: null, latency_ms: null, reason: 'no_health_url' }, 'an endpoint without a health_url says why it is not probed');
    });

    test('defaults fill endpoint priority and weight, capability lists and token binding', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const record = await registerAgent(registry, {
        endpoints: [{ url: 'mllp://hl7.example.org:2575', protocol: 'hl7v2-mllp' }],
        capabilities: { stream_resume: true },
        trust: {},
      });
      assert.deepEqual(record.endpoints[0], {
        url: 'mllp://hl7.example.org:2575',
        protocol: 'hl7v2-mllp',
        priority: 100,
        weight: 100,
        health: { status: 'unknown', checked_at: null, latency_ms: null, reason: 'no_health_url' },
      });
      assert.deepEqual(record.capabilities, { stream_resume: true, protocols: [], skills: [], features: [], token_binding: 'none' });
      assert.deepEqual(record.trust, { certificates: [], signatures: [], attestations: [] });
    });

    test('an agent is found by its ULID and by its percent-encoded URI, and not under a foreign jurisdiction', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const record = await registerAgent(registry);
      const byUlid = await registry.call({ method: 'GET', url: `/v1/agents/${ulidOf(record.agent_id)}` });
      const byUri = await registry.call({ method: 'GET', url: `/v1/agents/${encodeURIComponent(record.agent_id)}` });
      const byLowerUlid = await registry.call({ method: 'GET', url: `/v1/agents/${ulidOf(record.agent_id).toLowerCase()}` });
      assert.equal(byUlid.status, 200);
      assert.deepEqual(byUri.body, byUlid.body);
      assert.equal(byUri.headers.etag, '"1"');
      assert.equal(byLowerUlid.status, 200);
      const foreign = record.agent_id.replace('registry://gb/', 'registry://fr/');
      const wrong = await registry.call({ method: 'GET', url: `/v1/agents/${encodeURIComponent(foreign)}` });
      assert.equal(wrong.status, 404);
      assert.equal(wrong.body.error.code, 'AGENT_NOT_FOUND');
    });

    test('an unknown or malformed agent id is 404 AGENT_NOT_FOUND in the envelope', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      for (const id of ['01J00000000000000000000000', 'not-an-id', encodeURIComponent('registry://gb/agents/xyz')]) {
        const response = await registry.call({ method: 'GET', url: `/v1/agents/${id}` });
        assert.equal(response.status, 404, id);
        assert.deepEqual(response.body, {
          error: { code: 'AGENT_NOT_FOUND', message: 'No such agent.', details: response.body.error.details, retryable: false, retry_after_ms: null },
        });
      }
    });

    test('a jurisdiction that is two letters but not an ISO 3166-1 code is refused with a pointer', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      for (const jurisdiction of ['UK', 'XK', 'ZZ']) {
        const response = await registry.call({ method: 'POST', url: '/v1/agents', headers: writeHeaders(), payload: agentBody({ jurisdiction }) });
        assert.equal(response.status, 422, jurisdiction);
        assert.equal(response.body.error.code, 'VALIDATION_ERROR');
        assert.deepEqual(response.body.error.details.errors.map((e: { pointer: string }) => e.pointer), ['/jurisdiction']);
      }
      const list = await registry.call({ method: 'GET', url: '/v1/agents?jurisdiction=UK' });
      assert.equal(list.status, 422);
      assert.equal(list.body.error.details.errors[0].in, 'query');
    });

    test('a second non-revoked agent with the same organisation and name is 409 AGENT_CONFLICT', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const first = await registerAgent(registry, { display_name: 'Consent service' });
      const clash = await registry.call({ method: 'POST', url: '/v1/agents', headers: writeHeaders(), payload: agentBody({ display_name: 'Consent service' }) });
      assert.equal(clash.status, 409);
      assert.equal(clash.body.error.code, 'AGENT_CONFLICT');
      const otherOrg = await registry.call({
        method: 'POST',
        url: '/v1/agents',
        headers: writeHeaders(),
        payload: agentBody({ display_name: 'Consent service', owner: { org_id: 'org-other' } }),
      });
      assert.equal(otherOrg.status, 201);
      const revoke = await registry.call({ method: 'POST', url: `/v1/agents/${ulidOf(first.agent_id)}/revoke`, headers: writeHeaders(), payload: { reason: 'replaced' } });
      assert.equal(revoke.status, 200);
      const again = await registry.call({ method: 'POST', url: '/v1/agents', headers: writeHeaders(), payload: agentBody({ display_name: 'Consent service' }) });
      assert.equal(again.status, 201, 'a revoked agent frees its name');
    });

    test('a name taken leaves nothing of the refused agent behind, also when both registrations share one batch', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const first = await registerAgent(registry, { display_name: 'Triage desk' });
      const clash = await registry.call({ method: 'POST', url: '/v1/agents', headers: writeHeaders(), payload: agentBody({ display_name: 'Triage desk' }) });
      assert.equal(clash.status, 409);
      assert.deepEqual(clash.body.error.details, { org_id: first.owner.org_id, display_name: 'Triage desk' });
      // Two write units queued in the same turn share one transaction: the second's insert meets the
      // first's row, not yet committed.
      const batches: number[] = [];
      t.after(observeCommits(registry.storage, (units) => batches.push(units)));
      const ctx = systemContext(systemClock);
      const together = await Promise.allSettled(
        [1, 2].map(() => runWrite(registry.storage, (unit) => registry.app.ward.agents.register(unit, ctx, agentBody({ display_name: 'Intake desk' }) as never))),
      );
      assert.deepEqual(batches, [2], 'one transaction held both');
      assert.equal(together[0]?.status, 'fulfilled');
      assert.equal(together[1]?.status === 'rejected' && (together[1].reason as { code?: string }).code, 'AGENT_CONFLICT');
      const agents = await registry.storage.db.selectFrom('agents').select(['id', 'display_name']).execute();
      assert.deepEqual(agents.map((agent) => agent.display_name).sort(), ['Intake desk', 'Triage desk']);
      const skillOwners = await registry.storage.db.selectFrom('agent_skills').select('agent_id').distinct().execute();
      assert.deepEqual(skillOwners.map((row) => row.agent_id).sort(), agents.map((agent) => agent.id).sort(), 'no skill rows of a refused agent');
    });

    test('status moves follow the contract and every other move is 409 INVALID_STATE_TRANSITION', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const act = async (id: string, action: string, reason?: string) =>
        registry.call({ method: 'POST', url: `/v1/agents/${ulidOf(id)}/${action}`, headers: writeHeaders(), ...(reason ? { payload: { reason } } : {}) });
      const agent = await registerAgent(registry);
      const suspended = await act(agent.agent_id, 'suspend', 'security review');
      assert.equal(suspended.status, 200);
      assert.equal(suspended.body.status, 'suspended');
      assert.equal(suspended.body.status_reason, 'security review');
      assert.equal(suspended.body.version, 2);
      assert.equal(suspended.headers.etag, '"2"');
      assert.equal((await act(agent.agent_id, 'suspend', 'again')).body.error.code, 'INVALID_STATE_TRANSITION');
      const reinstated = await act(agent.agent_id, 'reinstate');
      assert.equal(reinstated.body.status, 'active');
      assert.equal(reinstated.body.status_reason, null);
      assert.equal((await act(agent.agent_id, 'reinstate')).status, 409);
      const retired = await act(agent.agent_id, 'retire');
      assert.equal(retired.body.status, 'retired');
      for (const action of ['suspend', 'reinstate', 'retire']) {
        const refused = await act(agent.agent_id, action, 'x');
        assert.equal(refused.status, 409, action);
        assert.equal(refused.body.error.code, 'INVALID_STATE_TRANSITION');
        assert.deepEqual(refused.body.error.details, { from: 'retired', action });
      }
      const revoked = await act(agent.agent_id, 'revoke', 'key compromise');
      assert.equal(revoked.body.status, 'revoked');
      assert.equal(revoked.body.version, 5);
      for (const action of ['suspend', 'reinstate', 'retire', 'revoke']) {
        assert.equal((await act(agent.agent_id, action, 'x')).body.error.code, 'INVALID_STATE_TRANSITION', action);
      }
      const suspendedThenRevoked = await registerAgent(registry);
      await act(suspendedThenRevoked.agent_id, 'suspend', 'x');
      assert.equal((await act(suspendedThenRevoked.agent_id, 'retire')).body.status, 'retired');
      const direct = await registerAgent(registry);
      assert.equal((await act(direct.agent_id, 'revoke', 'x')).body.status, 'revoked');
    });

    test('suspend and revoke need a reason; reinstate and retire accept an empty body', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const agent = await registerAgent(registry);
      for (const action of ['suspend', 'revoke']) {
        const response = await registry.call({ method: 'POST', url: `/v1/agents/${ulidOf(agent.agent_id)}/${action}`, headers: writeHeaders(), payload: {} });
        assert.equal(response.status, 422, action);
        assert.deepEqual(response.body.error.details.errors, [{ in: 'body', pointer: '/reason', reason: 'is required' }]);
      }
      const bad = await registry.call({ method: 'POST', url: `/v1/agents/${ulidOf(agent.agent_id)}/suspend`, headers: writeHeaders(), payload: { reason: 7 } });
      assert.equal(bad.status, 422);
      const retire = await registry.call({ method: 'POST', url: `/v1/agents/${ulidOf(agent.agent_id)}/retire`, headers: writeHeaders() });
      assert.equal(retire.status, 200);
      const missing = await registry.call({ method: 'POST', url: `/v1/agents/01J00000000000000000000000/suspend`, headers: writeHeaders(), payload: { reason: 'x' } });
      assert.equal(missing.status, 404);
    });
  });
}
