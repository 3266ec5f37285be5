import { createHash } from 'node:crypto';

/**
 * RFC 9162 §2.1 Merkle tree hashing (the same as RFC 6962 §2.1), with SHA-256:
 * - leaf hash `SHA-256(0x00 || leaf)`, interior node `SHA-256(0x01 || left || right)`;
 * - `MTH(D[n])` splits at `k`, the largest power of two smaller than `n`;
 * - the empty tree's hash is `SHA-256()` of nothing.
 *
 * Besides the hashes this module knows the *shapes* of proofs: which subtrees an inclusion or
 * consistency proof consists of. A tree that is only appended to stores each perfect subtree
 * (2^level leaves starting at a multiple of 2^level) once it is complete, because it never changes
 * again; every subtree a proof needs is a fold of O(log n) of those. Nothing here touches storage.
 *
 * Indexes and sizes are plain numbers: arithmetic only, never 32-bit bitwise operators, so they are
 * exact up to 2^53.
 */

export const HASH_BYTES = 32;

/** `MTH({})`: SHA-256 of the empty string (RFC 9162 §2.1.1). */
export const EMPTY_ROOT: Uint8Array = sha256([]);

/** A half-open range of leaf indexes `[start, end)`. */
export type LeafRange = { readonly start: number; readonly end: number };

/** A perfect subtree: `2^level` leaves starting at leaf `index * 2^level`. Level 0 is a leaf. */
export type NodeRef = { readonly level: number; readonly index: number };

/** A perfect subtree and its hash. */
export type Node = NodeRef & { readonly hash: Uint8Array };

function sha256(parts: readonly Uint8Array[]): Uint8Array {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return new Uint8Array(hash.digest());
}

/** RFC 9162 §2.1.1: the hash of a leaf's bytes. */
export function hashLeaf(leaf: Uint8Array): Uint8Array {
  return sha256([Uint8Array.of(0x00), leaf]);
}

/** RFC 9162 §2.1.1: the hash of an interior node from its children's hashes. */
export function hashChildren(left: Uint8Array, right: Uint8Array): Uint8Array {
  return sha256([Uint8Array.of(0x01), left, right]);
}

/** The largest power of two smaller than `n` (n ≥ 2): where RFC 9162 splits a tree of n leaves. */
export function splitPoint(n: number): number {
  if (!Number.isSafeInteger(n) || n < 2) throw new RangeError(`no split for a tree of ${n} leaves`);
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** `MTH(D[n])` from the leaf hashes, by the RFC's recursive definition (reference implementation). */
export function merkleRoot(leafHashes: readonly Uint8Array[]): Uint8Array {
  if (leafHashes.length === 0) return EMPTY_ROOT;
  if (leafHashes.length === 1) return leafHashes[0] as Uint8Array;
  const k = splitPoint(leafHashes.length);
  return hashChildren(merkleRoot(leafHashes.slice(0, k)), merkleRoot(leafHashes.slice(k)));
}

/**
 * RFC 9162 §2.1.3.1 `PATH(m, D[n])` as the leaf ranges whose hashes form the inclusion proof, in
 * proof order (the leaf's sibling first, the root's child last).
 */
export function inclusionPathRanges(leafIndex: number, treeSize: number): LeafRange[] {
  if (!(Number.isSafeInteger(leafIndex) && Number.isSafeInteger(treeSize) && leafIndex >= 0 && leafIndex < treeSize)) {
    throw new RangeError(`leaf ${leafIndex} is not in a tree of ${treeSize} leaves`);
  }
  const path: LeafRange[] = [];
  // Walk down from the root, collecting the sibling of each subtree that holds the leaf; the proof
  // lists them bottom-up, so prepend.
  let start = 0;
  let end = treeSize;
  while (end - start > 1) {
    const k = splitPoint(end - start);
    if (leafIndex < start + k) {
      path.unshift({ start: start + k, end });
      end = start + k;
    } else {
      path.unshift({ start, end: start + k });
      start += k;
    }
  }
  return path;
}

/**
 * RFC 9162 §2.1.4.1 `PROOF(m, D[n])` as leaf ranges, in proof order. Empty when `first` is 0 or
 * equals `second`.
 */
export function consistencyProofRanges(first: number, second: number): LeafRange[] {
  if (!(Number.isSafeInteger(first) && Number.isSafeInteger(second) && first >= 0 && first <= second)) {
    throw new RangeError(`no consistency proof from ${first} to ${second} leaves`);
  }
  if (first === 0 || first === second) return [];
  const proof: LeafRange[] = [];
  // SUBPROOF(m, D[start:end], b), unrolled: each step appends one range after the deeper ones.
  let m = first;
  let start = 0;
  let end = second;
  let complete = true;
  for (;;) {
    const n = end - start;
    if (m === n) {
      if (!complete) proof.unshift({ start, end });
      return proof;
    }
    const k = splitPoint(n);
    if (m <= k) {
      proof.unshift({ start: start + k, end });
      end = start + k;
    } else {
      proof.unshift({ start, end: start + k });
      start += k;
      m -= k;
      complete = false;
    }
  }
}

/**
 * The perfect subtrees whose fold is `MTH(D[start:end])`, left to right: the RFC's split applied
 * until every part is a power of two. Ranges that proofs and tree heads use always start at a
 * multiple of their parts' sizes; any other range is a programmer error.
 */
export function rangeNodes(range: LeafRange): NodeRef[] {
  const nodes: NodeRef[] = [];
  let { start } = range;
  const { end } = range;
  if (!(Number.isSafeInteger(start) && Number.isSafeInteger(end) && start >= 0 && start < end)) {
    throw new RangeError(`empty or invalid leaf range [${start}, ${end})`);
  }
  while (start < end) {
    const size = end - start;
    const part = isPowerOfTwo(size) ? size : splitPoint(size);
    if (start % part !== 0) throw new RangeError(`leaf range [${range.start}, ${range.end}) is not aligned`);
    nodes.push({ level: Math.log2(part), index: start / part });
    start += part;
  }
  return nodes;
}

/** `MTH` of a range from its perfect subtrees' hashes, as {@link rangeNodes} lists them. */
export function foldNodes(hashes: readonly Uint8Array[]): Uint8Array {
  if (hashes.length === 0) throw new RangeError('nothing to fold');
  let hash = hashes[hashes.length - 1] as Uint8Array;
  for (let i = hashes.length - 2; i >= 0; i -= 1) hash = hashChildren(hashes[i] as Uint8Array, hash);
  return hash;
}

/** The perfect subtrees of a tree of `size` leaves, largest first (the fold gives its root). */
export function peaksOf(size: number): NodeRef[] {
  return size === 0 ? [] : rangeNodes({ start: 0, end: size });
}

/**
 * Appends leaf hashes to a tree given by its peaks ({@link peaksOf} with hashes). Returns the new
 * peaks and every perfect subtree the append completed, leaves included: the nodes to store.
 */
export function appendLeaves(
  peaks: readonly Node[],
  treeSize: number,
  leafHashes: readonly Uint8Array[],
): { peaks: Node[]; created: Node[] } {
  const stack = [...peaks];
  const created: Node[] = [];
  leafHashes.forEach((hash, offset) => {
    let node: Node = { level: 0, index: treeSize + offset, hash };
    created.push(node);
    // Two peaks of the same level are siblings: merge them into their parent, as in a binary counter.
    while (stack.length > 0 && (stack[stack.length - 1] as Node).level === node.level) {
      const left = stack.pop() as Node;
      node = { level: node.level + 1, index: left.index / 2, hash: hashChildren(left.hash, node.hash) };
      created.push(node);
    }
    stack.push(node);
  });
  return { peaks: stack, created };
}

function isPowerOfTwo(n: number): boolean {
  return n >= 1 && 2 ** Math.round(Math.log2(n)) === n;
}

/** Lower-case hex of a hash, the ledger's wire and storage encoding. */
export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

/** A 32-byte hash from 64 hex digits (either case); `undefined` for anything else. */
export function hashFromHex(text: string): Uint8Array | undefined {
  return /^[0-9a-fA-F]{64}$/.test(text) ? new Uint8Array(Buffer.from(text, 'hex')) : undefined;
}

/** Byte equality of two hashes (they are public values, so timing does not matter). */
export function sameHash(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.from(a).equals(Buffer.from(b));
}
