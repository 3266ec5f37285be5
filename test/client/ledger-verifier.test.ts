import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CompactSign, exportJWK, generateKeyPair, type JWK } from 'jose';
import {
  EMPTY_ROOT,
  consistencyProofRanges,
  hashLeaf,
  inclusionPathRanges,
  merkleRoot,
  toHex,
} from '../../src/core/crypto/merkle.ts';
import { STH_JWS_TYPE } from '../../src/core/ledger-entry.ts';
import {
  TreeHeadError,
  verifyConsistency,
  verifyInclusion,
  verifySignedTreeHead,
} from '../../src/client/ledger-verifier.ts';
import { CONSISTENCY_PROOFS, INCLUSION_PROOFS, LEAF_INPUTS_HEX, ROOTS } from '../fixtures/rfc6962-vectors.ts';

const unhex = (hex: string) => new Uint8Array(Buffer.from(hex, 'hex'));
const vectorLeaves = LEAF_INPUTS_HEX.map((hex) => hashLeaf(unhex(hex)));
const leaves = Array.from({ length: 40 }, (_, i) => hashLeaf(new TextEncoder().encode(`entry ${i}`)));
const roots = Array.from({ length: leaves.length + 1 }, (_, n) => merkleRoot(leaves.slice(0, n)));
const inclusion = (m: number, n: number) => inclusionPathRanges(m, n).map((r) => merkleRoot(leaves.slice(r.start, r.end)));
const consistency = (m: number, n: number) => consistencyProofRanges(m, n).map((r) => merkleRoot(leaves.slice(r.start, r.end)));
const flipped = (hash: Uint8Array) => Uint8Array.from(hash, (byte, i) => (i === 7 ? byte ^ 1 : byte));

describe('ledger verifier: proofs', () => {
  test('the published inclusion proofs verify against the published roots', () => {
    for (const v of INCLUSION_PROOFS) {
      const ok = verifyInclusion(vectorLeaves[v.leafIndex] as Uint8Array, v.leafIndex, v.treeSize, v.path.map(unhex), unhex(ROOTS[v.treeSize] as string));
      assert.equal(ok, true, `leaf ${v.leafIndex} of ${v.treeSize}`);
    }
  });

  test('the published consistency proofs verify against the published roots', () => {
    for (const v of CONSISTENCY_PROOFS) {
      const ok = verifyConsistency(v.first, v.second, unhex(ROOTS[v.first] as string), unhex(ROOTS[v.second] as string), v.path.map(unhex));
      assert.equal(ok, true, `${v.first} → ${v.second}`);
    }
  });

  test('every inclusion proof of every tree size up to 40 verifies, and fails for another leaf, index or tree', () => {
    for (let n = 1; n <= leaves.length; n += 1) {
      for (let m = 0; m < n; m += 1) {
        const path = inclusion(m, n);
        const leaf = leaves[m] as Uint8Array;
        const root = roots[n] as Uint8Array;
        assert.equal(verifyInclusion(leaf, m, n, path, root), true, `${m}/${n}`);
        if (n === 1) continue;
        assert.equal(verifyInclusion(leaves[(m + 1) % n] as Uint8Array, m, n, path, root), false, `other leaf ${m}/${n}`);
        assert.equal(verifyInclusion(leaf, m ^ 1, n, path, root), false, `other index ${m}/${n}`);
        assert.equal(verifyInclusion(leaf, m, n, path, roots[n - 1] as Uint8Array), false, `older root ${m}/${n}`);
        if (n < leaves.length) {
          assert.equal(verifyInclusion(leaf, m, n + 1, path, roots[n + 1] as Uint8Array), false, `larger tree ${m}/${n}`);
        }
      }
    }
  });

  test('a tampered inclusion path is rejected: flipped, swapped, truncated or extended', () => {
    for (let n = 2; n <= leaves.length; n += 1) {
      for (let m = 0; m < n; m += 1) {
        const path = inclusion(m, n);
        const [leaf, root] = [leaves[m] as Uint8Array, roots[n] as Uint8Array];
        assert.equal(verifyInclusion(leaf, m, n, [...path.slice(0, -1), flipped(path.at(-1) as Uint8Array)], root), false);
        assert.equal(verifyInclusion(leaf, m, n, path.slice(0, -1), root), false);
        assert.equal(verifyInclusion(leaf, m, n, [...path, leaf], root), false);
        if (path.length >= 2) assert.equal(verifyInclusion(leaf, m, n, [path[1], path[0], ...path.slice(2)] as Uint8Array[], root), false);
      }
    }
  });

  test('every consistency proof between sizes up to 40 verifies, and fails against a rewritten history', () => {
    // The "rewritten" log: same size, one early entry replaced.
    const rewritten = leaves.map((hash, i) => (i === 3 ? hashLeaf(new TextEncoder().encode('forged')) : hash));
    for (let second = 1; second <= leaves.length; second += 1) {
      for (let first = 1; first <= second; first += 1) {
        const path = consistency(first, second);
        const [r1, r2] = [roots[first] as Uint8Array, roots[second] as Uint8Array];
        assert.equal(verifyConsistency(first, second, r1, r2, path), true, `${first} → ${second}`);
        if (first === second) continue;
        assert.equal(verifyConsistency(first, second, r1, flipped(r2), path), false);
        assert.equal(verifyConsistency(first, second, r1, r2, [...path.slice(0, -1), flipped(path.at(-1) as Uint8Array)]), false);
        assert.equal(verifyConsistency(first, second, r1, r2, path.slice(0, -1)), false);
        assert.equal(verifyConsistency(first, second, r1, r2, [...path, r1]), false);
        if (first > 3) {
          // The old head covered entry 3; the new log's proof cannot reconcile it with the forgery.
          const forgedRoot = merkleRoot(rewritten.slice(0, second));
          const forgedPath = consistencyProofRanges(first, second).map((r) => merkleRoot(rewritten.slice(r.start, r.end)));
          assert.equal(verifyConsistency(first, second, r1, forgedRoot, forgedPath), false, `rewrite ${first} → ${second}`);
        }
      }
    }
  });

  test('the degenerate cases: equal sizes need equal roots and no path; the empty tree precedes any tree', () => {
    const [r4, r5] = [roots[4] as Uint8Array, roots[5] as Uint8Array];
    assert.equal(verifyConsistency(4, 4, r4, r4, []), true);
    assert.equal(verifyConsistency(4, 4, r4, r5, []), false);
    assert.equal(verifyConsistency(4, 4, r4, r4, [r4]), false);
    assert.equal(verifyConsistency(0, 5, EMPTY_ROOT, r5, []), true);
    assert.equal(verifyConsistency(0, 5, r4, r5, []), false);
    assert.equal(verifyConsistency(5, 4, r5, r4, consistency(4, 5)), false);
    assert.equal(verifyConsistency(4, 5, r4, r5, []), false);
    assert.equal(verifyInclusion(leaves[0] as Uint8Array, 0, 0, [], EMPTY_ROOT), false);
    assert.equal(verifyInclusion(new Uint8Array(31), 0, 1, [], new Uint8Array(31)), false, 'short hashes are not hashes');
  });
});

describe('ledger verifier: signed tree heads', () => {
  async function signingKey() {
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk: JWK = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    const sign = (payload: unknown, typ = STH_JWS_TYPE) =>
      new CompactSign(new TextEncoder().encode(JSON.stringify(payload))).setProtectedHeader({ alg: 'ES256', kid: 'k1', typ }).sign(privateKey);
    return { jwks: { keys: [jwk] }, sign };
  }
  const head = { tree_size: 5, root_hash: toHex(roots[5] as Uint8Array), timestamp: '2025-01-01T00:00:00.000Z' };

  test('a tree head signed by a published key verifies and yields its size and root', async () => {
    const { jwks, sign } = await signingKey();
    const verified = await verifySignedTreeHead({ ...head, signature: await sign(head) }, jwks);
    assert.equal(verified.treeSize, 5);
    assert.equal(toHex(verified.rootHash), head.root_hash);
    assert.equal(verified.kid, 'k1');
  });

  test('a tree head whose shown size, root or time differs from what was signed is refused', async () => {
    const { jwks, sign } = await signingKey();
    const signature = await sign(head);
    for (const changed of [{ tree_size: 6 }, { root_hash: toHex(roots[4] as Uint8Array) }, { timestamp: '2025-01-02T00:00:00.000Z' }]) {
      await assert.rejects(verifySignedTreeHead({ ...head, ...changed, signature }, jwks), TreeHeadError, JSON.stringify(changed));
    }
  });

  test('a signature by another key, another JWS type or a mangled JWS is refused', async () => {
    const { jwks, sign } = await signingKey();
    const other = await signingKey();
    await assert.rejects(verifySignedTreeHead({ ...head, signature: await other.sign(head) }, jwks), /does not verify/);
    await assert.rejects(verifySignedTreeHead({ ...head, signature: await sign(head, 'JWT') }, jwks), /typed JWT/);
    const signature = await sign(head);
    const mangled = `${signature.slice(0, -4)}AAAA`;
    await assert.rejects(verifySignedTreeHead({ ...head, signature: mangled }, jwks), TreeHeadError);
    await assert.rejects(verifySignedTreeHead({ ...head, root_hash: 'zz', signature }, jwks), /64 hex/);
    await assert.rejects(verifySignedTreeHead(null, jwks), TreeHeadError);
  });
});
