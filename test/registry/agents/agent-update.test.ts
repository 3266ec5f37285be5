import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { systemContext } from '../../../src/core/call-context.ts';
import { systemClock } from '../../../src/core/clock.ts';
import { runWrite } from '../../../src/registry/storage/write-unit.ts';
import { BACKENDS, buildTestRegistry, registerAgent, ulidOf, writeHeaders } from '../../helpers/registry.ts';

function updateBody(record: Record<string, any>, changes: Record<string, unknown> = {}) {
  const { display_name, endpoints, capabilities, trust, owner, description, policy_tags } = record;
  return {
    display_name,
    endpoints: endpoints.map(({ health: _health, ...endpoint }: Record<string, unknown>) => endpoint),
    capabilities,
    trust,
    owner,
    ...(description === null ? {} : { description }),
    policy_tags,
    ...changes,
  };
}

for (const backend of BACKENDS) {
  describe(`agent update and preconditions [${backend}]`, () => {
    test('PUT with the current ETag replaces the record and increments the version', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const agent = await registerAgent(registry);
      const response = await registry.call({
        method: 'PUT',
        url: `/v1/agents/${ulidOf(agent.agent_id)}`,
        headers: writeHeaders({ 'if-match': '"1"' }),
        payload: updateBody(agent, { display_name: 'Renamed', endpoints: [{ url: 'https://b.example.org/rpc', protocol: 'fhir-rest' }] }),
      });
      assert.equal(response.status, 200);
      assert.equal(response.headers.etag, '"2"');
      assert.equal(response.body.version, 2);
      assert.equal(response.body.display_name, 'Renamed');
      assert.equal(response.body.endpoints.length, 1);
      assert.equal(response.body.endpoints[0].priority, 100);
      assert.equal(response.body.created_at, agent.created_at);
      assert.notEqual(response.body.updated_at, undefined);
      const read = await registry.call({ method: 'GET', url: `/v1/agents/${ulidOf(agent.agent_id)}` });
      assert.deepEqual(read.body, response.body);
    });

    test('PUT is a full replacement: optional fields left out are cleared, the owner is kept', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const agent = await registerAgent(registry);
      const { owner: _owner, description: _description, policy_tags: _tags, ...rest } = updateBody(agent);
      const response = await registry.call({ method: 'PUT', url: `/v1/agents/${ulidOf(agent.agent_id)}`, headers: writeHeaders({ 'if-match': '*' }), payload: rest });
      assert.equal(response.status, 200);
      assert.equal(response.body.description, null);
      assert.deepEqual(response.body.policy_tags, {});
      assert.deepEqual(response.body.owner, agent.owner);
    });

    test('PUT without If-Match is 428, with a stale one 412, and neither changes the record', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const agent = await registerAgent(registry);
      const url = `/v1/agents/${ulidOf(agent.agent_id)}`;
      const missing = await registry.call({ method: 'PUT', url, headers: writeHeaders(), payload: updateBody(agent) });
      assert.equal(missing.status, 428);
      assert.equal(missing.body.error.code, 'PRECONDITION_REQUIRED');
      for (const ifMatch of ['"2"', '"0"', 'W/"7"', 'garbage', '"1x"']) {
        const stale = await registry.call({ method: 'PUT', url, headers: writeHeaders({ 'if-match': ifMatch }), payload: updateBody(agent) });
        assert.equal(stale.status, 412, ifMatch);
        assert.equal(stale.body.error.code, 'PRECONDITION_FAILED');
        assert.equal(stale.body.error.details.current_etag, '"1"');
      }
      const list = await registry.call({ method: 'PUT', url, headers: writeHeaders({ 'if-match': '"5", W/"1"' }), payload: updateBody(agent) });
      assert.equal(list.status, 200, 'a list of tags matches when one of them does');
      const read = await registry.call({ method: 'GET', url });
      assert.equal(read.body.version, 2);
    });

    test('PUT without If-Match is 428 even when its body is invalid too: the precondition is checked first', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const agent = await registerAgent(registry);
      const url = `/v1/agents/${ulidOf(agent.agent_id)}`;
      const both = await registry.call({ method: 'PUT', url, headers: writeHeaders(), payload: { display_name: 42 } });
      assert.equal(both.status, 428);
      assert.equal(both.body.error.code, 'PRECONDITION_REQUIRED');
      const invalidOnly = await registry.call({ method: 'PUT', url, headers: writeHeaders({ 'if-match': '"1"' }), payload: { display_name: 42 } });
      assert.equal(invalidOnly.status, 422, 'with If-Match the body is validated as before');
    });

    test('PUT of an unknown agent is 404 before any precondition', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const agent = await registerAgent(registry);
      const response = await registry.call({
        method: 'PUT',
        url: '/v1/agents/01J00000000000000000000000',
        headers: writeHeaders({ 'if-match': '"1"' }),
        payload: updateBody(agent),
      });
      assert.equal(response.status, 404);
    });

    test('a write that loses the race after its precondition passed is 409 VERSION_CONFLICT', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const agent = await registerAgent(registry);
      const ulid = ulidOf(agent.agent_id);
      const input = updateBody(agent, { display_name: 'Winner' });
      // The precondition of the losing request matched version 1; the winner commits version 2 first.
      await runWrite(registry.storage, (unit) => registry.app.ward.agents.update(unit, systemContext(systemClock), ulid, 1, input));
      await assert.rejects(
        runWrite(registry.storage, (unit) => registry.app.ward.agents.update(unit, systemContext(systemClock), ulid, 1, { ...input, display_name: 'Loser' })),
        (error: { code?: string }) => error.code === 'VERSION_CONFLICT',
      );
      const read = await registry.call({ method: 'GET', url: `/v1/agents/${ulid}` });
      assert.equal(read.body.display_name, 'Winner');
    });

    test('of many concurrent PUTs against the same version exactly one wins; the others get 409 or 412', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const agent = await registerAgent(registry);
      const url = `/v1/agents/${ulidOf(agent.agent_id)}`;
      const responses = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          registry.call({ method: 'PUT', url, headers: writeHeaders({ 'if-match': '"1"' }), payload: updateBody(agent, { display_name: `Writer ${i}` }) }),
        ),
      );
      const statuses = responses.map((r) => r.status);
      assert.equal(statuses.filter((s) => s === 200).length, 1, statuses.join());
      assert.ok(statuses.every((s) => s === 200 || s === 409 || s === 412), statuses.join());
      const read = await registry.call({ method: 'GET', url });
      assert.equal(read.body.version, 2);
    });

    test('revoked and retired agents cannot be updated: 409 AGENT_NOT_MUTABLE', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      for (const [action, payload] of [['revoke', { reason: 'compromised' }], ['retire', {}]] as const) {
        const agent = await registerAgent(registry);
        const url = `/v1/agents/${ulidOf(agent.agent_id)}`;
        await registry.call({ method: 'POST', url: `${url}/${action}`, headers: writeHeaders(), payload });
        const response = await registry.call({ method: 'PUT', url, headers: writeHeaders({ 'if-match': '*' }), payload: updateBody(agent) });
        assert.equal(response.status, 409, action);
        assert.equal(response.body.error.code, 'AGENT_NOT_MUTABLE');
      }
    });

    test('PUT refuses a jurisdiction field, a changed owner organisation and a name clash', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const agent = await registerAgent(registry, { display_name: 'First' });
      await registerAgent(registry, { display_name: 'Second' });
      const url = `/v1/agents/${ulidOf(agent.agent_id)}`;
      const withJurisdiction = await registry.call({ method: 'PUT', url, headers: writeHeaders({ 'if-match': '*' }), payload: { ...updateBody(agent), jurisdiction: 'FR' } });
      assert.equal(withJurisdiction.status, 422);
      assert.deepEqual(withJurisdiction.body.error.details.errors, [{ in: 'body', pointer: '/jurisdiction', reason: 'is not an allowed property' }]);
      const newOrg = await registry.call({ method: 'PUT', url, headers: writeHeaders({ 'if-match': '*' }), payload: updateBody(agent, { owner: { org_id: 'someone-else' } }) });
      assert.equal(newOrg.status, 422);
      assert.equal(newOrg.body.error.details.errors[0].pointer, '/owner/org_id');
      const clash = await registry.call({ method: 'PUT', url, headers: writeHeaders({ 'if-match': '*' }), payload: updateBody(agent, { display_name: 'Second' }) });
      assert.equal(clash.status, 409);
      assert.equal(clash.body.error.code, 'AGENT_CONFLICT');
    });

    test('an update re-runs trust validation: bad material fails the record', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const agent = await registerAgent(registry);
      const response = await registry.call({
        method: 'PUT',
        url: `/v1/agents/${ulidOf(agent.agent_id)}`,
        headers: writeHeaders({ 'if-match': '"1"' }),
        payload: updateBody(agent, { trust: { certificates: ['not a certificate'] } }),
      });
      assert.equal(response.status, 200);
      assert.equal(response.body.trust_validation.state, 'failed');
      assert.equal(response.body.trust_validation.errors[0].pointer, '/trust/certificates/0');
    });

    test('a replayed PUT answers from the stored response even though the ETag has moved on', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const agent = await registerAgent(registry);
      const headers = writeHeaders({ 'if-match': '"1"' });
      const request = { method: 'PUT' as const, url: `/v1/agents/${ulidOf(agent.agent_id)}`, headers, payload: updateBody(agent, { display_name: 'Once' }) };
      const first = await registry.call(request);
      const replay = await registry.call(request);
      assert.equal(first.status, 200);
      assert.equal(replay.status, 200);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.deepEqual(replay.body, first.body);
      assert.equal((await registry.call({ method: 'GET', url: request.url })).body.version, 2);
    });
  });
}
