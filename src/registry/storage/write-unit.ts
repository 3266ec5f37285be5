import { randomUUID } from 'node:crypto';
import { sql, type ControlledTransaction, type Kysely } from 'kysely';
import type { Storage } from './database.ts';
import type { Database } from './schema.ts';
import { commitNotification, signalEventsCommitted } from './commit-signal.ts';
import { callbacksPerStorage } from './storage-callbacks.ts';
import { eventRows, insertEventRows, numberEvents, type EventRow, type NewEvent, type StoredEvent } from './stores/event-store.ts';
import { ClaimLostError, completeClaims, completionRow, type ClaimCompletion, type CompletionRow } from './stores/idempotency-store.ts';
import { isSealedEventType, LEDGER_SALT_MEMBER, withLedgerSalt } from '../../core/ledger-entry.ts';
import { insertLedgerAppend, planLedgerAppend, type LedgerAppend, type LedgerTree } from './stores/ledger-store.ts';

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
 *
 * **What a batch sends.** The units' own statements, and then one closing write for the whole batch:
 * every unit's events (numbered as the units ran, inserted only at the close), the ledger's new leaves
 * and subtrees, the sequence's new position and (PostgreSQL) the wake-up of other instances. On
 * PostgreSQL, where each statement is a round trip made while the batch holds the lock, that closing
 * write is one statement, and the next batch's transaction begins and queues on the lock inside
 * PostgreSQL while this one commits, so it runs the moment the lock is free instead of a round trip
 * later. The ledger's tree is read only when this process wrote the last batch: each batch stores a
 * random token with the sequence position, the lock statement reads both back, and a process that
 * finds its own token and position uses the tree its last batch made.
 *
 * A unit's events and stored answer are checked and put in their stored form inside the unit, so one
 * the tables would refuse fails that unit alone. Only a failure of the closing write itself (or of the
 * commit) fails the batch.
 */
export type WriteUnit = {
  readonly tx: Kysely<Database>;
  emit(event: NewEvent): void;
  /** Runs `step` in this transaction once the emitted events have their sequence numbers. */
  afterEvents(step: (events: readonly StoredEvent[]) => Promise<void>): void;
  /**
   * Keeps an idempotent request's answer with this unit's change: written by the batch's closing
   * write, in the same transaction, and dropped with the unit if it fails.
   */
  completeClaim(completion: ClaimCompletion): void;
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
    if (storage.backend === 'sqlite') setImmediate(() => void drainSqlite(storage, joined));
    else void drainPostgres(storage, joined);
  }
  return outcome as Promise<{ result: T; events: StoredEvent[] }>;
}

/** What a batch's units did: an outcome per unit, and the ledger tree after them with the token that marks it. */
type BatchResult = { outcomes: Outcome[]; kept: KeptTree | undefined };

/**
 * The ledger tree as a batch of this process left it, with the token and sequence position that batch
 * stored. Both must be read back for the tree to be used: the token changes with every batch of this
 * build, and the position with every event any build writes (an instance of an older build, during a
 * rolling upgrade, writes no token).
 */
type KeptTree = { token: string; seq: number; tree: LedgerTree };
const keptTrees = new WeakMap<Storage, KeptTree>();

/** Runs the waiting units, a transaction at a time, until none wait. */
async function drainSqlite(storage: Storage, queue: Queue): Promise<void> {
  try {
    while (queue.waiting.length > 0) {
      const jobs = queue.waiting.splice(0, MAX_UNITS_PER_COMMIT);
      const began = performance.now();
      let batch: BatchResult | undefined;
      const transact = (db: Kysely<Database>) =>
        db.transaction().execute(async (tx) => {
          batch = await runBatch(storage, tx, await lockSequence(tx), jobs);
        });
      try {
        if (storage.flushWal) await commitThenFlush(storage, storage.flushWal, transact);
        else await transact(storage.db);
      } catch (error) {
        failBatch(jobs, error);
        continue;
      }
      settleBatch(storage, jobs, batch as BatchResult, began);
    }
  } finally {
    queue.running = false;
  }
}

/**
 * As {@link drainSqlite}, with controlled transactions: when units are waiting as a batch commits,
 * the next batch's transaction is opened before the commit is sent, and its lock statement waits in
 * PostgreSQL. Its units are the ones waiting once it holds the lock, so units that arrive during
 * the commit still join it.
 */
async function drainPostgres(storage: Storage, queue: Queue): Promise<void> {
  let next: Promise<Opened> | undefined = openLocked(storage.db);
  try {
    while (next) {
      const opened = await next;
      next = undefined;
      const jobs = queue.waiting.splice(0, MAX_UNITS_PER_COMMIT);
      const began = performance.now();
      if ('error' in opened) {
        failBatch(jobs, opened.error);
      } else {
        let batch: BatchResult | undefined;
        try {
          batch = await runBatch(storage, opened.tx, opened.locked, jobs);
        } catch (error) {
          await opened.tx.rollback().execute().catch(() => undefined);
          failBatch(jobs, error);
        }
        if (batch) {
          if (queue.waiting.length > 0) next = openLocked(storage.db);
          let committed = false;
          try {
            await opened.tx.commit().execute();
            committed = true;
          } catch (error) {
            // Kysely gives the connection back only after a COMMIT that succeeded; ROLLBACK always does.
            await opened.tx.rollback().execute().catch(() => undefined);
            failBatch(jobs, error);
          }
          if (committed) settleBatch(storage, jobs, batch, began);
        }
      }
      if (!next && queue.waiting.length > 0) next = openLocked(storage.db);
    }
  } finally {
    queue.running = false;
  }
}

/** A transaction that holds the sequence lock, or why none could be opened (never a rejection). */
type Opened = { tx: ControlledTransaction<Database>; locked: Locked } | { error: unknown };

async function openLocked(db: Kysely<Database>): Promise<Opened> {
  let tx: ControlledTransaction<Database> | undefined;
  try {
    tx = await db.startTransaction().execute();
    return { tx, locked: await lockSequence(tx) };
  } catch (error) {
    await tx?.rollback().execute().catch(() => undefined);
    return { error };
  }
}

/**
 * Runs `jobs` in `tx`, which holds the sequence lock, and writes the batch's close. Throws when the
 * batch cannot commit: a unit alone failed, or the close failed.
 */
async function runBatch(storage: Storage, tx: Kysely<Database>, locked: Locked, jobs: Job[]): Promise<BatchResult> {
  const alone = jobs.length === 1;
  const outcomes: Outcome[] = [];
  let lastSeq = locked.seq;
  const events: StoredEvent[] = [];
  const rows: EventRow[] = [];
  const completions: CompletionRow[] = [];
  for (const job of jobs) {
    if (!alone) await sql`savepoint write_unit`.execute(tx);
    try {
      const pending: NewEvent[] = [];
      const afterSteps: ((events: readonly StoredEvent[]) => Promise<void>)[] = [];
      const unitCompletions: ClaimCompletion[] = [];
      const result = await job.work({
        tx,
        // A sealed event (an organisation's key) gets the salt its ledger leaf needs here, where no
        // emitter can forget it (core/ledger-entry.ts).
        emit: (event) => pending.push(isSealedEventType(event.type) && !(LEDGER_SALT_MEMBER in event.data) ? { ...event, data: withLedgerSalt(event.data) } : event),
        afterEvents: (step) => afterSteps.push(step),
        completeClaim: (completion) => unitCompletions.push(completion),
      });
      const unitEvents = numberEvents(lastSeq, pending);
      // In their stored form here, so an event or answer the tables would refuse fails this unit only.
      const unitRows = eventRows(unitEvents);
      const unitCompletionRows = unitCompletions.map(completionRow);
      for (const step of afterSteps) await step(unitEvents);
      // Not released: each unit's savepoint is a new one of the same name, which the next unit's
      // ROLLBACK TO would never reach, and COMMIT releases them all. On PostgreSQL that is a round
      // trip fewer per unit inside the batch's lock.
      lastSeq += unitEvents.length;
      events.push(...unitEvents);
      rows.push(...unitRows);
      completions.push(...unitCompletionRows);
      outcomes.push({ ok: true, result, events: unitEvents });
    } catch (error) {
      // Alone, the whole transaction rolls back, as a unit always did; together, only this unit.
      if (alone) throw error;
      await sql`rollback to savepoint write_unit`.execute(tx);
      outcomes.push({ ok: false, error });
    }
  }
  const previous = keptTrees.get(storage);
  const stillStored = previous !== undefined && previous.token === locked.token && previous.seq === locked.seq;
  const known = stillStored ? previous.tree : undefined;
  if (events.length === 0 && completions.length === 0) return { outcomes, kept: stillStored ? previous : undefined };
  // The events, the ledger leaves, the stored answers and the cross-instance wake-up commit (or roll
  // back) with the changes.
  const planned = await planLedgerAppend(tx, events, known);
  const token = randomUUID();
  await closeBatch(tx, storage.backend, { lastSeq, token, events: rows, ledger: planned.append, completions });
  return { outcomes, kept: planned.tree ? { token, seq: lastSeq, tree: planned.tree } : undefined };
}

/** Nothing of the batch committed, or it is not known to be durable: every unit fails. */
function failBatch(jobs: Job[], error: unknown): void {
  // A unit alone fails with its own error; units together with the commit's or the sync's. No caller
  // is told it succeeded. (The kept tree stays: its token says whether it is still the stored one.)
  for (const job of jobs) job.reject(error);
}

/**
 * The batch committed (and on SQLite its WAL is synced): its callers are answered, then this
 * process's observers and readers are told. Callers go first so that a callback that throws can
 * never turn a committed write into a refused one; their continuations run only after this returns.
 */
function settleBatch(storage: Storage, jobs: Job[], batch: BatchResult, began: number): void {
  if (batch.kept) keptTrees.set(storage, batch.kept);
  else keptTrees.delete(storage);
  jobs.forEach((job, index) => {
    const outcome = batch.outcomes[index] as Outcome;
    if (outcome.ok) job.resolve({ result: outcome.result, events: outcome.events });
    else job.reject(outcome.error);
  });
  observers.call(storage, jobs.length, (performance.now() - began) / 1000);
  const last = batch.outcomes.flatMap((outcome) => (outcome.ok ? outcome.events : [])).at(-1);
  if (last) signalEventsCommitted(storage, last.seq);
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

/** What a batch's closing write stores. */
type BatchClose = {
  lastSeq: number;
  token: string;
  events: readonly EventRow[];
  ledger: LedgerAppend | undefined;
  completions: readonly CompletionRow[];
};

/**
 * The batch's last writes: its events, the new sequence position and token, the ledger's new leaves
 * and subtrees, the answers of its idempotent requests and (on PostgreSQL, when there are events) the
 * wake-up of other instances. On PostgreSQL they are one statement, whose data-modifying CTEs each run
 * exactly once: one round trip, made while the batch holds the sequence lock, whatever the number of
 * units and events. SQLite runs them as statements in the same transaction.
 */
async function closeBatch(tx: Kysely<Database>, backend: Storage['backend'], close: BatchClose): Promise<void> {
  const { lastSeq, token, events, ledger, completions } = close;
  if (backend === 'sqlite') {
    await insertEventRows(tx, events);
    await tx.updateTable('event_sequence').set({ last_seq: lastSeq, batch_token: token }).where('id', '=', 1).execute();
    if (ledger) await insertLedgerAppend(tx, ledger);
    await completeClaims(tx, completions);
    return;
  }
  const leaves = ledger?.leaves ?? [];
  const nodes = ledger?.nodes ?? [];
  // Arrays bound as single parameters and unnested: one statement whatever the number of rows.
  const { rows } = await sql<{ answered: number | string }>`
    with events as (
      insert into events (seq, type, occurred_at, subject, data)
      select * from unnest(${events.map((e) => e.seq)}::bigint[], ${events.map((e) => e.type)}::text[],
                           ${events.map((e) => e.occurred_at)}::text[], ${events.map((e) => e.subject)}::text[],
                           ${events.map((e) => e.data)}::text[])
    ), leaves as (
      insert into ledger_leaves (leaf_index, seq, leaf_hash, entry, subject)
      select * from unnest(${leaves.map((l) => l.leaf_index)}::bigint[], ${leaves.map((l) => l.seq)}::bigint[],
                           ${leaves.map((l) => l.leaf_hash)}::text[], ${leaves.map((l) => l.entry)}::text[],
                           ${leaves.map((l) => l.subject)}::text[])
    ), nodes as (
      insert into ledger_nodes (level, node_index, hash)
      select * from unnest(${nodes.map((n) => n.level)}::integer[], ${nodes.map((n) => n.node_index)}::bigint[], ${nodes.map((n) => n.hash)}::text[])
    ), answers as (
      update idempotency_keys k
      set state = 'completed', status_code = a.status_code, response_headers = a.headers, response_body = a.body
      from unnest(${completions.map((c) => c.scope_key)}::text[], ${completions.map((c) => c.status_code)}::integer[],
                  ${completions.map((c) => c.headers)}::text[], ${completions.map((c) => c.body)}::text[],
                  ${completions.map((c) => c.claim_token)}::text[])
           as a(scope_key, status_code, headers, body, claim_token)
      where k.scope_key = a.scope_key and k.state = 'in_progress' and k.claim_token is not distinct from a.claim_token
      returning k.scope_key
    ), sequence_moved as (
      update event_sequence set last_seq = ${lastSeq}, batch_token = ${token} where id = 1
    )
    select (select count(*) from answers) as answered, ${events.length > 0 ? commitNotification(lastSeq) : sql`null`}`.execute(tx);
  // A claim another instance took over (its holder's heartbeat lapsed) keeps the taker's run: this
  // batch rolls back rather than store a second answer (idempotency-store.ts).
  if (Number(rows[0]?.answered ?? 0) !== completions.length) throw new ClaimLostError(completions.map((c) => c.scope_key));
}

/** The sequence position under the lock, and the token of the batch that wrote it (null before any). */
type Locked = { seq: number; token: string | null };

async function lockSequence(tx: Kysely<Database>): Promise<Locked> {
  // A no-op update takes the row lock on PostgreSQL and the write lock on SQLite at once, so
  // concurrent units queue here instead of deadlocking on a later lock upgrade.
  const { rows } = await sql<{ last_seq: number | string; batch_token: string | null }>`
    update event_sequence set last_seq = last_seq where id = 1 returning last_seq, batch_token`.execute(tx);
  const row = rows[0];
  if (!row) throw new Error('event_sequence row is missing; were the migrations applied?');
  return { seq: Number(row.last_seq), token: row.batch_token };
}
