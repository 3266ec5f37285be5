/**
 * The one PHI guard for content that enters the registry (specification rule 1: the registry never
 * stores protected health information; docs/security.md, "Ways in"). Request bodies are refused at
 * the HTTP edge (http/phi-guard.ts) before anything runs; whatever becomes record content by any other
 * way (a fetched card at registration, a scheduled re-read, a federation answer merged into discovery,
 * anything a later feature fetches) passes here, at the write of the record itself
 * (stores/agent-store.ts) or where a foreign answer is taken in (federation/child-discovery.ts).
 * test/architecture/ingestion-paths.test.ts finds the ways in and fails when one does not pass here.
 */
import { WardError } from '../../core/errors.ts';
import { scanForPhi, scanTextForPhi, type PhiFinding } from '../../core/phi/index.ts';

/** What the scan finds in `content` (never the values themselves). */
export function phiInContent(content: unknown): PhiFinding[] {
  return scanForPhi(content);
}

/** What the scan finds in one free text the registry is about to keep (a computer-use run's page text, typed text). */
export function phiInText(text: string): PhiFinding[] {
  return scanTextForPhi(text);
}

/** The value at an RFC 6901 pointer, or undefined. */
function valueAt(value: unknown, pointer: string): unknown {
  let current = value;
  for (const token of pointer.split('/').slice(1)) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string, unknown>)[token.replaceAll('~1', '/').replaceAll('~0', '~')];
  }
  return current;
}

/**
 * Throws 422 `PHI_DETECTED` (findings `{detector, in, pointer}`, never the value) when `content`
 * carries PHI; `where` names the content the pointers are into (`record`: the agent record as it
 * would be written). Inside a write unit, the throw rolls the whole unit back: nothing is written.
 * `before` (the record as stored, for a replacement): a finding whose value is unchanged since then
 * does not refuse, so content accepted under an earlier guard never blocks a status change (an
 * operator must still be able to suspend or revoke the agent); whatever is new or changed is scanned.
 */
export function refusePhiContent(content: unknown, where = 'record', before?: unknown): void {
  const found = phiInContent(content);
  const same = (pointer: string) => JSON.stringify(valueAt(before, pointer)) === JSON.stringify(valueAt(content, pointer));
  const findings = before === undefined ? found : found.filter((finding) => !same(finding.pointer));
  if (findings.length === 0) return;
  throw new WardError('PHI_DETECTED', 'The content would bring protected health information into the registry; nothing was written.', {
    findings: findings.map((finding) => ({ detector: finding.detector, in: where, pointer: finding.pointer })),
  });
}
