import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { listEvents } from '../../../src/registry/storage/stores/event-store.ts';
import { runWrite } from '../../../src/registry/storage/write-unit.ts';
import { EVENT_TYPES } from '../../../src/contract/event-types.ts';
import { BACKENDS, agentBody, buildTestRegistry, registerAgent, ulidOf, writeHeaders } from '../../helpers/registry.ts';

for (const backend of BACKENDS) {
  describe(`event log [${backend}]`, () => {
    test('every agent change writes its events with the record version, in order', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const agent = await registerAgent(registry);
      const url = `/v1/agents/${ulidOf(agent.agent_id)}`;
      await registry.call({ method: 'POST', url: `${url}/suspend`, headers: writeHeaders(), payload: { reason: 'review' } });
      await registry.call({ method: 'POST', url: `${url}/reinstate`, headers: writeHeaders() });
      const { health: _h, ...endpoint } = agent.endpoints[0];
      await registry.call({
        method: 'PUT',
        url,
        headers: writeHeaders({ 'if-match': '"3"' }),
        payload: { display_name: 'New name', endpoints: [endpoint], capabilities: agent.capabilities, trust: agent.trust },
      });
      await registry.call({ method: 'POST', url: `${url}/retire`, headers: writeHeaders() });
      await registry.call({ method: 'POST', url: `${url}/revoke`, headers: writeHeaders(), payload: { reason: 'decommissioned' } });
      const events = await listEvents(registry.storage.db, { afterSeq: 0, limit: 100 });
      assert.deepEqual(
        events.map((e) => [e.seq, e.type, e.data.version]),
        [
          [1, 'agent.registered', 1],
          [2, 'agent.trust_validated', 1],
          [3, 'agent.suspended', 2],
          [4, 'agent.reinstated', 3],
          [5, 'agent.updated', 4],
          [6, 'agent.trust_validated', 4],
          [7, 'agent.retired', 5],
          [8, 'agent.revoked', 6],
        ],
      );
      for (const event of events) {
        assert.equal(event.subject, agent.agent_id);
        assert.equal(event.data.agent_id, agent.agent_id);
        assert.ok((EVENT_TYPES as readonly string[]).includes(event.type));
        assert.match(event.occurred_at, /Z$/);
      }
      assert.deepEqual(events[2]?.data, { agent_id: agent.agent_id, version: 2, from: 'active', to: 'suspended', reason: 'review' });
    });

    test('failed trust validation is an agent.trust_failed event naming the error codes only', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const response = await registry.call({
        method: 'POST',
        url: '/v1/agents',
        headers: writeHeaders(),
        payload: agentBody({ trust: { certificates: ['MIIBroken'], signatures: ['a.b.c'] } }),
      });
      assert.equal(response.body.trust_validation.state, 'failed');
      const events = await listEvents(registry.storage.db, { afterSeq: 0, limit: 10 });
      assert.equal(events[1]?.type, 'agent.trust_failed');
      assert.deepEqual(events[1]?.data.error_codes, ['CERT_UNPARSEABLE', 'SIGNATURE_MALFORMED']);
      assert.ok(!JSON.stringify(events).includes('MIIBroken'));
    });

    test('refused and failed requests write no event', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const agent = await registerAgent(registry);
      await registry.call({ method: 'POST', url: '/v1/agents', headers: writeHeaders(), payload: agentBody({ jurisdiction: 'UK' }) });
      await registry.call({ method: 'POST', url: `/v1/agents/${ulidOf(agent.agent_id)}/reinstate`, headers: writeHeaders() });
      await registry.call({ method: 'PUT', url: `/v1/agents/${ulidOf(agent.agent_id)}`, headers: writeHeaders({ 'if-match': '"9"' }), payload: agentBody() });
      const events = await listEvents(registry.storage.db, { afterSeq: 0, limit: 10 });
      assert.equal(events.length, 2);
    });

    test('a write that fails after emitting rolls back its change and its events together', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      await assert.rejects(
        runWrite(registry.storage, async (unit) => {
          unit.emit({ type: 'agent.updated', subject: 'x', data: {}, occurred_at: new Date().toISOString() });
          throw new Error('boom');
        }),
      );
      assert.equal((await listEvents(registry.storage.db, { afterSeq: 0, limit: 10 })).length, 0);
      await registerAgent(registry);
      const events = await listEvents(registry.storage.db, { afterSeq: 0, limit: 10 });
      assert.deepEqual(events.map((e) => e.seq), [1, 2], 'no sequence number was burnt by the rollback');
    });

    test('concurrent writers produce a gap-free sequence with every change present exactly once', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const results = await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          registry.call({ method: 'POST', url: '/v1/agents', headers: writeHeaders(), payload: agentBody({ display_name: `Concurrent ${i}` }) }),
        ),
      );
      assert.ok(results.every((r) => r.status === 201));
      const events = await listEvents(registry.storage.db, { afterSeq: 0, limit: 1000 });
      assert.deepEqual(events.map((e) => e.seq), Array.from({ length: 48 }, (_, i) => i + 1));
      const registered = events.filter((e) => e.type === 'agent.registered').map((e) => e.subject).sort();
      assert.deepEqual(registered, results.map((r) => r.body.agent_id).sort());
      // Each registration's two events are adjacent: a unit's events are never interleaved with another's.
      for (let i = 0; i < events.length; i += 2) assert.equal(events[i]?.subject, events[i + 1]?.subject);
    });
  });
}
