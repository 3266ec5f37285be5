import type { JWK } from 'jose';
import {
  EMPTY_ROOT,
  appendLeaves,
  foldNodes,
  hashFromHex,
  hashLeaf,
  sameHash,
  toHex,
  type Node,
} from '../core/crypto/merkle.ts';
import {
  TreeHeadError,
  verifyConsistency,
  verifyInclusion,
  verifySignedTreeHead,
  type SignedTreeHeadDocument,
  type VerifiedTreeHead,
} from './ledger-verifier.ts';
import type { RegistryAnswer } from './registry-answer.ts';
import type { RegistryClient } from './registry-client.ts';

export type LedgerAuditOptions = {
  /** The registry to audit, through its client (`ward ledger verify` makes one for `--url`; the console passes a session's). */
  registry: RegistryClient;
  /** Leaf indexes whose entry and inclusion in the signed tree head to check. */
  leaves?: readonly number[];
  /**
   * A tree head this client verified before, as the signed document (what `ward ledger verify --state`
   * saves): its signature is checked again against today's keys, then the current head must be
   * consistent with it.
   */
  previous?: SignedTreeHeadDocument | undefined;
  /**
   * A tree head this client verified itself while it was current, held by the client since (the
   * console's memory): the current head must be consistent with it. Its signature is not checked
   * again, so a head whose key has since been rotated away (even retired at once) still counts;
   * only a caller that checked the signature at the time and kept the figures itself may pass one.
   */
  previousVerified?: { treeSize: number; rootHash: string } | undefined;
  /** Download every entry and recompute the root from the leaves (O(n); for audits). */
  full?: boolean;
};

export type AuditCheck = { name: string; ok: boolean; detail: string };
export type LedgerAuditReport = {
  ok: boolean;
  checks: AuditCheck[];
  /** The current signed tree head, as served, once its signature verified. */
  treeHead?: SignedTreeHeadDocument;
  /** What that signature vouches for, and which key made it. */
  verified?: VerifiedTreeHead;
};

type EntryDocument = { leaf_index: number; leaf_hash: string; seq: number; leaf: string };

/**
 * What `ward ledger verify` does, as a library: fetches the registry's JWKS and signed tree head
 * and checks the head's signature, then (as asked) its consistency with an earlier head, the
 * inclusion of chosen leaves (hashing the entry text itself, never trusting the hash the registry
 * lists) and the whole tree. Every proof is checked against the signed root only. Never throws for
 * a failed check: the report lists each with its outcome.
 */
export async function auditLedger(options: LedgerAuditOptions): Promise<LedgerAuditReport> {
  const checks: AuditCheck[] = [];
  const pass = (name: string, detail: string) => checks.push({ name, ok: true, detail });
  const fail = (name: string, detail: string) => checks.push({ name, ok: false, detail });
  const get = reader(options.registry);
  try {
    const jwks = (await get.jwks()) as { keys: JWK[] };
    const document = (await get.treeHead()) as SignedTreeHeadDocument;
    let head: VerifiedTreeHead;
    try {
      head = await verifySignedTreeHead(document, jwks);
      pass('signed tree head', `size ${head.treeSize}, root ${toHex(head.rootHash)}, signed by ${head.kid ?? '?'}`);
    } catch (error) {
      fail('signed tree head', error instanceof TreeHeadError ? error.message : String(error));
      return { ok: false, checks };
    }

    if (options.previous) await checkSignedConsistency(options.previous, head, jwks, get, pass, fail);
    if (options.previousVerified) await checkVerifiedConsistency(options.previousVerified, head, get, pass, fail);
    for (const leafIndex of options.leaves ?? []) await checkInclusion(leafIndex, head, get, pass, fail);
    if (options.full) await checkWholeTree(head, get, pass, fail);
    return { ok: checks.every((check) => check.ok), checks, treeHead: document, verified: head };
  } catch (error) {
    fail('registry', (error as Error).message);
    return { ok: false, checks };
  }
}

type Report = (name: string, detail: string) => void;
type Get = ReturnType<typeof reader>;

/**
 * The client's calls the audit makes, each giving the body of a success and throwing otherwise (the
 * audit then reports the registry as unreadable, not the ledger as broken).
 */
function reader(registry: RegistryClient) {
  const body = async <T>(what: string, pending: Promise<RegistryAnswer<T>>): Promise<T> => {
    const answer = await pending;
    if (!answer.ok) throw new Error(`${what} answered ${answer.status ?? 'nothing'} ${answer.envelope.error.code}: ${answer.envelope.error.message}`);
    return answer.body;
  };
  return {
    jwks: () => body('GET /.well-known/jwks.json', registry.jwks()),
    treeHead: () => body('GET /v1/transparency/sth', registry.treeHead()),
    entries: (start: number, limit: number) => body('GET /v1/transparency/entries', registry.ledgerEntries({ start, limit })),
    inclusion: (leafIndex: number, treeSize: number) =>
      body('GET /v1/transparency/proof/inclusion', registry.inclusionProof({ leaf_index: leafIndex, tree_size: treeSize })),
    consistency: (first: number, second: number) => body('GET /v1/transparency/proof/consistency', registry.consistencyProof({ first, second })),
  };
}

/** From a signed head document: its signature is verified again against today's keys first. */
async function checkSignedConsistency(
  previous: SignedTreeHeadDocument,
  head: VerifiedTreeHead,
  jwks: { keys: JWK[] },
  get: Get,
  pass: Report,
  fail: Report,
): Promise<void> {
  let before: VerifiedTreeHead;
  try {
    before = await verifySignedTreeHead(previous, jwks);
  } catch (error) {
    return fail(`consistency ${previous.tree_size} → ${head.treeSize}`, `the earlier tree head does not verify: ${(error as Error).message}`);
  }
  return checkConsistency(before, head, get, pass, fail);
}

/** From the size and root of a head the caller verified when it was current: taken as they are. */
async function checkVerifiedConsistency(
  previous: { treeSize: number; rootHash: string },
  head: VerifiedTreeHead,
  get: Get,
  pass: Report,
  fail: Report,
): Promise<void> {
  const { treeSize } = previous;
  const rootHash = typeof previous.rootHash === 'string' ? hashFromHex(previous.rootHash) : undefined;
  if (!Number.isSafeInteger(treeSize) || treeSize < 0 || !rootHash) {
    return fail(`consistency ${String(treeSize)} → ${head.treeSize}`, 'the earlier head is not a tree head: its size must be a count and its root 64 hex digits');
  }
  return checkConsistency({ treeSize, rootHash }, head, get, pass, fail);
}

async function checkConsistency(
  before: Pick<VerifiedTreeHead, 'treeSize' | 'rootHash'>,
  head: VerifiedTreeHead,
  get: Get,
  pass: Report,
  fail: Report,
): Promise<void> {
  const name = `consistency ${before.treeSize} → ${head.treeSize}`;
  if (before.treeSize > head.treeSize) return fail(name, 'the log is smaller than it was: history was removed');
  const proof = await get.consistency(before.treeSize, head.treeSize);
  const path = decodePath(proof.consistency_path);
  if (path && verifyConsistency(before.treeSize, head.treeSize, before.rootHash, head.rootHash, path)) {
    pass(name, 'the current log extends the earlier one');
  } else {
    fail(name, 'the current log does not extend the earlier one: history was rewritten');
  }
}

async function checkInclusion(leafIndex: number, head: VerifiedTreeHead, get: Get, pass: Report, fail: Report): Promise<void> {
  const name = `inclusion of leaf ${leafIndex}`;
  if (!Number.isSafeInteger(leafIndex) || leafIndex < 0 || leafIndex >= head.treeSize) {
    return fail(name, `not a leaf of the signed tree (size ${head.treeSize})`);
  }
  const page = (await get.entries(leafIndex, 1)) as { entries: EntryDocument[] };
  const entry = page.entries[0];
  if (!entry || entry.leaf_index !== leafIndex) return fail(name, 'the registry did not return the entry');
  const leafHash = hashLeaf(new TextEncoder().encode(entry.leaf));
  const proof = await get.inclusion(leafIndex, head.treeSize);
  const path = decodePath(proof.inclusion_path);
  if (path && verifyInclusion(leafHash, leafIndex, head.treeSize, path, head.rootHash)) {
    pass(name, `seq ${entry.seq}, leaf hash ${toHex(leafHash)}`);
  } else {
    fail(name, 'the entry as served is not the one the signed tree contains: it was altered');
  }
}

async function checkWholeTree(head: VerifiedTreeHead, get: Get, pass: Report, fail: Report): Promise<void> {
  const name = `every leaf of ${head.treeSize}`;
  // Folded into the tree's peaks page by page: O(n) time, O(log n) memory, whatever the size.
  let peaks: Node[] = [];
  let count = 0;
  while (count < head.treeSize) {
    const page = (await get.entries(count, 100)) as { entries: EntryDocument[] };
    const entries = page.entries.slice(0, head.treeSize - count);
    if (entries.length === 0) return fail(name, `the registry served ${count} entries only`);
    if (entries.some((entry, i) => entry.leaf_index !== count + i)) return fail(name, `the entries after ${count} are out of order`);
    const leafHashes = entries.map((entry) => hashLeaf(new TextEncoder().encode(entry.leaf)));
    peaks = appendLeaves(peaks, count, leafHashes).peaks;
    count += entries.length;
  }
  const root = count === 0 ? EMPTY_ROOT : foldNodes(peaks.map((peak) => peak.hash));
  if (sameHash(root, head.rootHash)) pass(name, 'the entries hash to the signed root');
  else fail(name, 'the entries do not hash to the signed root: an entry was altered');
}

function decodePath(path: unknown): Uint8Array[] | undefined {
  if (!Array.isArray(path)) return undefined;
  const hashes = path.map((item) => (typeof item === 'string' ? hashFromHex(item) : undefined));
  return hashes.every((hash) => hash !== undefined) ? (hashes as Uint8Array[]) : undefined;
}
