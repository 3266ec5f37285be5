import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../../src/core/config.ts';
import { lastCommittedSeq, listEvents, oldestRetainedSeq } from '../../../src/registry/storage/stores/event-store.ts';
import { ledgerTreeSize } from '../../../src/registry/storage/stores/ledger-store.ts';
import { runWrite } from '../../../src/registry/storage/write-unit.ts';
import { pruneExpiredEvents } from '../../../src/registry/events/event-retention.ts';
import { BACKENDS, buildTestRegistry, registerAgent } from '../../helpers/registry.ts';
import { collectEvents, registerOverHttp, seqsOf, startRegistries, testScope } from '../../helpers/listening.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

/** A clock the test moves by hand. */
function manualClock(start = Date.parse('2025-03-01T12:00:00.000Z')) {
  let now = start;
  return { now: () => new Date(now), advanceDays: (days: number) => void (now += days * DAY_MS) };
}

describe('event retention configuration', () => {
  test('REGISTRY_EVENT_RETENTION_DAYS defaults to 30 days and refuses values outside 1 to 36500', () => {
    assert.equal(loadConfig({}).REGISTRY_EVENT_RETENTION_DAYS, 30);
    assert.equal(loadConfig({ REGISTRY_EVENT_RETENTION_DAYS: '7' }).REGISTRY_EVENT_RETENTION_DAYS, 7);
    for (const value of ['0', '36501', 'a week', '1.5']) {
      assert.throws(() => loadConfig({ REGISTRY_EVENT_RETENTION_DAYS: value }), (error: unknown) => {
        return error instanceof ConfigError && error.variable === 'REGISTRY_EVENT_RETENTION_DAYS';
      }, value);
    }
  });
});

for (const backend of BACKENDS) {
  describe(`event retention [${backend}]`, () => {
    test('pruning deletes the events older than the retention period and keeps every ledger leaf', async (t) => {
      const clock = manualClock();
      const registry = await buildTestRegistry(t, backend, { clock });
      await registerAgent(registry);
      await registerAgent(registry);
      clock.advanceDays(31);
      await registerAgent(registry);
      assert.equal(await pruneExpiredEvents(registry.storage, clock, 30), 4);
      assert.deepEqual((await listEvents(registry.storage.db, { afterSeq: 0, limit: 10 })).map((e) => e.seq), [5, 6]);
      assert.equal(await oldestRetainedSeq(registry.storage.db), 5);
      assert.equal(await ledgerTreeSize(registry.storage.db), 6, 'the ledger is permanent');
      assert.equal(await pruneExpiredEvents(registry.storage, clock, 30), 0, 'pruning again is a no-op');
    });

    test('pruning removes a prefix of the sequence even when clocks disagreed, so no hole opens', async (t) => {
      const clock = manualClock();
      const registry = await buildTestRegistry(t, backend, { clock });
      const at = (days: number) => new Date(clock.now().getTime() + days * DAY_MS).toISOString();
      // seq 3 was written by an instance whose clock ran 40 days behind.
      for (const days of [0, 40, 0, 40]) {
        await runWrite(registry.storage, async (unit) => unit.emit({ type: 'agent.updated', subject: 's', data: {}, occurred_at: at(days) }));
      }
      clock.advanceDays(60);
      assert.equal(await pruneExpiredEvents(registry.storage, clock, 30), 3);
      assert.deepEqual((await listEvents(registry.storage.db, { afterSeq: 0, limit: 10 })).map((e) => e.seq), [4]);
    });

    test('with every event pruned, the oldest retained position is the one after the last committed', async (t) => {
      const clock = manualClock();
      const registry = await buildTestRegistry(t, backend, { clock });
      await registerAgent(registry);
      clock.advanceDays(31);
      await pruneExpiredEvents(registry.storage, clock, 30);
      assert.equal(await lastCommittedSeq(registry.storage.db), 2);
      assert.equal(await oldestRetainedSeq(registry.storage.db), 3);
    });

    test('a cursor from before the retained events is 410 CURSOR_EXPIRED; cursor=0 replays what is kept', async (t) => {
      const clock = manualClock();
      const scope = testScope(t);
      const [registry] = await startRegistries(scope, backend, { clock });
      const { baseUrl, storage } = registry!;
      await registerOverHttp(baseUrl, 'Old');
      await registerOverHttp(baseUrl, 'Older');
      clock.advanceDays(31);
      await registerOverHttp(baseUrl, 'Recent');
      await pruneExpiredEvents(storage, clock, 30);

      for (const headers of [{}, { 'last-event-id': '3' }] as Record<string, string>[]) {
        const response = await fetch(`${baseUrl}/v1/events/stream?cursor=1`, { headers });
        assert.equal(response.status, 410);
        const body = (await response.json()) as any;
        assert.equal(body.error.code, 'CURSOR_EXPIRED');
        assert.equal(body.error.details.oldest_retained_seq, 5);
      }
      const fromFour = collectEvents(scope, `${baseUrl}/v1/events/stream?cursor=4`);
      const replay = collectEvents(scope, `${baseUrl}/v1/events/stream?cursor=0`);
      await fromFour.waitUntil((events) => events.length >= 2, 'the retained events');
      await replay.waitUntil((events) => events.length >= 2, 'the retained events');
      assert.deepEqual(seqsOf(replay.events), [5, 6]);
      assert.deepEqual(seqsOf(fromFour.events), [5, 6]);
    });
  });
}
