import type { Kysely } from 'kysely';
import {
  appendLeaves,
  hashFromHex,
  hashLeaf,
  peaksOf,
  toHex,
  type Node,
  type NodeRef,
} from '../../../core/crypto/merkle.ts';
import { encodeLedgerEntry, isLedgerEventType, isSealedEventType, SEALED_SUBJECT } from '../../../core/ledger-entry.ts';
import type { Database } from '../schema.ts';
import type { StoredEvent } from './event-store.ts';

/** One leaf as stored: its position, the event it records, the exact entry text and its hash. */
export type LedgerLeaf = { leafIndex: number; seq: number; leafHash: string; entry: string };

/** Rows per insert statement: far below SQLite's bound-parameter limit. */
const INSERT_CHUNK = 200;

/** The rows an append adds: its leaves, and the perfect subtrees they complete. */
export type LedgerAppend = {
  leaves: Array<{ leaf_index: number; seq: number; leaf_hash: string; entry: string; subject: string }>;
  nodes: Array<{ level: number; node_index: number; hash: string }>;
};

/**
 * Appends the ledgered events among `events` as leaves, with every perfect subtree they complete, as
 * the migration that created the ledger (003) appends the history: without the leaves' subjects,
 * whose column migration 012 adds (and fills from the entries). Write units plan the append and write
 * it with the rest of their batch (write-unit.ts). Must run where no other append can: inside a
 * transaction that holds the `event_sequence` lock, or in a migration.
 */
export async function appendLedgerLeaves(tx: Kysely<Database>, events: readonly StoredEvent[]): Promise<void> {
  const { append } = await planLedgerAppend(tx, events);
  if (!append) return;
  const leaves = append.leaves.map(({ subject: _subject, ...leaf }) => leaf);
  await insertLedgerAppend(tx, { ...append, leaves: leaves as LedgerAppend['leaves'] });
}

/** The stored tree's right edge: its size and the hashes of its peaks, all an append needs. */
export type LedgerTree = { size: number; peaks: Node[] };

/** Reads the stored tree's size and peaks. */
export async function readLedgerTree(tx: Kysely<Database>): Promise<LedgerTree> {
  const size = await ledgerTreeSize(tx);
  const peakRefs = peaksOf(size);
  const stored = await readLedgerNodes(tx, peakRefs);
  const peaks = peakRefs.map((ref) => ({ ...ref, hash: stored.get(nodeKey(ref)) as Uint8Array }));
  if (peaks.some((peak) => peak.hash === undefined)) throw new Error('the ledger is missing a subtree hash');
  return { size, peaks };
}

/**
 * The rows that append the ledgered events among `events` (`append` is undefined when there are
 * none), and the tree they make. The tree is read from the database unless `known` is given: a tree
 * the caller knows is the stored one (write-unit.ts keeps the tree its last batch made). Under the
 * `event_sequence` lock, as {@link appendLedgerLeaves}. `tree` is undefined when nothing was
 * appended and no tree was read or given.
 */
export async function planLedgerAppend(
  tx: Kysely<Database>,
  events: readonly StoredEvent[],
  known?: LedgerTree,
): Promise<{ append?: LedgerAppend; tree?: LedgerTree }> {
  const ledgered = events.filter((event) => isLedgerEventType(event.type));
  if (ledgered.length === 0) return known ? { tree: known } : {};
  const tree = known ?? (await readLedgerTree(tx));
  const entries = ledgered.map((event) => encodeLedgerEntry(event));
  const leafHashes = entries.map((entry) => hashLeaf(new TextEncoder().encode(entry)));
  const { peaks, created } = appendLeaves(tree.peaks, tree.size, leafHashes);
  return {
    append: {
      leaves: ledgered.map((event, i) => ({
        leaf_index: tree.size + i,
        seq: event.seq,
        leaf_hash: toHex(leafHashes[i] as Uint8Array),
        entry: entries[i] as string,
        // The subject the entry names: a sealed leaf's key stays out of the ledger's tables too.
        subject: isSealedEventType(event.type) ? SEALED_SUBJECT : event.subject,
      })),
      nodes: created.map((node: Node) => ({ level: node.level, node_index: node.index, hash: toHex(node.hash) })),
    },
    tree: { size: tree.size + ledgered.length, peaks },
  };
}

/** Inserts an append's rows, a chunk of rows per statement. */
export async function insertLedgerAppend(tx: Kysely<Database>, append: LedgerAppend): Promise<void> {
  for (let i = 0; i < append.leaves.length; i += INSERT_CHUNK) {
    await tx.insertInto('ledger_leaves').values(append.leaves.slice(i, i + INSERT_CHUNK)).execute();
  }
  for (let i = 0; i < append.nodes.length; i += INSERT_CHUNK) {
    await tx.insertInto('ledger_nodes').values(append.nodes.slice(i, i + INSERT_CHUNK)).execute();
  }
}

/** The number of leaves committed so far. */
export async function ledgerTreeSize(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('ledger_leaves')
    .select((eb) => eb.fn.max('leaf_index').as('last'))
    .executeTakeFirst();
  return row?.last === null || row?.last === undefined ? 0 : Number(row.last) + 1;
}

/** Stored subtree hashes by `level:index`; refs with no stored node are absent from the map. */
export async function readLedgerNodes(db: Kysely<Database>, refs: readonly NodeRef[]): Promise<Map<string, Uint8Array>> {
  const found = new Map<string, Uint8Array>();
  if (refs.length === 0) return found;
  const rows = await db
    .selectFrom('ledger_nodes')
    .select(['level', 'node_index', 'hash'])
    .where((eb) => eb.or(refs.map((ref) => eb.and([eb('level', '=', ref.level), eb('node_index', '=', ref.index)]))))
    .execute();
  for (const row of rows) {
    const hash = hashFromHex(row.hash);
    if (hash) found.set(nodeKey({ level: row.level, index: Number(row.node_index) }), hash);
  }
  return found;
}

/** The key {@link readLedgerNodes} files a node under. */
export function nodeKey(ref: NodeRef): string {
  return `${ref.level}:${ref.index}`;
}

/** Leaves `[start, end)` in index order. */
export async function listLedgerLeaves(db: Kysely<Database>, start: number, end: number): Promise<LedgerLeaf[]> {
  if (end <= start) return [];
  const rows = await db
    .selectFrom('ledger_leaves')
    .selectAll()
    .where('leaf_index', '>=', start)
    .where('leaf_index', '<', end)
    .orderBy('leaf_index', 'asc')
    .execute();
  return rows.map((row) => ({ leafIndex: Number(row.leaf_index), seq: Number(row.seq), leafHash: row.leaf_hash, entry: row.entry }));
}

/** A subject's leaves (its changes) in index order after `afterLeafIndex`, at most `limit`. */
export async function listLedgerLeavesOf(db: Kysely<Database>, subject: string, page: { afterLeafIndex?: number; limit: number }): Promise<LedgerLeaf[]> {
  let query = db.selectFrom('ledger_leaves').select(['leaf_index', 'seq', 'leaf_hash', 'entry']).where('subject', '=', subject);
  if (page.afterLeafIndex !== undefined) query = query.where('leaf_index', '>', page.afterLeafIndex);
  const rows = await query.orderBy('leaf_index', 'asc').limit(page.limit).execute();
  return rows.map((row) => ({ leafIndex: Number(row.leaf_index), seq: Number(row.seq), leafHash: row.leaf_hash, entry: row.entry }));
}

/** One leaf, if the ledger has it. */
export async function findLedgerLeaf(db: Kysely<Database>, leafIndex: number): Promise<(LedgerLeaf & { subject: string | null }) | undefined> {
  const row = await db.selectFrom('ledger_leaves').selectAll().where('leaf_index', '=', leafIndex).executeTakeFirst();
  return row && { leafIndex: Number(row.leaf_index), seq: Number(row.seq), leafHash: row.leaf_hash, entry: row.entry, subject: row.subject };
}

/** The lowest leaf index with this hash (lower-case hex), if any. */
export async function findLeafIndexByHash(db: Kysely<Database>, leafHashHex: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('ledger_leaves')
    .select('leaf_index')
    .where('leaf_hash', '=', leafHashHex)
    .orderBy('leaf_index', 'asc')
    .limit(1)
    .executeTakeFirst();
  return row ? Number(row.leaf_index) : undefined;
}
