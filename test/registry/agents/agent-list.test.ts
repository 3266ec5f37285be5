import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { encodeCursor } from '../../../src/contract/cursor.ts';
import { BACKENDS, buildTestRegistry, registerAgent, ulidOf, writeHeaders } from '../../helpers/registry.ts';

for (const backend of BACKENDS) {
  describe(`agent listing [${backend}]`, () => {
    test('pages walk every agent once in creation order, with total_count and a null cursor at the end', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const created = [];
      for (let i = 0; i < 7; i += 1) created.push((await registerAgent(registry, { display_name: `Agent ${i}` })).agent_id);
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const query: string = cursor ? `limit=3&cursor=${encodeURIComponent(cursor)}` : 'limit=3';
        const page = await registry.call({ method: 'GET', url: `/v1/agents?${query}` });
        assert.equal(page.status, 200);
        assert.equal(page.body.total_count, 7);
        assert.ok(page.body.agents.length <= 3);
        seen.push(...page.body.agents.map((a: { agent_id: string }) => a.agent_id));
        cursor = page.body.next_cursor;
        pages += 1;
      } while (cursor);
      assert.equal(pages, 3);
      assert.deepEqual(seen, created);
    });

    test('the default page size is 20 and an exact final page has no next cursor', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      for (let i = 0; i < 21; i += 1) await registerAgent(registry);
      const first = await registry.call({ method: 'GET', url: '/v1/agents' });
      assert.equal(first.body.agents.length, 20);
      assert.notEqual(first.body.next_cursor, null);
      const second = await registry.call({ method: 'GET', url: `/v1/agents?cursor=${first.body.next_cursor}` });
      assert.equal(second.body.agents.length, 1);
      assert.equal(second.body.next_cursor, null);
      const exact = await registry.call({ method: 'GET', url: '/v1/agents?limit=21' });
      assert.equal(exact.body.next_cursor, null);
    });

    test('filters by jurisdiction (either case) and status, and total_count counts the filtered set', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const gb = await registerAgent(registry, { jurisdiction: 'GB' });
      await registerAgent(registry, { jurisdiction: 'fr' });
      await registerAgent(registry, { jurisdiction: 'FR' });
      await registry.call({ method: 'POST', url: `/v1/agents/${ulidOf(gb.agent_id)}/suspend`, headers: writeHeaders(), payload: { reason: 'audit' } });
      const fr = await registry.call({ method: 'GET', url: '/v1/agents?jurisdiction=fr' });
      assert.equal(fr.body.total_count, 2);
      assert.ok(fr.body.agents.every((a: { jurisdiction: string }) => a.jurisdiction === 'FR'));
      const suspended = await registry.call({ method: 'GET', url: '/v1/agents?status=suspended' });
      assert.deepEqual(suspended.body.agents.map((a: { agent_id: string }) => a.agent_id), [gb.agent_id]);
      const none = await registry.call({ method: 'GET', url: '/v1/agents?jurisdiction=FR&status=suspended' });
      assert.deepEqual(none.body, { agents: [], next_cursor: null, total_count: 0 });
    });

    test('a forged or foreign cursor is 422 on the cursor parameter', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      for (const cursor of ['not*base64', encodeCursor('events', '5'), Buffer.from('agents:').toString('base64url')]) {
        const response = await registry.call({ method: 'GET', url: `/v1/agents?cursor=${encodeURIComponent(cursor)}` });
        assert.equal(response.status, 422, cursor);
        assert.equal(response.body.error.details.errors[0].pointer, '/cursor');
      }
    });
  });
}
