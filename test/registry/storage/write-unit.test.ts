/**
 * Group commit (write-unit.ts): units that arrive while a transaction runs are committed together, each
 * in its own savepoint. A failing unit is rolled back alone and gets its own error; the others commit,
 * with gap-free sequence numbers, their ledger leaves, and one wake-up; no caller is answered before
 * its commit.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { sql } from 'kysely';
import { onEventsCommitted } from '../../../src/registry/storage/commit-signal.ts';
import { insertEvents, listEvents, numberEvents } from '../../../src/registry/storage/stores/event-store.ts';
import { appendLedgerLeaves, ledgerTreeSize, listLedgerLeaves, readLedgerTree } from '../../../src/registry/storage/stores/ledger-store.ts';
import { appendLeaves, hashFromHex, hashLeaf, toHex } from '../../../src/core/crypto/merkle.ts';
import { encodeLedgerEntry } from '../../../src/core/ledger-entry.ts';
import { runWrite } from '../../../src/registry/storage/write-unit.ts';
import { findIdempotencyRecord, insertClaim } from '../../../src/registry/storage/stores/idempotency-store.ts';
import { openStorage, type Storage } from '../../../src/registry/storage/database.ts';
import { migrateToLatest } from '../../../src/registry/storage/migrator.ts';
import { BACKENDS, openTestStorage } from '../../helpers/registry.ts';

/** A second instance on `storage`'s database, with a write queue and a kept ledger tree of its own. */
async function openSecondInstance(t: TestContext, storage: Storage & { env: Record<string, string> }): Promise<Storage> {
  const other = await openStorage(
    storage.backend === 'sqlite'
      ? { backend: 'sqlite', path: join(storage.env.REGISTRY_DATA_DIR as string, 'registry.sqlite') }
      : { backend: 'postgres', url: storage.env.DATABASE_URL as string, schema: storage.env.DATABASE_SCHEMA as string },
  );
  t.after(() => other.close());
  return other;
}

/** A write unit that emits one ledgered event. */
function emitOne(on: Storage, subject: string) {
  return runWrite(on, async (unit) => unit.emit({ type: 'api_key.created', subject, occurred_at: new Date().toISOString(), data: {} }));
}

/** The stored leaves as [leaf index, seq], after checking the stored peaks are those of a tree built from them in one go. */
async function leavesOfAConsistentTree(storage: Storage): Promise<number[][]> {
  const leaves = await listLedgerLeaves(storage.db, 0, 100);
  const rebuilt = appendLeaves([], 0, leaves.map((leaf) => hashFromHex(leaf.leafHash) as Uint8Array)).peaks;
  assert.deepEqual((await readLedgerTree(storage.db)).peaks.map((peak) => toHex(peak.hash)), rebuilt.map((peak) => toHex(peak.hash)));
  return leaves.map((leaf) => [leaf.leafIndex, leaf.seq]);
}

for (const backend of BACKENDS) {
  describe(`write units committed together [${backend}]`, () => {
    test('one failing unit among many is rolled back alone; the rest commit in order with one wake-up', async (t) => {
      const storage = await openTestStorage(t, backend);
      await migrateToLatest(storage);
      const wakes: number[] = [];
      const stop = onEventsCommitted(storage, (seq) => wakes.push(seq));
      t.after(stop);
      const at = new Date().toISOString();
      // The first unit holds its transaction open until the others have queued behind it.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let started!: () => void;
      const running = new Promise<void>((resolve) => (started = resolve));
      const first = runWrite(storage, async (unit) => {
        unit.emit({ type: 'api_key.created', subject: 'k0', occurred_at: at, data: { n: 0 } });
        started();
        await held;
        return 0;
      });
      await running;
      const rest = Array.from({ length: 6 }, (_, i) =>
        runWrite(storage, async (unit) => {
          await unit.tx.insertInto('registry_secrets').values({ name: `secret-${i + 1}`, value: 'v', created_at: at }).execute();
          unit.emit({ type: 'api_key.created', subject: `k${i + 1}`, occurred_at: at, data: { n: i + 1 } });
          if (i + 1 === 3) throw new Error('unit 3 fails');
          return i + 1;
        }),
      );
      // runWrite queues a unit before it returns its promise: the six wait behind the first one now.
      release();
      const settled = await Promise.allSettled([first, ...rest]);
      assert.deepEqual(
        settled.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value.result : (outcome.reason as Error).message)),
        [0, 1, 2, 'unit 3 fails', 4, 5, 6],
      );
      const events = await listEvents(storage.db, { afterSeq: 0, limit: 100 });
      assert.deepEqual(events.map((event) => [event.seq, event.subject]), [[1, 'k0'], [2, 'k1'], [3, 'k2'], [4, 'k4'], [5, 'k5'], [6, 'k6']]);
      const fulfilled = settled.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value.events.map((event) => event.seq)] : []));
      assert.deepEqual(fulfilled, [[1], [2], [3], [4], [5], [6]]);
      const secrets = await storage.db.selectFrom('registry_secrets').select('name').where('name', 'like', 'secret-%').orderBy('name').execute();
      assert.deepEqual(secrets.map((row) => row.name), ['secret-1', 'secret-2', 'secret-4', 'secret-5', 'secret-6'], 'unit 3 left nothing behind');
      assert.equal(await ledgerTreeSize(storage.db), 6);
      // The first unit's batch had begun when the others arrived: they share the next commit (on
      // PostgreSQL, a transaction opened while the first one committed).
      assert.deepEqual(wakes, [1, 6], 'one wake-up per commit');
    });

    test('ledger entries with quotes, backslashes, commas, braces and non-ASCII text are stored as the text that was hashed', async (t) => {
      const storage = await openTestStorage(t, backend);
      await migrateToLatest(storage);
      const at = new Date().toISOString();
      const subjects = ['k"1', 'k\\2', 'k,3', '{k4}', 'ké 5 ✓', 'NULL', ''];
      // Together, so that on PostgreSQL they reach the batch's one statement as arrays of several rows.
      await Promise.all(subjects.map((subject) => runWrite(storage, async (unit) => unit.emit({ type: 'api_key.created', subject, occurred_at: at, data: {} }))));
      const events = await listEvents(storage.db, { afterSeq: 0, limit: 100 });
      const leaves = await listLedgerLeaves(storage.db, 0, 100);
      assert.equal(leaves.length, subjects.length);
      for (const [i, leaf] of leaves.entries()) {
        const event = events[i] as (typeof events)[number];
        assert.equal(leaf.seq, event.seq);
        assert.equal(leaf.entry, encodeLedgerEntry(event));
        assert.equal(leaf.leafHash, toHex(hashLeaf(new TextEncoder().encode(leaf.entry))));
      }
      assert.deepEqual(events.map((event) => event.subject).sort(), [...subjects].sort());
    });

    test('a unit alone that fails rolls back its transaction, as it always did; the next runs', async (t) => {
      const storage = await openTestStorage(t, backend);
      await migrateToLatest(storage);
      const at = new Date().toISOString();
      await assert.rejects(
        runWrite(storage, async (unit) => {
          await unit.tx.insertInto('registry_secrets').values({ name: 'alone', value: 'v', created_at: at }).execute();
          unit.emit({ type: 'api_key.created', subject: 'k', occurred_at: at, data: {} });
          throw new Error('no');
        }),
        /no/,
      );
      assert.equal((await storage.db.selectFrom('registry_secrets').select('name').where('name', '=', 'alone').execute()).length, 0);
      const { events } = await emitOne(storage, 'k');
      assert.deepEqual(events.map((event) => event.seq), [1]);
    });

    test("the answers units keep for idempotent requests are stored with their batch; a failing unit's is not", async (t) => {
      const storage = await openTestStorage(t, backend);
      await migrateToLatest(storage);
      const at = new Date().toISOString();
      for (const n of [1, 2, 3]) {
        await insertClaim(storage.db, { scope_key: `key-${n}`, request_hash: 'h', locked_until: at, expires_at: at, created_at: at, holder: null, claim_token: `token-${n}` });
      }
      // Together in one batch; the second fails after keeping its answer.
      const outcomes = await Promise.allSettled(
        [1, 2, 3].map((n) =>
          runWrite(storage, async (unit) => {
            unit.completeClaim({ scope_key: `key-${n}`, claim_token: `token-${n}`, status_code: 201, headers: { etag: `"${n}"` }, body: JSON.stringify({ n, text: 'ké "q"' }) });
            if (n === 2) throw new Error('unit 2 fails');
            return n;
          }),
        ),
      );
      assert.deepEqual(outcomes.map((outcome) => outcome.status), ['fulfilled', 'rejected', 'fulfilled']);
      const records = await Promise.all([1, 2, 3].map((n) => findIdempotencyRecord(storage.db, `key-${n}`)));
      assert.deepEqual(
        records.map((record) => [record?.state, record?.status_code, record?.response_headers, record?.response_body]),
        [
          ['completed', 201, { etag: '"1"' }, JSON.stringify({ n: 1, text: 'ké "q"' })],
          ['in_progress', null, null, null],
          ['completed', 201, { etag: '"3"' }, JSON.stringify({ n: 3, text: 'ké "q"' })],
        ],
      );
    });

    test('a batch whose closing write fails refuses all its units and stores none of their events', async (t) => {
      const storage = await openTestStorage(t, backend);
      await migrateToLatest(storage);
      const at = new Date().toISOString();
      // A stray row holding the number the batch's second event will get: the close's insert of the
      // events collides with it, after every unit has run.
      await storage.db.insertInto('events').values({ seq: 2, type: 'stray', occurred_at: at, subject: 's', data: '{}' }).execute();
      const outcomes = await Promise.allSettled(
        [1, 2].map((n) => emitOne(storage, `k${n}`)),
      );
      assert.deepEqual(outcomes.map((outcome) => outcome.status), ['rejected', 'rejected']);
      assert.deepEqual((await listEvents(storage.db, { afterSeq: 0, limit: 10 })).map((event) => event.type), ['stray']);
      assert.equal(await ledgerTreeSize(storage.db), 0);
      await storage.db.deleteFrom('events').execute();
      const { events } = await emitOne(storage, 'k3');
      assert.deepEqual(events.map((event) => event.seq), [1]);
      assert.deepEqual((await listLedgerLeaves(storage.db, 0, 10)).map((leaf) => [leaf.leafIndex, leaf.seq]), [[0, 1]]);
    });

    test('a writer that kept the ledger tree reads it again after another instance has written', async (t) => {
      const storage = await openTestStorage(t, backend);
      await migrateToLatest(storage);
      const other = await openSecondInstance(t, storage);
      await emitOne(storage, 'a1');
      await emitOne(other, 'b1');
      await emitOne(other, 'b2');
      await emitOne(storage, 'a2');
      await emitOne(storage, 'a3');
      assert.deepEqual(await leavesOfAConsistentTree(storage), [[0, 1], [1, 2], [2, 3], [3, 4], [4, 5]]);
    });

    test('a kept tree is not used when the sequence comes back to its position with other leaves (a restore)', async (t) => {
      const storage = await openTestStorage(t, backend);
      await migrateToLatest(storage);
      await emitOne(storage, 'before the restore');
      // The database goes back to empty behind this process's back, and another writer makes seq 1 anew.
      await storage.db.transaction().execute(async (tx) => {
        for (const table of ['events', 'ledger_leaves', 'ledger_nodes'] as const) await tx.deleteFrom(table).execute();
        await tx.updateTable('event_sequence').set({ last_seq: 0, batch_token: null }).execute();
      });
      await emitOne(await openSecondInstance(t, storage), 'after the restore');
      await emitOne(storage, 'next');
      assert.deepEqual(await leavesOfAConsistentTree(storage), [[0, 1], [1, 2]]);
    });

    test('a kept tree is not used after a writer of an older build (no token) has appended', async (t) => {
      const storage = await openTestStorage(t, backend);
      await migrateToLatest(storage);
      await emitOne(storage, 'a1');
      // As a build before migration 011 writes: event, leaf and position, and the token left as it was.
      await storage.db.transaction().execute(async (tx) => {
        const events = numberEvents(1, [{ type: 'registry.registered', subject: 'old build', occurred_at: new Date().toISOString(), data: {} }]);
        await insertEvents(tx, events);
        await appendLedgerLeaves(tx, events);
        await tx.updateTable('event_sequence').set({ last_seq: 2 }).execute();
      });
      await emitOne(storage, 'a2');
      assert.deepEqual(await leavesOfAConsistentTree(storage), [[0, 1], [1, 2], [2, 3]]);
    });

    test('a unit whose event or answer the tables would refuse fails alone; its batch commits the rest', async (t) => {
      const storage = await openTestStorage(t, backend);
      await migrateToLatest(storage);
      const at = new Date().toISOString();
      const outcomes = await Promise.allSettled([
        emitOne(storage, 'k1'),
        runWrite(storage, async (unit) => unit.emit({ type: 'api_key.created', subject: 'k2', occurred_at: at, data: { n: 1n } })),
        runWrite(storage, async (unit) => unit.emit({ type: undefined as unknown as string, subject: 'k3', occurred_at: at, data: {} })),
        runWrite(storage, async (unit) => unit.completeClaim({ scope_key: 'k', status_code: 201, headers: {}, body: undefined as unknown as string })),
        emitOne(storage, 'k5'),
      ]);
      assert.deepEqual(outcomes.map((outcome) => outcome.status), ['fulfilled', 'rejected', 'rejected', 'rejected', 'fulfilled']);
      assert.deepEqual((await listEvents(storage.db, { afterSeq: 0, limit: 10 })).map((event) => [event.seq, event.subject]), [[1, 'k1'], [2, 'k5']]);
    });

    test('when the sequence lock cannot be taken, the waiting units fail with the reason, and writing resumes once it can', async (t) => {
      const storage = await openTestStorage(t, backend);
      await migrateToLatest(storage);
      const write = () => emitOne(storage, 'k');
      await storage.db.deleteFrom('event_sequence').execute();
      const refused = await Promise.allSettled([write(), write()]);
      assert.deepEqual(refused.map((outcome) => outcome.status === 'rejected' && /event_sequence row is missing/.test(String(outcome.reason))), [true, true]);
      await storage.db.insertInto('event_sequence').values({ id: 1, last_seq: 0 }).execute();
      assert.deepEqual((await write()).events.map((event) => event.seq), [1]);
    });
  });
  if (backend === 'postgres') {
    describe('a COMMIT that fails [postgres]', () => {
      test('refuses every unit of its batch, gives its connection back, and the next writes commit', { timeout: 60_000 }, async (t) => {
        const storage = await openTestStorage(t, backend);
        await migrateToLatest(storage);
        // A constraint checked only at COMMIT: two equal values make the COMMIT itself fail.
        await sql`create table commit_check (n integer unique deferrable initially deferred)`.execute(storage.db);
        const at = new Date().toISOString();
        // More failed commits than the pool (8) has connections: one kept per failure would exhaust it.
        for (let round = 0; round < 10; round += 1) {
          const outcomes = await Promise.allSettled(
            [1, 2].map((n) =>
              runWrite(storage, async (unit) => {
                await sql`insert into commit_check (n) values (${round})`.execute(unit.tx);
                unit.emit({ type: 'api_key.created', subject: `k${n}`, occurred_at: at, data: {} });
              }),
            ),
          );
          assert.deepEqual(outcomes.map((outcome) => outcome.status === 'rejected' && (outcome.reason as { code?: string }).code), ['23505', '23505']);
          const use = storage.poolUse?.();
          assert.equal(use && use.total - use.idle, 0, `no connection is left checked out (round ${round})`);
        }
        const { events } = await emitOne(storage, 'after');
        assert.deepEqual(events.map((event) => event.seq), [1]);
      });
    });
  }
  if (backend === 'sqlite') {
    describe('durability without blocking the event loop [sqlite]', () => {
      test('units commit without their own sync; the WAL is synced before any caller is answered, and the connection is back to FULL', async (t) => {
        const storage = await openTestStorage(t, backend);
        await migrateToLatest(storage);
        const flushWal = storage.flushWal?.bind(storage);
        assert.ok(flushWal, 'SQLite storage syncs its WAL itself');
        const order: string[] = [];
        // The real sync, observed: when it starts and ends against when the callers are answered.
        Object.assign(storage, {
          flushWal: async () => {
            order.push('sync started');
            await flushWal();
            order.push('sync done');
          },
        });
        const at = new Date().toISOString();
        const units = [1, 2, 3].map((n) =>
          runWrite(storage, async (unit) => {
            unit.emit({ type: 'api_key.created', subject: `k${n}`, occurred_at: at, data: {} });
            if (n === 2) throw new Error('unit 2 fails');
          }).then(
            () => order.push(`unit ${n} answered`),
            () => order.push(`unit ${n} refused`),
          ),
        );
        await Promise.all(units);
        assert.deepEqual(order, [
          'sync started',
          'sync done',
          'unit 1 answered',
          'unit 2 refused',
          'unit 3 answered',
        ]);
        const { rows } = await sql<{ synchronous: number }>`PRAGMA synchronous`.execute(storage.db);
        assert.equal(
          rows[0]?.synchronous,
          2,
          'every other write on the connection still syncs in COMMIT (FULL)',
        );
      });

      test('a WAL sync that fails refuses every caller of its batch, and the connection is back to FULL', async (t) => {
        const storage = await openTestStorage(t, backend);
        await migrateToLatest(storage);
        const flushWal = storage.flushWal?.bind(storage);
        assert.ok(flushWal);
        // The disk refuses once (EIO); the commit happened but is not known to be durable.
        let fail = true;
        Object.assign(storage, {
          flushWal: async () => {
            if (fail) {
              fail = false;
              throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
            }
            await flushWal();
          },
        });
        const outcomes = await Promise.allSettled(
          [1, 2].map((n) => emitOne(storage, `k${n}`)),
        );
        assert.deepEqual(
          outcomes.map((outcome) => (outcome.status === 'rejected' ? (outcome.reason as Error).message : 'answered')),
          ['EIO: i/o error, fdatasync', 'EIO: i/o error, fdatasync'],
          'no caller is told a write succeeded that is not known to be durable',
        );
        const { rows } = await sql<{ synchronous: number }>`PRAGMA synchronous`.execute(storage.db);
        assert.equal(rows[0]?.synchronous, 2);
        // The next write syncs and is answered.
        const { events } = await emitOne(storage, 'k3');
        assert.equal(events.length, 1);
      });
    });
  }
}
