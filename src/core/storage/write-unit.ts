import { sql, type Kysely } from 'kysely';
import type { Storage } from './database.ts';
import type { Database } from './schema.ts';
import { commitNotification, signalEventsCommitted } from './commit-signal.ts';
import { callbacksPerStorage } from './storage-callbacks.ts';
import { insertEvents, type NewEvent, type StoredEvent } from './stores/event-store.ts';
import { insertLedgerAppend, planLedgerAppend, type LedgerAppend } from './stores/ledger-store.ts';

/**
 * One registry mutation: a transaction's worth of work plus the events it emits. Every write goes
 * through `runWrite`, which is what makes the event log trustworthy:
 * - the transaction first takes the lock on the single `event_sequence` row, so writers are
 *   serialised and sequence numbers are gap-free in commit order (a reader can never see n+1
 *   while n is still uncommitted);
 * - events are inserted in the same transaction as the change, so no change is without its event
 *   and no event describes a change that rolled back;
 * - checks made inside the unit (conflicts, versions, transitions) see every write before it;
 * - every event of a mutation becomes a transparency-ledger leaf in the same transaction, and
 *   stream readers are woken once it commits (commit-signal.ts).
 *
 * **Group commit.** Units that arrive while a transaction is running wait, and then run together in
 * the next transaction, one after another, each inside its own savepoint: a unit that fails is rolled
 * back alone and its caller gets its error; the others commit together, with one lock, one ledger
 * append and one durable commit (one fsync on SQLite) for all of them. No caller is answered before
 * the commit that holds its work has returned, so an acknowledged write survives a crash exactly as
 * before. A unit alone in its transaction runs without a savepoint, as it always did.
 */
export type WriteUnit = {
  readonly tx: Kysely<Database>;
  emit(event: NewEvent): void;
  /** Runs `step` in this transaction once the emitted events have their sequence numbers. */
  afterEvents(step: (events: readonly StoredEvent[]) => Promise<void>): void;
};

/** Units joined in one transaction at most (their results wait for the commit). */
const MAX_UNITS_PER_COMMIT = 64;

type Job = {
  work: (unit: WriteUnit) => Promise<unknown>;
  resolve: (outcome: { result: unknown; events: StoredEvent[] }) => void;
  reject: (error: unknown) => void;
};

type Outcome = { ok: true; result: unknown; events: StoredEvent[] } | { ok: false; error: unknown };

type Queue = { waiting: Job[]; running: boolean };
const queues = new WeakMap<Storage, Queue>();

/** Told of every transaction of write units: how many units it held and how long it took, commit included. */
export type CommitObserver = (units: number, seconds: number) => void;
const observers = callbacksPerStorage<Parameters<CommitObserver>>();

/** Calls `observer` after each transaction of write units on `storage` (metrics); returns the way to stop. */
export function observeCommits(storage: Storage, observer: CommitObserver): () => void {
  return observers.add(storage, observer);
}

export async function runWrite<T>(storage: Storage, work: (unit: WriteUnit) => Promise<T>): Promise<{ result: T; events: StoredEvent[] }> {
  let queue = queues.get(storage);
  if (!queue) {
    queue = { waiting: [], running: false };
    queues.set(storage, queue);
  }
  const joined = queue;
  const outcome = new Promise<{ result: unknown; events: StoredEvent[] }>((resolve, reject) => joined.waiting.push({ work, resolve, reject }));
  if (!joined.running) {
    joined.running = true;
    // On SQLite a transaction never waits on I/O (node:sqlite is synchronous), so no request could
    // queue behind it and every unit committed alone, one fsync each. Starting on the next turn of
    // the event loop lets the requests that arrived together reach this queue first and share one
    // commit. PostgreSQL's transactions wait on the network, so units queue there on their own.
    if (storage.backend === 'sqlite') setImmediate(() => void drain(storage, joined));
    else void drain(storage, joined);
  }
  return outcome as Promise<{ result: T; events: StoredEvent[] }>;
}

/** Runs the waiting units, a transaction at a time, until none wait. */
async function drain(storage: Storage, queue: Queue): Promise<void> {
  try {
    while (queue.waiting.length > 0) await commitTogether(storage, queue.waiting.splice(0, MAX_UNITS_PER_COMMIT));
  } finally {
    queue.running = false;
  }
}

async function commitTogether(storage: Storage, jobs: Job[]): Promise<void> {
  const alone = jobs.length === 1;
  const outcomes: Outcome[] = [];
  const began = performance.now();
  const transact = (db: Kysely<Database>) =>
    db.transaction().execute(async (tx) => {
      const firstSeq = await lockSequence(tx);
      let lastSeq = firstSeq;
      const committed: StoredEvent[] = [];
      for (const job of jobs) {
        if (!alone) await sql`savepoint write_unit`.execute(tx);
        try {
          const pending: NewEvent[] = [];
          const afterSteps: ((events: readonly StoredEvent[]) => Promise<void>)[] = [];
          const result = await job.work({ tx, emit: (event) => pending.push(event), afterEvents: (step) => afterSteps.push(step) });
          const events = await insertEvents(tx, lastSeq, pending);
          for (const step of afterSteps) await step(events);
          // Not released: each unit's savepoint is a new one of the same name, which the next unit's
          // ROLLBACK TO would never reach, and COMMIT releases them all. On PostgreSQL that is a round
          // trip fewer per unit inside the batch's lock.
          lastSeq += events.length;
          committed.push(...events);
          outcomes.push({ ok: true, result, events });
        } catch (error) {
          // Alone, the whole transaction rolls back, as a unit always did; together, only this unit.
          if (alone) throw error;
          await sql`rollback to savepoint write_unit`.execute(tx);
          outcomes.push({ ok: false, error });
        }
      }
      if (committed.length > 0) {
        // The ledger leaves and the cross-instance wake-up commit (or roll back) with the changes.
        await closeBatch(tx, storage.backend, lastSeq, await planLedgerAppend(tx, committed));
      }
    });
  try {
    if (storage.flushWal) await commitThenFlush(storage, storage.flushWal, transact);
    else await transact(storage.db);
  } catch (error) {
    // Nothing of this transaction committed, or (SQLite) it committed but its WAL sync failed, so it
    // is not known to be durable: every unit in it fails with the error (a unit alone with its own
    // error; units together with the commit's or the sync's), and no caller is told it succeeded.
    for (const job of jobs) job.reject(error);
    return;
  }
  const seconds = (performance.now() - began) / 1000;
  observers.call(storage, jobs.length, seconds);
  const last = outcomes.flatMap((outcome) => (outcome.ok ? outcome.events : [])).at(-1);
  if (last) signalEventsCommitted(storage, last.seq);
  jobs.forEach((job, index) => {
    const outcome = outcomes[index] as Outcome;
    if (outcome.ok) job.resolve({ result: outcome.result, events: outcome.events });
    else job.reject(outcome.error);
  });
}

/**
 * SQLite: the transaction commits without its own fsync and the WAL is then synced off the event
 * loop (wal-flush.ts), so the thread parses and checks other requests meanwhile. The connection is
 * held until the sync returns: nothing in this process can read the commit before it is durable, and
 * the units' callers are answered only after it. If the sync fails, the units fail with its error
 * (their work may or may not survive a crash, as with a failed COMMIT).
 */
async function commitThenFlush(storage: Storage, flushWal: () => Promise<void>, transact: (db: Kysely<Database>) => Promise<void>): Promise<void> {
  await storage.db.connection().execute(async (connection) => {
    await sql`PRAGMA synchronous = NORMAL`.execute(connection);
    try {
      await transact(connection);
      await flushWal();
    } finally {
      await sql`PRAGMA synchronous = FULL`.execute(connection);
    }
  });
}

/**
 * The batch's last writes: the new sequence position, the ledger's new leaves and subtrees, and (on
 * PostgreSQL) the wake-up of other instances. On PostgreSQL they are one statement, whose
 * data-modifying CTEs each run exactly once: up to three round trips fewer per batch, made while the
 * batch holds the sequence lock. SQLite runs them as statements in the same transaction.
 */
async function closeBatch(tx: Kysely<Database>, backend: Storage['backend'], lastSeq: number, ledger: LedgerAppend | undefined): Promise<void> {
  if (backend === 'sqlite') {
    await tx.updateTable('event_sequence').set({ last_seq: lastSeq }).where('id', '=', 1).execute();
    if (ledger) await insertLedgerAppend(tx, ledger);
    return;
  }
  const leaves = ledger?.leaves ?? [];
  const nodes = ledger?.nodes ?? [];
  // Arrays bound as single parameters and unnested: one statement whatever the number of rows.
  await sql`
    with leaves as (
      insert into ledger_leaves (leaf_index, seq, leaf_hash, entry)
      select * from unnest(${leaves.map((l) => l.leaf_index)}::bigint[], ${leaves.map((l) => l.seq)}::bigint[],
                           ${leaves.map((l) => l.leaf_hash)}::text[], ${leaves.map((l) => l.entry)}::text[])
    ), nodes as (
      insert into ledger_nodes (level, node_index, hash)
      select * from unnest(${nodes.map((n) => n.level)}::integer[], ${nodes.map((n) => n.node_index)}::bigint[], ${nodes.map((n) => n.hash)}::text[])
    ), sequence_moved as (
      update event_sequence set last_seq = ${lastSeq} where id = 1
    )
    select ${commitNotification(lastSeq)}`.execute(tx);
}

async function lockSequence(tx: Kysely<Database>): Promise<number> {
  // A no-op update takes the row lock on PostgreSQL and the write lock on SQLite at once, so
  // concurrent units queue here instead of deadlocking on a later lock upgrade.
  const { rows } = await sql<{ last_seq: number | string }>`
    update event_sequence set last_seq = last_seq where id = 1 returning last_seq`.execute(tx);
  const row = rows[0];
  if (!row) throw new Error('event_sequence row is missing; were the migrations applied?');
  return Number(row.last_seq);
}
