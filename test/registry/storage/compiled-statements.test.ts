/**
 * The write path's statements are compiled once per shape and dialect (compiled-statements.ts), and a
 * statement whose parameters the caller listed in another order than the builder binds them is never
 * cached, so it cannot bind a value to the wrong column.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compiledShapes, runCompiled } from '../../../src/registry/storage/compiled-statements.ts';
import { migrateToLatest } from '../../../src/registry/storage/migrator.ts';
import {
  BACKENDS,
  agentBody,
  buildTestRegistry,
  writeHeaders,
  openTestStorage,
  registerAgent,
  ulidOf,
} from '../../helpers/registry.ts';

for (const backend of BACKENDS) {
  describe(`statements compiled once [${backend}]`, () => {
    test('a registration runs its statements from kept SQL, and the next one stores its own values', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      await registerAgent(registry, {
        display_name: 'First agent',
        capabilities: { skills: ['triage.adult'] },
      });
      const shapes = compiledShapes(registry.storage.db);
      // PostgreSQL inserts the agent and its skills in one statement, and writes the events and the
      // stored answer with the batch's close (write-unit.ts); SQLite runs each as a kept statement.
      const kept =
        backend === 'postgres'
          ? ['idempotency claim', /^insert agents \(.*\) with agent_skills, unless the name is taken$/]
          : ['idempotency claim', 'idempotency completion', /^insert agents \(.*\), unless the name is taken$/, /^insert agent_skills \(.* × 1\)$/, /^insert events \(.* × 2\)$/];
      for (const shape of kept) {
        assert.ok(
          shapes.some((candidate) => (typeof shape === 'string' ? candidate === shape : shape.test(candidate))),
          `${shape} is kept (${shapes.join('; ')})`,
        );
      }
      // The second registration binds its own values to the kept text.
      const second = await registerAgent(registry, {
        display_name: 'Second agent',
        capabilities: { skills: ['triage.child'] },
      });
      const read = await registry.call({ method: 'GET', url: `/v1/agents/${ulidOf(second.agent_id)}` });
      assert.equal(read.body.display_name, 'Second agent');
      assert.deepEqual(read.body.capabilities.skills, ['triage.child']);
      const found = await registry.call({ method: 'GET', url: '/v1/discover?capability=triage.child' });
      assert.deepEqual(
        found.body.results.map((result: { agent_id: string }) => result.agent_id),
        [second.agent_id],
      );
      const conflict = await registry.call({
        method: 'POST',
        url: '/v1/agents',
        headers: writeHeaders(),
        payload: agentBody({ display_name: 'First agent' }),
      });
      assert.equal(conflict.status, 409, JSON.stringify(conflict.body));
      assert.equal(conflict.body.error.code, 'AGENT_CONFLICT');
    });

    test('parameters listed in another order than the builder binds them: run as built, never kept', async (t) => {
      const storage = await openTestStorage(t, backend);
      await migrateToLatest(storage);
      const at = new Date().toISOString();
      const values = { name: 'order-check', value: 'v', created_at: at };
      const shape = `registry secret, misordered ${backend}`;
      await runCompiled(storage.db, shape, [values.value, values.name, values.created_at], () =>
        storage.db.insertInto('registry_secrets').values(values),
      );
      assert.ok(!compiledShapes(storage.db).includes(shape));
      const row = await storage.db
        .selectFrom('registry_secrets')
        .selectAll()
        .where('name', '=', 'order-check')
        .executeTakeFirstOrThrow();
      assert.equal(row.value, 'v', 'stored as built, not as listed');
    });
  });
}
