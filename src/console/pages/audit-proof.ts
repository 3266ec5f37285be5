/**
 * An inclusion proof worked through step by step, for a person to follow: the same walk as RFC 9162
 * §2.1.3.2 (and `verifyInclusion` in src/client/ledger-verifier.ts), keeping each
 * intermediate hash. The verdict the page shows is `verifyInclusion`'s own; this only shows the way.
 */
import { hashChildren, inclusionPathRanges, type LeafRange } from '../../core/crypto/merkle.ts';

export type InclusionStep = {
  /** The proof's hash at this step, and the leaves its subtree covers when the proof fits the tree. */
  sibling: Uint8Array;
  covers: LeafRange | undefined;
  /** Which side the sibling goes: `left` means hash(sibling ‖ running). */
  side: 'left' | 'right';
  result: Uint8Array;
};

export type InclusionWalk = {
  steps: InclusionStep[];
  /** The root the walk arrives at, or undefined when the path has the wrong length for the tree. */
  root: Uint8Array | undefined;
  /** Why the walk did not arrive anywhere, if it did not. */
  problem?: string;
};

export function walkInclusion(leafHash: Uint8Array, leafIndex: number, treeSize: number, path: readonly Uint8Array[]): InclusionWalk {
  if (!Number.isSafeInteger(leafIndex) || !Number.isSafeInteger(treeSize) || leafIndex < 0 || leafIndex >= treeSize) {
    return { steps: [], root: undefined, problem: `leaf ${leafIndex} is not in a tree of ${treeSize} leaves` };
  }
  const ranges = inclusionPathRanges(leafIndex, treeSize);
  const steps: InclusionStep[] = [];
  let fn = leafIndex;
  let sn = treeSize - 1;
  let running = leafHash;
  for (const [index, sibling] of path.entries()) {
    if (sn === 0) return { steps, root: undefined, problem: `the path has ${path.length} hashes; a leaf of this tree needs ${ranges.length}` };
    let side: 'left' | 'right';
    if (fn % 2 === 1 || fn === sn) {
      running = hashChildren(sibling, running);
      side = 'left';
      while (fn % 2 === 0 && fn !== 0) [fn, sn] = [fn / 2, Math.floor(sn / 2)];
    } else {
      running = hashChildren(running, sibling);
      side = 'right';
    }
    [fn, sn] = [Math.floor(fn / 2), Math.floor(sn / 2)];
    steps.push({ sibling, covers: path.length === ranges.length ? ranges[index] : undefined, side, result: running });
  }
  if (sn !== 0) return { steps, root: undefined, problem: `the path has ${path.length} hashes; a leaf of this tree needs ${ranges.length}` };
  return { steps, root: running };
}
