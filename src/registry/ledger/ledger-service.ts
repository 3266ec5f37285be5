import type { Clock } from '../../core/clock.ts';
import type { RegistrySigner } from '../signing-keys/index.ts';
import {
  EMPTY_ROOT,
  consistencyProofRanges,
  foldNodes,
  inclusionPathRanges,
  rangeNodes,
  toHex,
  type LeafRange,
  type NodeRef,
} from '../../core/crypto/merkle.ts';
import { WardError } from '../../core/errors.ts';
import { STH_JWS_TYPE } from '../../core/ledger-entry.ts';
import type { Storage } from '../storage/database.ts';
import {
  findLeafIndexByHash,
  ledgerTreeSize,
  listLedgerLeaves,
  nodeKey,
  readLedgerNodes,
} from '../storage/stores/ledger-store.ts';

/** Hashes are lower-case hex throughout (docs/transparency.md). */
export type TreeHead = { tree_size: number; root_hash: string };
/** The signed part is exactly `{tree_size, root_hash, timestamp}`; `signature` is a compact JWS over it. */
export type SignedTreeHead = TreeHead & { timestamp: string; signature: string };
export type LedgerEntry = { leaf_index: number; leaf_hash: string; seq: number; leaf: string };
export type EntryPage = { tree_size: number; entries: LedgerEntry[]; next_start: number | null };
export type InclusionProof = { leaf_index: number; tree_size: number; leaf_hash: string; inclusion_path: string[] };
export type ConsistencyProof = { first: number; second: number; consistency_path: string[] };

export type LedgerService = {
  signedTreeHead(): Promise<SignedTreeHead>;
  entries(start: number, limit: number): Promise<EntryPage>;
  /** By leaf index or by leaf hash (hex); `treeSize` defaults to the current size. */
  inclusionProof(leaf: { index: number } | { hash: string }, treeSize?: number): Promise<InclusionProof>;
  /** `second` defaults to the current size. */
  consistencyProof(first: number, second?: number): Promise<ConsistencyProof>;
};

/**
 * The transparency ledger's read side (contract §6, RFC 9162 §2.1). Leaves are appended by the
 * write unit; every proof here is assembled from stored perfect-subtree hashes, O(log n) rows in
 * one query, whatever the size of the tree. Nodes are immutable once written, so no transaction is
 * needed: a size read once fixes which nodes the answer uses.
 */
export function createLedgerService(deps: { storage: Storage; signer: RegistrySigner; clock: Clock }): LedgerService {
  const { storage, signer, clock } = deps;
  const db = storage.db;

  async function rangeHashes(ranges: readonly LeafRange[]): Promise<Uint8Array[]> {
    const parts = ranges.map((range) => rangeNodes(range));
    const nodes = await readLedgerNodes(db, dedupe(parts.flat()));
    return parts.map((refs) =>
      foldNodes(
        refs.map((ref) => {
          const hash = nodes.get(nodeKey(ref));
          if (!hash) throw new Error(`ledger subtree ${nodeKey(ref)} is missing`);
          return hash;
        }),
      ),
    );
  }

  async function rootAt(size: number): Promise<Uint8Array> {
    if (size === 0) return EMPTY_ROOT;
    const [root] = await rangeHashes([{ start: 0, end: size }]);
    return root as Uint8Array;
  }

  async function sizeWithin(requested: number | undefined, pointer: string): Promise<number> {
    const current = await ledgerTreeSize(db);
    if (requested === undefined) return current;
    if (requested > current) throw invalid(pointer, `must not exceed the current tree size ${current}`);
    return requested;
  }

  return {
    async signedTreeHead() {
      const treeSize = await ledgerTreeSize(db);
      const head = { tree_size: treeSize, root_hash: toHex(await rootAt(treeSize)), timestamp: clock.now().toISOString() };
      return { ...head, signature: await signer.sign(head, STH_JWS_TYPE) };
    },

    async entries(start, limit) {
      const treeSize = await ledgerTreeSize(db);
      const end = Math.min(start + limit, treeSize);
      const leaves = await listLedgerLeaves(db, start, end);
      return {
        tree_size: treeSize,
        entries: leaves.map((leaf) => ({ leaf_index: leaf.leafIndex, leaf_hash: leaf.leafHash, seq: leaf.seq, leaf: leaf.entry })),
        next_start: end < treeSize ? end : null,
      };
    },

    async inclusionProof(leaf, requestedSize) {
      const treeSize = await sizeWithin(requestedSize, '/tree_size');
      let leafIndex: number;
      if ('index' in leaf) {
        if (leaf.index >= treeSize) throw invalid('/leaf_index', `must be below the tree size ${treeSize}`);
        leafIndex = leaf.index;
      } else {
        const found = await findLeafIndexByHash(db, leaf.hash.toLowerCase());
        if (found === undefined || found >= treeSize) {
          throw new WardError('LEDGER_ENTRY_NOT_FOUND', undefined, { leaf_hash: leaf.hash, tree_size: treeSize });
        }
        leafIndex = found;
      }
      const [leafHash, ...path] = await rangeHashes([
        { start: leafIndex, end: leafIndex + 1 },
        ...inclusionPathRanges(leafIndex, treeSize),
      ]);
      return { leaf_index: leafIndex, tree_size: treeSize, leaf_hash: toHex(leafHash as Uint8Array), inclusion_path: path.map(toHex) };
    },

    async consistencyProof(first, requestedSecond) {
      const second = await sizeWithin(requestedSecond, '/second');
      if (first > second) throw invalid('/first', `must not exceed second (${second})`);
      const path = await rangeHashes(consistencyProofRanges(first, second));
      return { first, second, consistency_path: path.map(toHex) };
    },
  };
}

function invalid(pointer: string, reason: string): WardError {
  return new WardError('VALIDATION_ERROR', 'The request failed validation.', { errors: [{ in: 'query', pointer, reason }] });
}

function dedupe(refs: readonly NodeRef[]): NodeRef[] {
  const seen = new Map<string, NodeRef>();
  for (const ref of refs) seen.set(nodeKey(ref), ref);
  return [...seen.values()];
}
