import type { Kysely } from 'kysely';
import { createTable } from './create-table.ts';
import type { Database } from '../schema.ts';
import { appendLedgerLeaves } from '../stores/ledger-store.ts';
import { listEvents } from '../stores/event-store.ts';

/**
 * The transparency ledger (docs/transparency.md): one row per leaf, and every perfect subtree hash
 * once it is complete (an append-only tree never changes them), so proofs and tree heads read
 * O(log n) rows. Events committed before this migration are appended in order, so the ledger
 * covers the registry's whole history.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createTable(db, 'ledger_leaves', {
    leaf_index: 'bigint primary key',
    seq: 'bigint not null unique',
    leaf_hash: 'text not null',
    entry: 'text not null',
  });
  await db.schema.createIndex('ledger_leaves_leaf_hash').on('ledger_leaves').column('leaf_hash').execute();

  await createTable(db, 'ledger_nodes', {
    level: 'integer not null',
    node_index: 'bigint not null',
    hash: 'text not null',
  }, { primaryKey: ['level', 'node_index'] });

  const typed = db as unknown as Kysely<Database>;
  for (let afterSeq = 0; ; ) {
    const events = await listEvents(typed, { afterSeq, limit: 500 });
    if (events.length === 0) break;
    await appendLedgerLeaves(typed, events);
    afterSeq = (events[events.length - 1] as { seq: number }).seq;
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('ledger_nodes').execute();
  await db.schema.dropTable('ledger_leaves').execute();
}
