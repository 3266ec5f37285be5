import { compactVerify, createLocalJWKSet, type JWK } from 'jose';
import { EMPTY_ROOT, HASH_BYTES, hashChildren, hashFromHex, sameHash } from '../core/crypto/merkle.ts';
import { STH_JWS_TYPE } from '../core/ledger-entry.ts';

/**
 * Client-side checks of the transparency ledger, with nothing but the registry's public keys:
 * RFC 9162 §2.1.3.2 (inclusion) and §2.1.4.2 (consistency) verification, and the signed tree head.
 * Proof checks answer true or false; a tree head that fails says why. No I/O, no framework: the
 * `ward ledger verify` command and any auditor can use it as is.
 */

/** Whether `path` proves the leaf with `leafHash` is leaf `leafIndex` of the tree with `rootHash` and `treeSize` leaves. */
export function verifyInclusion(
  leafHash: Uint8Array,
  leafIndex: number,
  treeSize: number,
  path: readonly Uint8Array[],
  rootHash: Uint8Array,
): boolean {
  if (!isCount(leafIndex) || !isCount(treeSize) || leafIndex >= treeSize) return false;
  if (![leafHash, rootHash, ...path].every(isHash)) return false;
  let fn = leafIndex;
  let sn = treeSize - 1;
  let r = leafHash;
  for (const p of path) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = hashChildren(p, r);
      while (fn % 2 === 0 && fn !== 0) [fn, sn] = [fn / 2, Math.floor(sn / 2)];
    } else {
      r = hashChildren(r, p);
    }
    [fn, sn] = [Math.floor(fn / 2), Math.floor(sn / 2)];
  }
  return sn === 0 && sameHash(r, rootHash);
}

/**
 * Whether `path` proves the tree of `second` leaves with `secondRoot` extends the tree of `first`
 * leaves with `firstRoot`: the log was only appended to in between. Equal sizes need an empty path
 * and equal roots; the empty tree is a prefix of every tree.
 */
export function verifyConsistency(
  first: number,
  second: number,
  firstRoot: Uint8Array,
  secondRoot: Uint8Array,
  path: readonly Uint8Array[],
): boolean {
  if (!isCount(first) || !isCount(second) || first > second) return false;
  if (![firstRoot, secondRoot, ...path].every(isHash)) return false;
  if (first === second) return path.length === 0 && sameHash(firstRoot, secondRoot);
  if (first === 0) return path.length === 0 && sameHash(firstRoot, EMPTY_ROOT);
  if (path.length === 0) return false;
  const proof = isPowerOfTwo(first) ? [firstRoot, ...path] : [...path];
  let fn = first - 1;
  let sn = second - 1;
  while (fn % 2 === 1) [fn, sn] = [Math.floor(fn / 2), Math.floor(sn / 2)];
  let fr = proof[0] as Uint8Array;
  let sr = fr;
  for (const c of proof.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = hashChildren(c, fr);
      sr = hashChildren(c, sr);
      while (fn % 2 === 0 && fn !== 0) [fn, sn] = [fn / 2, Math.floor(sn / 2)];
    } else {
      sr = hashChildren(sr, c);
    }
    [fn, sn] = [Math.floor(fn / 2), Math.floor(sn / 2)];
  }
  return sn === 0 && sameHash(fr, firstRoot) && sameHash(sr, secondRoot);
}

/** A signed tree head as `GET /v1/transparency/sth` returns it. */
export type SignedTreeHeadDocument = { tree_size: number; root_hash: string; timestamp: string; signature: string };

/** A tree head whose signature checked out. */
export type VerifiedTreeHead = { treeSize: number; rootHash: Uint8Array; timestamp: string; kid: string | undefined };

/** Why a signed tree head was refused. */
export class TreeHeadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TreeHeadError';
  }
}

const ALGORITHMS = ['ES256', 'EdDSA', 'RS256'];

/**
 * Checks a signed tree head against the registry's JWKS: the JWS verifies with one of its keys, is
 * typed as a tree head ({@link STH_JWS_TYPE}), and signs exactly the size, root and timestamp shown
 * beside it. Throws {@link TreeHeadError} otherwise.
 */
export async function verifySignedTreeHead(sth: unknown, jwks: { keys: readonly JWK[] }): Promise<VerifiedTreeHead> {
  if (typeof sth !== 'object' || sth === null) throw new TreeHeadError('the tree head is not an object');
  const { tree_size: treeSize, root_hash: rootHex, timestamp, signature } = sth as Record<string, unknown>;
  if (!isCount(treeSize)) throw new TreeHeadError('tree_size is not a non-negative integer');
  const rootHash = typeof rootHex === 'string' ? hashFromHex(rootHex) : undefined;
  if (!rootHash) throw new TreeHeadError('root_hash is not 64 hex digits');
  if (typeof timestamp !== 'string' || typeof signature !== 'string') {
    throw new TreeHeadError('timestamp and signature must be strings');
  }
  let verified: Awaited<ReturnType<typeof compactVerify>>;
  try {
    verified = await compactVerify(signature, createLocalJWKSet({ keys: [...jwks.keys] }), { algorithms: ALGORITHMS });
  } catch (error) {
    throw new TreeHeadError(`the signature does not verify with the registry's keys (${(error as Error).message})`);
  }
  if (verified.protectedHeader.typ !== STH_JWS_TYPE) {
    throw new TreeHeadError(`the JWS is typed ${String(verified.protectedHeader.typ)}, not ${STH_JWS_TYPE}`);
  }
  let signed: Record<string, unknown>;
  try {
    signed = JSON.parse(new TextDecoder().decode(verified.payload)) as Record<string, unknown>;
  } catch {
    throw new TreeHeadError('the signed payload is not JSON');
  }
  if (signed.tree_size !== treeSize || signed.root_hash !== (rootHex as string).toLowerCase() || signed.timestamp !== timestamp) {
    throw new TreeHeadError('the signed payload does not match the tree head it came with');
  }
  return { treeSize, rootHash, timestamp, kid: verified.protectedHeader.kid };
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function isHash(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array && value.length === HASH_BYTES;
}

function isPowerOfTwo(n: number): boolean {
  return n >= 1 && 2 ** Math.round(Math.log2(n)) === n;
}
