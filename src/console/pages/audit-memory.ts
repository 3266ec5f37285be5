/**
 * The signed tree heads this console has verified, per registry: what `/audit`'s consistency check
 * starts from.
 *
 * Why the console remembers them: the registry's API signs only its *current* head
 * (`GET /v1/transparency/sth`); it offers no signed head of an earlier size. A consistency proof is
 * worth something only between two heads the checker holds signed copies of, and the earlier one must
 * come from somewhere other than the registry being checked, or a registry that rewrote its history
 * could simply sign a matching "earlier" head today. So each head the console has verified is kept
 * here, with its signature, and a later check proves that the current log extends it: that nothing
 * recorded by then was changed, dropped or reordered since (docs/transparency.md; `ward ledger verify
 * --state` keeps its head in a file for the same reason).
 *
 * Process memory, as the alert rules keep theirs (../alerts/alert-rules.ts): a restart forgets, and
 * heads are not shared between console instances. One head per tree size (the first seen; a later
 * head of the same size with another root is kept too, because that is a fork worth checking), at most
 * {@link MAX_HEADS} per registry, oldest dropped first.
 */
import type { SignedTreeHeadDocument } from '../../registry/ledger/ledger-verifier.ts';

export type RecordedHead = SignedTreeHeadDocument & {
  /** Stable name of this head for forms and links: `<tree_size>-<root_hash>`. */
  key: string;
  /** When this console verified it. */
  recordedAt: string;
};

export const MAX_HEADS = 100;

const memory = new Map<string, RecordedHead[]>();

export const headKey = (head: Pick<SignedTreeHeadDocument, 'tree_size' | 'root_hash'>) => `${head.tree_size}-${head.root_hash.toLowerCase()}`;

/** Keeps a head the caller has just verified (never an unverified one). */
export function rememberHead(registryUrl: string, head: SignedTreeHeadDocument, now: Date = new Date()): void {
  const heads = memory.get(registryUrl) ?? [];
  const key = headKey(head);
  if (heads.some((known) => known.key === key)) return;
  const { tree_size, root_hash, timestamp, signature } = head;
  heads.push({ tree_size, root_hash, timestamp, signature, key, recordedAt: now.toISOString() });
  while (heads.length > MAX_HEADS) heads.shift();
  memory.set(registryUrl, heads);
}

/** The heads recorded for a registry, oldest first. */
export function recordedHeads(registryUrl: string): readonly RecordedHead[] {
  return memory.get(registryUrl) ?? [];
}

export function findHead(registryUrl: string, key: string): RecordedHead | undefined {
  return recordedHeads(registryUrl).find((head) => head.key === key);
}
