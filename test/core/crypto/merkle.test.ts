import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import {
  EMPTY_ROOT,
  appendLeaves,
  consistencyProofRanges,
  foldNodes,
  hashChildren,
  hashLeaf,
  inclusionPathRanges,
  merkleRoot,
  peaksOf,
  rangeNodes,
  splitPoint,
  toHex,
  type LeafRange,
  type Node,
} from '../../../src/core/crypto/merkle.ts';
import { CONSISTENCY_PROOFS, INCLUSION_PROOFS, LEAF_INPUTS_HEX, ROOTS } from '../../fixtures/rfc6962-vectors.ts';

const leafHashes = LEAF_INPUTS_HEX.map((hex) => hashLeaf(new Uint8Array(Buffer.from(hex, 'hex'))));
const many = Array.from({ length: 70 }, (_, i) => hashLeaf(new TextEncoder().encode(`leaf ${i}`)));

/** Proof hashes from ranges, by the reference MTH over the leaves. */
const hashesOf = (leaves: readonly Uint8Array[], ranges: readonly LeafRange[]) =>
  ranges.map((range) => toHex(merkleRoot(leaves.slice(range.start, range.end))));

describe('RFC 9162 Merkle tree hashing', () => {
  test('leaf and node hashes use the 0x00 and 0x01 prefixes', () => {
    const sha = (bytes: number[]) => createHash('sha256').update(Uint8Array.from(bytes)).digest('hex');
    assert.equal(toHex(hashLeaf(Uint8Array.of(7))), sha([0, 7]));
    const [a, b] = [hashLeaf(Uint8Array.of(1)), hashLeaf(Uint8Array.of(2))];
    assert.equal(toHex(hashChildren(a, b)), sha([1, ...a, ...b]));
  });

  test('the root of every tree size 0 to 8 matches the published vectors', () => {
    assert.equal(toHex(EMPTY_ROOT), ROOTS[0]);
    for (let n = 0; n <= 8; n += 1) assert.equal(toHex(merkleRoot(leafHashes.slice(0, n))), ROOTS[n], `size ${n}`);
  });

  test('the split is the largest power of two smaller than n, not the midpoint', () => {
    const expected: Array<[number, number]> = [[2, 1], [3, 2], [4, 2], [5, 4], [8, 4], [9, 8], [1000, 512], [2 ** 40 + 1, 2 ** 40], [2 ** 50, 2 ** 49]];
    for (const [n, k] of expected) assert.equal(splitPoint(n), k, `n = ${n}`);
    assert.throws(() => splitPoint(1), RangeError);
  });

  test('inclusion paths match the published vectors', () => {
    for (const vector of INCLUSION_PROOFS) {
      const path = hashesOf(leafHashes, inclusionPathRanges(vector.leafIndex, vector.treeSize));
      assert.deepEqual(path, vector.path, `leaf ${vector.leafIndex} of ${vector.treeSize}`);
    }
  });

  test('consistency proofs match the published vectors', () => {
    for (const vector of CONSISTENCY_PROOFS) {
      const path = hashesOf(leafHashes, consistencyProofRanges(vector.first, vector.second));
      assert.deepEqual(path, vector.path, `${vector.first} → ${vector.second}`);
    }
  });

  test('appending leaf by leaf keeps peaks whose fold is the root, and creates each perfect subtree once', () => {
    let peaks: Node[] = [];
    const created = new Map<string, string>();
    for (let n = 0; n < many.length; n += 1) {
      const result = appendLeaves(peaks, n, [many[n] as Uint8Array]);
      peaks = result.peaks;
      for (const node of result.created) {
        const key = `${node.level}:${node.index}`;
        assert.ok(!created.has(key), `${key} created twice`);
        created.set(key, toHex(node.hash));
      }
      assert.deepEqual(peaks.map(({ level, index }) => ({ level, index })), peaksOf(n + 1));
      assert.equal(toHex(foldNodes(peaks.map((p) => p.hash))), toHex(merkleRoot(many.slice(0, n + 1))), `size ${n + 1}`);
    }
    // Every stored subtree is the MTH of its leaves.
    for (const [key, hash] of created) {
      const [level, index] = key.split(':').map(Number) as [number, number];
      const size = 2 ** level;
      assert.equal(hash, toHex(merkleRoot(many.slice(index * size, (index + 1) * size))), key);
    }
  });

  test('appending a batch gives the same nodes as appending one at a time', () => {
    const oneByOne = many.slice(0, 37).reduce<{ peaks: Node[]; created: Node[] }>(
      (state, hash, n) => {
        const next = appendLeaves(state.peaks, n, [hash]);
        return { peaks: next.peaks, created: [...state.created, ...next.created] };
      },
      { peaks: [], created: [] },
    );
    const first = appendLeaves([], 0, many.slice(0, 20));
    const batched = appendLeaves(first.peaks, 20, many.slice(20, 37));
    const keys = (nodes: Node[]) => nodes.map((n) => `${n.level}:${n.index}:${toHex(n.hash)}`).sort();
    assert.deepEqual(keys([...first.created, ...batched.created]), keys(oneByOne.created));
  });

  test('every range a proof uses folds from stored perfect subtrees to the reference hash', () => {
    const stored = new Map<string, Uint8Array>();
    for (const node of appendLeaves([], 0, many).created) stored.set(`${node.level}:${node.index}`, node.hash);
    const fold = (range: LeafRange) => toHex(foldNodes(rangeNodes(range).map((ref) => stored.get(`${ref.level}:${ref.index}`) as Uint8Array)));
    for (let n = 1; n <= many.length; n += 1) {
      for (let m = 0; m < n; m += 1) {
        for (const range of inclusionPathRanges(m, n)) assert.equal(fold(range), toHex(merkleRoot(many.slice(range.start, range.end))));
      }
      for (let first = 0; first <= n; first += 1) {
        for (const range of consistencyProofRanges(first, n)) assert.equal(fold(range), toHex(merkleRoot(many.slice(range.start, range.end))));
      }
    }
  });

  test('a range that does not start on its parts\' boundary is refused rather than hashed wrongly', () => {
    assert.throws(() => rangeNodes({ start: 1, end: 5 }), RangeError);
    assert.throws(() => rangeNodes({ start: 3, end: 3 }), RangeError);
    assert.deepEqual(rangeNodes({ start: 4, end: 7 }), [{ level: 1, index: 2 }, { level: 0, index: 6 }]);
  });

  test('impossible proof requests are programmer errors', () => {
    assert.throws(() => inclusionPathRanges(8, 8), RangeError);
    assert.throws(() => inclusionPathRanges(-1, 8), RangeError);
    assert.throws(() => consistencyProofRanges(5, 3), RangeError);
    assert.deepEqual(consistencyProofRanges(0, 8), []);
    assert.deepEqual(consistencyProofRanges(8, 8), []);
  });
});
