/**
 * What happens to runs around the edges of a registry's life: the queue holds runs beyond
 * COMPUTER_USE_MAX_RUNS (and a queued run can be canceled before it starts); a registry shutting down
 * records its runs as failed; runs left by an instance that stopped are failed by the others once its
 * heartbeat lapses, while a live instance's runs are left alone.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { acquireLease } from '../../../src/registry/storage/stores/lease-store.ts';
import { findRun, insertRun, type RunRow } from '../../../src/registry/computer-use/storage/computer-use-store.ts';
import { NEEDS_CHROMIUM, startConsoleFor } from '../../console/console-harness.ts';
import { WAIT_TIMEOUT_MS, startRegistries, testScope } from '../../helpers/listening.ts';
import { BACKENDS } from '../../helpers/registry.ts';
import { eventually } from '../../helpers/eventually.ts';
import { SCRIPTED_MODEL_KEY, startScriptedModel } from '../../helpers/scripted-model.ts';

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  let last: T | undefined;
  return eventually(
    async () => {
      last = await read();
      return done(last) ? last : undefined;
    },
    () => `a change (still ${JSON.stringify(last)})`,
    WAIT_TIMEOUT_MS,
    50,
  );
}

describe('computer use: the life of runs', NEEDS_CHROMIUM, () => {
  test('one run at a time: the next waits queued, and is canceled before it ever starts; shutdown fails the running one', async (t) => {
    const scope = testScope(t);
    const model = await startScriptedModel(scope, () => ({ hold: true }));
    const [registry] = await startRegistries(scope, 'sqlite', { env: { COMPUTER_USE_API_KEY: SCRIPTED_MODEL_KEY, COMPUTER_USE_MODEL_URL: model.url, COMPUTER_USE_MAX_RUNS: '1' } });
    assert.ok(registry);
    const console = await startConsoleFor(scope, registry.baseUrl);
    registry.app.ward.computerUse.setConsoleOrigin(console.url);
    const post = async (path: string, body?: unknown) => {
      const response = await fetch(`${registry.baseUrl}${path}`, {
        method: 'POST',
        headers: { 'x-idempotency-key': crypto.randomUUID(), ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: response.status, body: (await response.json()) as any };
    };
    const read = async (id: string) => (await (await fetch(`${registry.baseUrl}/v1/admin/computer-use/runs/${id}`)).json()) as any;

    const first = (await post('/v1/admin/computer-use/runs', { task: 'First.' })).body.session_id;
    const second = (await post('/v1/admin/computer-use/runs', { task: 'Second.' })).body.session_id;
    await model.waitForRequests(1);
    assert.equal((await read(first)).status, 'running');
    assert.equal((await read(second)).status, 'queued');

    const canceled = await post(`/v1/admin/computer-use/runs/${second}/cancel`);
    assert.equal(canceled.status, 200);
    assert.equal(canceled.body.status, 'canceled');
    assert.equal(canceled.body.started_at, null);
    assert.deepEqual(canceled.body.ledger_entries.map((entry: any) => entry.type), ['computer_use.requested', 'computer_use.ended']);

    // The listing: newest first, a page at a time, and by status.
    const list = async (query: string) => (await (await fetch(`${registry.baseUrl}/v1/admin/computer-use/runs?${query}`)).json()) as any;
    const page = await list('limit=1');
    assert.deepEqual(page.runs.map((run: any) => run.session_id), [second]);
    assert.ok(page.next_cursor);
    const next = await list(`limit=1&cursor=${page.next_cursor}`);
    assert.deepEqual(next.runs.map((run: any) => run.session_id), [first]);
    assert.equal(next.next_cursor, null);
    assert.deepEqual((await list('status=canceled')).runs.map((run: any) => run.session_id), [second]);
    assert.deepEqual((await list('status=running')).runs.map((run: any) => run.session_id), [first]);
    const wrongKind = await fetch(`${registry.baseUrl}/v1/admin/computer-use/runs?cursor=${Buffer.from('api-keys:key_x').toString('base64url')}`);
    assert.equal(wrongKind.status, 422, 'a cursor of another listing is refused');

    await registry.app.close();
    const stopped = await findRun(registry.storage.db, first);
    assert.equal(stopped?.status, 'failed');
    assert.equal(stopped?.failure_reason, 'the registry shut down during the run');
    assert.equal(model.requests.length, 1, 'the queued run never reached the model');
  });

  for (const backend of BACKENDS) {
    test(`${backend}: an instance that stopped leaves its runs to the others, which fail them; a live one keeps its own`, async (t) => {
      const scope = testScope(t);
      const [registry] = await startRegistries(scope, backend);
      assert.ok(registry);
      const db = registry.storage.db;
      const at = new Date().toISOString();
      const run = (sessionId: string, instanceId: string, status: RunRow['status']): RunRow => ({
        session_id: sessionId,
        status,
        task: 'Left behind.',
        persona: 'observer',
        url: 'http://127.0.0.1:3000/dashboard',
        model: null,
        max_turns: 20,
        headless: true,
        requested_by: 'anonymous',
        instance_id: instanceId,
        turns: 0,
        final_answer: null,
        failure_reason: null,
        event_seqs: [],
        created_at: at,
        started_at: null,
        ended_at: null,
        updated_at: at,
      });
      await insertRun(db, run('01JAAAAAAAAAAAAAAAAAAAAAA1', 'crashed-instance', 'running'));
      await insertRun(db, run('01JAAAAAAAAAAAAAAAAAAAAAA2', 'crashed-instance', 'queued'));
      await insertRun(db, run('01JAAAAAAAAAAAAAAAAAAAAAA3', 'live-instance', 'running'));
      await acquireLease(db, { name: 'instance:live-instance', holder: 'live-instance', now: at, expiresAt: new Date(Date.now() + 60_000).toISOString() });

      await registry.app.ward.computerUse.runs.sweepOrphans();
      for (const id of ['01JAAAAAAAAAAAAAAAAAAAAAA1', '01JAAAAAAAAAAAAAAAAAAAAAA2']) {
        const swept: { status: string; failure_reason: string | null; ledger_entries: { type: string }[] } = await until(
          () => registry.app.ward.computerUse.runs.get(id),
          (value) => value.status !== 'running' && value.status !== 'queued',
        );
        assert.equal(swept.status, 'failed');
        assert.equal(swept.failure_reason, 'the registry instance running it stopped before it ended');
        assert.deepEqual(swept.ledger_entries.map((entry) => entry.type), ['computer_use.ended']);
      }
      assert.equal((await registry.app.ward.computerUse.runs.get('01JAAAAAAAAAAAAAAAAAAAAAA3')).status, 'running');
    });
  }
});
