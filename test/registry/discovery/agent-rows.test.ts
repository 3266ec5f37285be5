import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createAgentRows } from '../../../src/registry/discovery/agent-rows.ts';
import { BACKENDS, buildTestRegistry, registerAgent, ulidOf, writeHeaders, type TestRegistry } from '../../helpers/registry.ts';

// Discovery keeps the agent rows it read and reuses them while their version is current
// (src/registry/discovery/agent-rows.ts). The answer cache is off in every test here, so each
// answer is built again and only the kept rows can make it stale.
const NO_ANSWER_CACHE = { REGISTRY_DISCOVERY_CACHE_ENTRIES: '0' };

async function discover(registry: TestRegistry, skill: string): Promise<Array<{ agent_id: string; display_name: string; version: number }>> {
  const response = await registry.call({ method: 'GET', url: `/v1/discover?capability=${skill}&limit=50` });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.results;
}

const stats = (registry: TestRegistry) => registry.app.ward.discovery.keptRowStats();

async function registerSkilled(registry: TestRegistry, skill: string, count: number) {
  const agents = [];
  for (let i = 0; i < count; i++) {
    agents.push(await registerAgent(registry, { display_name: `Kept rows agent ${skill} ${i}`, capabilities: { protocols: ['mesh-a2a-jsonrpc'], skills: [skill] } }));
  }
  return agents;
}

for (const backend of BACKENDS) {
  describe(`discovery's kept agent rows [${backend}]`, () => {
    test('a second answer over the same agents reads no agent row again', async (t) => {
      const registry = await buildTestRegistry(t, backend, { env: NO_ANSWER_CACHE });
      await registerSkilled(registry, 'kept.first', 3);
      const first = await discover(registry, 'kept.first');
      assert.equal(first.length, 3);
      const afterFirst = stats(registry);
      assert.equal(afterFirst.misses, 3);
      const second = await discover(registry, 'kept.first');
      assert.deepEqual(second, first);
      assert.equal(stats(registry).misses, 3, 'no row read again');
      assert.equal(stats(registry).hits, afterFirst.hits + 3);
      const metrics = (await registry.app.inject({ method: 'GET', url: '/metrics' })).body;
      assert.match(metrics, /ward_discovery_kept_rows_total\{result="read"[^}]*\} 3\n/);
      assert.match(metrics, /ward_discovery_kept_rows_total\{result="kept"[^}]*\} 3\n/);
      assert.match(metrics, /ward_discovery_kept_rows\{[^}]*\} 3\n/);
      // The answer cache (off here) counts through the same kind of counter: two answers, two misses.
      assert.match(metrics, /ward_discovery_cache_requests_total\{result="miss"[^}]*\} 2\n/);
      assert.match(metrics, /ward_discovery_cache_requests_total\{result="hit"[^}]*\} 0\n/);
    });

    test('after a commit elsewhere, kept rows whose version is unchanged are checked and reused', async (t) => {
      const registry = await buildTestRegistry(t, backend, { env: NO_ANSWER_CACHE });
      await registerSkilled(registry, 'kept.check', 2);
      await discover(registry, 'kept.check');
      // Another agent's registration moves the event sequence; these two rows did not change.
      await registerSkilled(registry, 'kept.other', 1);
      const before = stats(registry);
      const again = await discover(registry, 'kept.check');
      assert.equal(again.length, 2);
      assert.equal(stats(registry).misses, before.misses, 'versions checked, documents not read');
      assert.equal(stats(registry).hits, before.hits + 2);
    });

    test('an updated agent is answered as it is now, never as kept', async (t) => {
      const registry = await buildTestRegistry(t, backend, { env: NO_ANSWER_CACHE });
      const [agent] = await registerSkilled(registry, 'kept.update', 1);
      const [before] = await discover(registry, 'kept.update');
      assert.equal(before?.display_name, 'Kept rows agent kept.update 0');
      const { display_name: _name, endpoints, capabilities, trust, owner, policy_tags } = agent;
      const put = await registry.call({
        method: 'PUT',
        url: `/v1/agents/${ulidOf(agent.agent_id)}`,
        headers: writeHeaders({ 'if-match': `"${agent.version}"` }),
        payload: {
          display_name: 'Renamed while kept',
          endpoints: endpoints.map(({ health: _health, ...endpoint }: Record<string, unknown>) => endpoint),
          capabilities,
          trust,
          owner,
          policy_tags,
        },
      });
      assert.equal(put.status, 200, JSON.stringify(put.body));
      const [after] = await discover(registry, 'kept.update');
      assert.equal(after?.display_name, 'Renamed while kept');
      assert.equal(after?.version, (before?.version ?? 0) + 1);
    });

    test('a suspended agent leaves the answer, and comes back as it is when reinstated', async (t) => {
      const registry = await buildTestRegistry(t, backend, { env: NO_ANSWER_CACHE });
      const [agent] = await registerSkilled(registry, 'kept.status', 1);
      assert.equal((await discover(registry, 'kept.status')).length, 1);
      const id = ulidOf(agent.agent_id);
      const suspend = await registry.call({ method: 'POST', url: `/v1/agents/${id}/suspend`, headers: writeHeaders(), payload: { reason: 'maintenance window' } });
      assert.equal(suspend.status, 200, JSON.stringify(suspend.body));
      assert.deepEqual(await discover(registry, 'kept.status'), []);
      const reinstate = await registry.call({ method: 'POST', url: `/v1/agents/${id}/reinstate`, headers: writeHeaders(), payload: {} });
      assert.equal(reinstate.status, 200, JSON.stringify(reinstate.body));
      const [back] = await discover(registry, 'kept.status');
      assert.equal(back?.version, agent.version + 2);
    });

    test('the number kept is bounded, and 0 keeps none; answers are the same either way', async (t) => {
      const bounded = await buildTestRegistry(t, backend, { env: { ...NO_ANSWER_CACHE, REGISTRY_DISCOVERY_KEPT_ROWS: '2' } });
      const none = await buildTestRegistry(t, backend, { env: { ...NO_ANSWER_CACHE, REGISTRY_DISCOVERY_KEPT_ROWS: '0' } });
      for (const registry of [bounded, none]) await registerSkilled(registry, 'kept.bound', 5);
      const fromBounded = await discover(bounded, 'kept.bound');
      const fromNone = await discover(none, 'kept.bound');
      assert.equal(fromBounded.length, 5);
      assert.deepEqual(fromBounded.map((r) => r.display_name), fromNone.map((r) => r.display_name));
      assert.deepEqual(await discover(bounded, 'kept.bound'), fromBounded);
      assert.equal(stats(bounded).entries, 2);
      assert.equal(stats(none).entries, 0);
      await discover(none, 'kept.bound');
      assert.equal(stats(none).misses, 10, 'every answer reads every row');
    });

    test('without a commit a kept row is trusted for 30 s at most, then checked by version and updated_at', async (t) => {
      const registry = await buildTestRegistry(t, backend, { env: NO_ANSWER_CACHE });
      const [agent] = await registerSkilled(registry, 'kept.age', 1);
      const id = ulidOf(agent.agent_id);
      let now = 1_000_000;
      const rows = createAgentRows({ db: registry.storage.db, maxEntries: 10, committedSeq: () => 7, now: () => now });
      const [first] = await rows.read([id]);
      // A database restored under a running instance: the same version, another write. Nothing moves the sequence.
      await registry.storage.db
        .updateTable('agents')
        .set({ display_name: 'Restored copy', updated_at: '2030-01-01T00:00:00.000Z' })
        .where('id', '=', id)
        .execute();
      now += 30_000;
      assert.equal((await rows.read([id]))[0], first, 'within 30 s of its check the row is used as kept');
      now += 1;
      const [after] = await rows.read([id]);
      assert.notEqual(after, first);
      assert.equal(after?.display_name, 'Restored copy');
      assert.equal(after?.version, first?.version);
    });

    test('beyond the bound the least recently used row goes first; a row found kept counts as used', async (t) => {
      const registry = await buildTestRegistry(t, backend, { env: NO_ANSWER_CACHE });
      const [a, b, c] = (await registerSkilled(registry, 'kept.lru', 3)).map((agent) => ulidOf(agent.agent_id)) as [string, string, string];
      const rows = createAgentRows({ db: registry.storage.db, maxEntries: 2, committedSeq: () => 1, now: () => 0 });
      await rows.read([a, b]);
      await rows.read([a]); // a is now the more recently used
      await rows.read([c]); // so b goes
      const before = rows.stats();
      await rows.read([a, c]);
      assert.equal(rows.stats().misses, before.misses, 'a and c were kept');
      await rows.read([b]);
      assert.equal(rows.stats().misses, before.misses + 1, 'b was read again');
      assert.equal(rows.stats().entries, 2);
    });

    test('a row gone from the database is left out and no longer kept', async (t) => {
      const registry = await buildTestRegistry(t, backend, { env: NO_ANSWER_CACHE });
      const agents = await registerSkilled(registry, 'kept.gone', 2);
      const ids = agents.map((agent) => ulidOf(agent.agent_id));
      let generation = 1;
      const rows = createAgentRows({ db: registry.storage.db, maxEntries: 10, committedSeq: () => generation, now: () => 0 });
      assert.deepEqual((await rows.read(ids)).map((row) => row.id), ids);
      await registry.storage.db.deleteFrom('agent_skills').where('agent_id', '=', ids[0] as string).execute();
      await registry.storage.db.deleteFrom('endpoint_health').where('agent_id', '=', ids[0] as string).execute();
      await registry.storage.db.deleteFrom('agents').where('id', '=', ids[0] as string).execute();
      // Unchanged generation: the kept rows are trusted without a query (nothing was committed through the registry).
      assert.equal((await rows.read(ids)).length, 2);
      generation = 2;
      assert.deepEqual((await rows.read(ids)).map((row) => row.id), [ids[1]]);
      assert.equal(rows.stats().entries, 1);
    });
  });
}
