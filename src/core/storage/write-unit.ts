import { sql, type Kysely } from 'kysely';
import type { Storage } from './database.ts';
import type { Database } from './schema.ts';
import { announceCommitInTransaction, signalEventsCommitted } from './commit-signal.ts';
import { insertEvents, type NewEvent, type StoredEvent } from './stores/event-store.ts';
import { appendLedgerLeaves } from './stores/ledger-store.ts';

/**
 * One registry mutation: a transaction plus the events it emits. Every write goes through
 * `runWrite`, which is what makes the event log trustworthy:
 * - the transaction first takes the lock on the single `event_sequence` row, so writers are
 *   serialised and sequence numbers are gap-free in commit order (a reader can never see n+1
 *   while n is still uncommitted);
 * - events are inserted in the same transaction as the change, so no change is without its event
 *   and no event describes a change that rolled back;
 * - checks made inside the unit (conflicts, versions, transitions) see every committed write;
 * - every event of a mutation becomes a transparency-ledger leaf in the same transaction, and
 *   stream readers are woken once it commits (commit-signal.ts).
 */
export type WriteUnit = {
  readonly tx: Kysely<Database>;
  emit(event: NewEvent): void;
  /** Runs `step` in this transaction once the emitted events have their sequence numbers. */
  afterEvents(step: (events: readonly StoredEvent[]) => Promise<void>): void;
};

export async function runWrite<T>(
  storage: Storage,
  work: (unit: WriteUnit) => Promise<T>,
): Promise<{ result: T; events: StoredEvent[] }> {
  const outcome = await storage.db.transaction().execute(async (tx) => {
    const lastSeq = await lockSequence(tx);
    const pending: NewEvent[] = [];
    const afterSteps: ((events: readonly StoredEvent[]) => Promise<void>)[] = [];
    const result = await work({ tx, emit: (event) => pending.push(event), afterEvents: (step) => afterSteps.push(step) });
    const events = await insertEvents(tx, lastSeq, pending);
    for (const step of afterSteps) await step(events);
    if (events.length > 0) {
      await tx
        .updateTable('event_sequence')
        .set({ last_seq: lastSeq + events.length })
        .where('id', '=', 1)
        .execute();
      // The ledger leaves and the cross-instance wake-up commit (or roll back) with the change.
      await appendLedgerLeaves(tx, events);
      await announceCommitInTransaction(tx, storage.backend, lastSeq + events.length);
    }
    return { result, events };
  });
  const last = outcome.events.at(-1);
  if (last) signalEventsCommitted(storage, last.seq);
  return outcome;
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
