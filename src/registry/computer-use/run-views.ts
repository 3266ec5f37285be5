/**
 * What the API shows of stored runs: one run with its turns and ledger entries, a page of runs, a
 * turn's screenshot. Reads only; the runs' writes are computer-use-runs.ts and run-execution.ts.
 */
import { WardError } from '../../core/errors.ts';
import type { Storage } from '../storage/database.ts';
import { findRun, findScreenshot, ledgerLeavesForSeqs, listRuns, listTurns, type RunRow, type RunStatus } from './storage/computer-use-store.ts';
import { decodeCursor, encodeCursor } from '../../contract/cursor.ts';
import { summary } from './run-records.ts';

/** A run with its turns (screenshots by address) and the ledger entries it wrote. */
export async function runView(storage: Storage, sessionId: string) {
  const run = await findRun(storage.db, sessionId);
  if (!run) throw new WardError('RUN_NOT_FOUND', undefined, { session_id: sessionId });
  const [turns, leaves] = await Promise.all([listTurns(storage.db, run.session_id), ledgerLeavesForSeqs(storage.db, run.event_seqs)]);
  return {
    ...summary(run),
    turns: turns.map((turn) => ({
      turn: turn.turn,
      actions: turn.actions,
      model_text: turn.model_text,
      screenshot_sha256: turn.screenshot_sha256,
      screenshot_url: turn.screenshot_stored ? `/v1/admin/computer-use/runs/${run.session_id}/screenshots/${turn.turn}` : null,
      created_at: turn.created_at,
    })),
    ledger_entries: leaves.map((leaf) => ({ leaf_index: leaf.leaf_index, leaf_hash: leaf.leaf_hash, seq: leaf.seq, type: (JSON.parse(leaf.entry) as { type: string }).type })),
  };
}

/** Runs newest first, a page at a time. */
export async function runPage(storage: Storage, page: { cursor?: string | undefined; limit: number; status?: RunStatus | undefined }) {
  const beforeId = page.cursor === undefined ? undefined : decodeCursor(page.cursor, 'computer-use-runs');
  const rows: RunRow[] = await listRuns(storage.db, { limit: page.limit + 1, ...(beforeId ? { beforeId } : {}), ...(page.status ? { status: page.status } : {}) });
  const shown = rows.slice(0, page.limit);
  const last = shown.at(-1);
  return { runs: shown.map(summary), next_cursor: rows.length > page.limit && last ? encodeCursor('computer-use-runs', last.session_id) : null };
}

/** A turn's screenshot; 404 when the turn has none, or the PHI guard withheld it (its digest is kept). */
export async function runScreenshot(storage: Storage, sessionId: string, turn: number): Promise<Buffer> {
  const shot = await findScreenshot(storage.db, sessionId, turn);
  if (!shot) throw new WardError('RUN_NOT_FOUND', `The run has no turn ${turn}.`, { session_id: sessionId, turn });
  if (shot.screenshot === null) {
    throw new WardError('RUN_NOT_FOUND', `The screenshot of turn ${turn} was withheld: the PHI guard found health data on the page.`, { session_id: sessionId, turn, withheld: 'phi', screenshot_sha256: shot.sha256 });
  }
  return Buffer.from(shot.screenshot, 'base64');
}
