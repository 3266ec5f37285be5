import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { systemClock } from '../../src/core/clock.ts';
import { seedMeshAgents } from '../../src/service/seed-mesh-agents.ts';
import { BACKENDS, buildTestRegistry, writeHeaders } from '../helpers/registry.ts';
import { meshAgentRegistrations } from '../../src/mesh/registration.ts';

for (const backend of BACKENDS) {
  describe(`seeding the mesh agents [${backend}]`, () => {
    test('the seed writes through the agent service what a registration through the API writes, once, and follows a moved gateway', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const ward = registry.app.ward;
      const events = () => registry.storage.db.selectFrom('events').select(['seq', 'type', 'subject']).orderBy('seq').execute();
      const leaves = async () => (await registry.storage.db.selectFrom('ledger_leaves').select('seq').execute()).length;

      // The same body registered through the API, on another registry: the events a registration makes.
      const viaApi = await buildTestRegistry(t, backend);
      const [body] = meshAgentRegistrations({ gatewayUrl: 'http://127.0.0.1:8100', aliases: ['triage'] });
      const created = await viaApi.call({ method: 'POST', url: '/v1/agents', headers: writeHeaders(), payload: body as object });
      assert.equal(created.status, 201);
      const apiTypes = (await viaApi.storage.db.selectFrom('events').select('type').orderBy('seq').execute()).map((e) => e.type);

      const ids = await seedMeshAgents(ward, 'http://127.0.0.1:8100', systemClock);
      const seeded = await events();
      assert.equal(ids.length, 3);
      for (const id of ids) {
        assert.deepEqual(seeded.filter((e) => e.subject === id).map((e) => e.type), apiTypes, `${id}: the events of an API registration`);
      }
      assert.equal(await leaves(), seeded.length, 'every event is a ledger leaf');

      assert.deepEqual(await seedMeshAgents(ward, 'http://127.0.0.1:8100', systemClock), ids, 'the same agents again');
      assert.equal((await events()).length, seeded.length, 'and nothing written');

      assert.deepEqual(await seedMeshAgents(ward, 'http://127.0.0.1:8200', systemClock), ids);
      const moved = (await events()).slice(seeded.length);
      assert.deepEqual(moved.filter((e) => e.type === 'agent.updated').map((e) => e.subject).sort(), [...ids].sort());
      for (const id of ids) {
        const record = await ward.agents.getByRef(id);
        assert.equal(record.version, 2);
        assert.ok(record.endpoints.every((endpoint) => endpoint.url.startsWith('http://127.0.0.1:8200/')));
      }
      assert.equal(await leaves(), seeded.length + moved.length);
    });

    test('a record an older start registered without a health URL is given one', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const ward = registry.app.ward;
      for (const body of meshAgentRegistrations({ gatewayUrl: 'http://127.0.0.1:8100' })) {
        const old = { ...body, endpoints: body.endpoints.map(({ health_url: _health, ...endpoint }) => endpoint) };
        assert.equal((await registry.call({ method: 'POST', url: '/v1/agents', headers: writeHeaders(), payload: old as object })).status, 201);
      }
      const ids = await seedMeshAgents(ward, 'http://127.0.0.1:8100', systemClock);
      assert.equal(ids.length, 3);
      for (const id of ids) {
        const record = await ward.agents.getByRef(id);
        assert.equal(record.version, 2, 'updated once');
        const alias = (record.policy_tags as { mesh_alias: string }).mesh_alias;
        assert.deepEqual(record.endpoints.map((endpoint) => endpoint.health_url), [`http://127.0.0.1:8100/rpc/${alias}/health`]);
      }
    });
  });
}
