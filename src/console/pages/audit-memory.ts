/**
 * The signed tree heads this console has verified, per registry: what `/audit`'s consistency check
 * starts from.
 *
 * Why the console remembers them: the registry's API signs only its *current* head
 * (`GET /v1/transparency/sth`); it offers no signed head of an earlier size. A consistency proof is
 * worth something only from an earlier head the checker itself verified, and that head must come
 * from somewhere other than the registry being checked, or a registry that rewrote its history could
 * simply sign a matching "earlier" head today. So each head the console has verified is kept here,
 * and a later check proves that the current log extends it: that nothing recorded by then was
 * changed, dropped or reordered since (docs/transparency.md; `ward ledger verify --state` keeps its
 * head in a file for the same reason).
 *
 * What is kept is the size and root the console verified while that head was current (with when it
 * was signed and by which key, to show), not the signature: the signature was checked then, against
 * the keys the registry published then, and need not be checked again. A key rotated away since (even
 * withdrawn at once, `retire_after_seconds: 0`) must not turn every earlier head into one that "does
 * not verify" (`auditLedger`'s `previousVerified`). Only a head whose signature this process verified
 * is ever recorded ({@link rememberHead} takes a verified head).
 *
 * Process memory, as the alert rules keep theirs (../alerts/alert-rules.ts): a restart forgets, and
 * heads are not shared between console instances. One head per tree size and root (a later head of
 * the same size with another root is kept too, because that is a fork worth checking), in order of
 * size whatever order checks finish in, at most {@link MAX_HEADS} per registry, the smallest dropped
 * first.
 */
import { toHex } from '../../core/crypto/merkle.ts';
import type { SignedTreeHeadDocument, VerifiedTreeHead } from '../../client/ledger-verifier.ts';

export type RecordedHead = {
  tree_size: number;
  /** Lower-case hex. */
  root_hash: string;
  /** When the registry signed it. */
  timestamp: string;
  /** The key that signed it (it may have been rotated away since). */
  kid: string | undefined;
  /** Stable name of this head for forms and links: `<tree_size>-<root_hash>`. */
  key: string;
  /** When this console verified it. */
  recordedAt: string;
};

export const MAX_HEADS = 100;

const memory = new Map<string, RecordedHead[]>();

export const headKey = (head: Pick<SignedTreeHeadDocument, 'tree_size' | 'root_hash'>) => `${head.tree_size}-${head.root_hash.toLowerCase()}`;

/** Keeps a head the caller has just verified (its signature checked against the registry's keys). */
export function rememberHead(registryUrl: string, head: VerifiedTreeHead, now: Date = new Date()): void {
  const heads = memory.get(registryUrl) ?? [];
  const recorded = { tree_size: head.treeSize, root_hash: toHex(head.rootHash), timestamp: head.timestamp, kid: head.kid };
  const key = headKey(recorded);
  if (heads.some((known) => known.key === key)) return;
  // After every head of its size or smaller: a check that finishes late does not put an older head after a newer one.
  const at = heads.findIndex((known) => known.tree_size > recorded.tree_size);
  heads.splice(at === -1 ? heads.length : at, 0, { ...recorded, key, recordedAt: now.toISOString() });
  while (heads.length > MAX_HEADS) heads.shift();
  memory.set(registryUrl, heads);
}

/** The heads recorded for a registry, smallest (oldest) first. */
export function recordedHeads(registryUrl: string): readonly RecordedHead[] {
  return memory.get(registryUrl) ?? [];
}

export function findHead(registryUrl: string, key: string): RecordedHead | undefined {
  return recordedHeads(registryUrl).find((head) => head.key === key);
}
