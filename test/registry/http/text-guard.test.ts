/**
 * A NUL character anywhere in a request is a 422 naming where, on both backends (PostgreSQL cannot
 * store it and answered 500; found by the fuzzer), and nothing is written.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { lastCommittedSeq } from '../../../src/registry/storage/stores/event-store.ts';
import { BACKENDS, agentBody, buildTestRegistry, writeHeaders } from '../../helpers/registry.ts';

for (const backend of BACKENDS) {
  describe(`NUL characters [${backend}]`, () => {
    test('in a path, a query or a body (value or member name): 422 with the place, nothing stored', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const before = await lastCommittedSeq(registry.storage.db);
      const path = await registry.call({ method: 'GET', url: '/v1/registries/%00' });
      assert.equal(path.status, 422);
      assert.deepEqual(path.body.error.details.errors, [{ in: 'path', pointer: '/id', reason: 'must not contain the NUL character (U+0000)' }]);
      const query = await registry.call({ method: 'GET', url: '/v1/agents?q=a%00b' });
      assert.equal(query.status, 422);
      assert.equal(query.body.error.details.errors[0].pointer, '/q');
      const value = await registry.call({ method: 'POST', url: '/v1/agents', headers: writeHeaders(), payload: agentBody({ display_name: 'Triage\u0000bot' }) });
      assert.equal(value.status, 422);
      assert.deepEqual(value.body.error.details.errors[0], { in: 'body', pointer: '/display_name', reason: 'must not contain the NUL character (U+0000)' });
      const key = await registry.call({ method: 'POST', url: '/v1/agents', headers: writeHeaders(), payload: { ...agentBody(), metadata: { 'a\u0000b': 1 } } });
      assert.equal(key.status, 422);
      assert.equal(await lastCommittedSeq(registry.storage.db), before);
    });
  });
}
