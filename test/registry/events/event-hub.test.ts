/**
 * The event hub's committed position (event-hub.ts), which the discovery cache uses as its generation
 * instead of a query per request: a commit through this process is known before its writer is
 * answered; a commit by another instance when its notification arrives (PostgreSQL); a change that
 * signals nothing (another process writing the file, a lost notification) at the next re-read.
 */
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { openStorage } from '../../../src/registry/storage/database.ts';
import { migrateToLatest } from '../../../src/registry/storage/migrator.ts';
import { runWrite } from '../../../src/registry/storage/write-unit.ts';
import { openEventHub } from '../../../src/registry/events/event-hub.ts';
import { eventually } from '../../helpers/eventually.ts';
import { BACKENDS, openTestStorage } from '../../helpers/registry.ts';

const at = new Date().toISOString();

const until = (check: () => boolean, what: string) => eventually(() => (check() ? true : undefined), what, 20_000, 10);

for (const backend of BACKENDS) {
  describe(`the event hub's committed position [${backend}]`, () => {
    test('starts at the stored position and knows a local commit before the writer is answered', async (t) => {
      const storage = await openTestStorage(t, backend);
      await migrateToLatest(storage);
      await runWrite(storage, async (unit) => unit.emit({ type: 'api_key.created', subject: 'k1', occurred_at: at, data: {} }));
      const hub = await openEventHub(storage, { postgres: pgTarget(storage.env), onError: (error) => assert.fail(String(error)), refreshMs: 60_000 });
      assert.equal(hub.committedSeq(), 1);
      const { events } = await runWrite(storage, async (unit) => {
        unit.emit({ type: 'api_key.created', subject: 'k2', occurred_at: at, data: {} });
        unit.emit({ type: 'api_key.created', subject: 'k3', occurred_at: at, data: {} });
      });
      assert.deepEqual(events.map((e) => e.seq), [2, 3]);
      assert.equal(hub.committedSeq(), 3, 'known when runWrite resolves, with no re-read (refresh is a minute)');
      // A rolled-back unit moves nothing.
      await assert.rejects(
        runWrite(storage, async (unit) => {
          unit.emit({ type: 'api_key.created', subject: 'k4', occurred_at: at, data: {} });
          throw new Error('refused');
        }),
      );
      assert.equal(hub.committedSeq(), 3);
      await hub.close();
    });

    /** A migrated storage and its hub, with one stream reader that counts its wake-ups. */
    async function countingHub(t: TestContext) {
      const storage = await openTestStorage(t, backend);
      await migrateToLatest(storage);
      const hub = await openEventHub(storage, { postgres: pgTarget(storage.env), onError: (error) => assert.fail(String(error)), refreshMs: 60_000 });
      const counted = { hub, wakes: 0, write: (subject: string) => runWrite(storage, async (unit) => unit.emit({ type: 'api_key.created', subject, occurred_at: at, data: {} })) };
      hub.subscribe(() => (counted.wakes += 1));
      return counted;
    }

    test('streams are woken on the turn after a commit, once its writers have their answers', async (t) => {
      const counted = await countingHub(t);
      const { hub } = counted;
      try {
        await counted.write('k1');
        assert.equal(hub.committedSeq(), 1, 'the position is known when the writer is answered');
        // The writer's continuation runs in the commit's turn: its answer is written before any frame.
        // (On PostgreSQL this instance's own notification may arrive before its COMMIT's reply and
        // wake the streams first; the in-process path is what decides on SQLite.)
        if (backend === 'sqlite') {
          assert.equal(counted.wakes, 0, 'not woken before the writer was answered');
          await new Promise((resolve) => setImmediate(resolve));
          assert.equal(counted.wakes, 1, 'woken on the next turn');
        }
        await until(() => counted.wakes >= 1, 'the wake');
      } finally {
        await hub.close();
      }
    });

    test('a wake still pending when the hub closes is dropped', async (t) => {
      const counted = await countingHub(t);
      await counted.write('k1');
      // On PostgreSQL the instance's own notification may already have been handled while the write
      // waited on I/O; on SQLite the only wake is the one pending now.
      const before = counted.wakes;
      await counted.hub.close();
      // The pending wake is a setImmediate queued before this one (event-hub.ts): once this one has
      // run, so has it; a closed hub listens to nothing more.
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(counted.wakes, before, 'nothing woken after close');
      if (backend === 'sqlite') assert.equal(counted.wakes, 0);
    });

    test('a change that signals nothing is seen at the next re-read', async (t) => {
      const storage = await openTestStorage(t, backend);
      await migrateToLatest(storage);
      const hub = await openEventHub(storage, { postgres: pgTarget(storage.env), onError: (error) => assert.fail(String(error)), refreshMs: 50 });
      assert.equal(hub.committedSeq(), 0);
      // Another process's write: the row moves, no signal in this process, no notification.
      await storage.db.updateTable('event_sequence').set({ last_seq: 41 }).where('id', '=', 1).execute();
      await until(() => hub.committedSeq() === 41, 'the re-read');
      await hub.close();
    });

    if (backend === 'postgres') {
      test('a commit by another instance on the same schema is known from its notification', async (t) => {
        const storage = await openTestStorage(t, backend);
        await migrateToLatest(storage);
        const hub = await openEventHub(storage, { postgres: pgTarget(storage.env), onError: (error) => assert.fail(String(error)), refreshMs: 60_000 });
          // The other instance: its own pool on the same schema, so its in-process signal never reaches this hub.
        const other = await openStorage({ backend: 'postgres', url: storage.env.DATABASE_URL as string, schema: storage.env.DATABASE_SCHEMA as string, poolSize: 2 });
        t.after(() => other.close());
        await runWrite(other, async (unit) => unit.emit({ type: 'api_key.created', subject: 'k1', occurred_at: at, data: {} }));
        await until(() => hub.committedSeq() === 1, 'the notification');
        await hub.close();
      });
    }
  });
}

function pgTarget(env: Record<string, string>) {
  return env.DATABASE_URL ? { url: env.DATABASE_URL, schema: env.DATABASE_SCHEMA } : undefined;
}
