import type { Kysely, Selectable } from 'kysely';
import type { RunStatus } from '../../../contract/run-statuses.ts';
import type { Database } from '../../storage/schema.ts';

export { RUN_STATUSES, type RunStatus } from '../../../contract/run-statuses.ts';

type Db = Kysely<Database>;

export type RunRow = {
  session_id: string;
  status: RunStatus;
  task: string;
  persona: string;
  url: string;
  max_turns: number;
  headless: boolean;
  requested_by: string | null;
  instance_id: string;
  turns: number;
  final_answer: string | null;
  failure_reason: string | null;
  /** Sequence numbers of the run's events, each a ledger entry. */
  event_seqs: number[];
  created_at: string;
  started_at: string | null;
  ended_at: string | null;
  updated_at: string;
  /** The model name the run asked; null for runs stored before it was kept. */
  model: string | null;
};

/** One action the model asked for, as carried out; `screenshot_sha256` is of the page after it. */
export type RunAction = { type: string; screenshot_sha256: string; [parameter: string]: unknown };

export type TurnRow = {
  session_id: string;
  turn: number;
  actions: RunAction[];
  model_text: string | null;
  screenshot_sha256: string;
  /** Base64 PNG; null when the PHI guard withheld it. */
  screenshot: string | null;
  created_at: string;
};

function runFromRow(row: Selectable<Database['computer_use_runs']>): RunRow {
  return { ...row, status: row.status as RunStatus, headless: row.headless === 1, turns: Number(row.turns), max_turns: Number(row.max_turns), event_seqs: JSON.parse(row.event_seqs) as number[] };
}

export async function insertRun(tx: Db, run: Omit<RunRow, 'turns' | 'event_seqs'> & { event_seqs?: number[] }): Promise<void> {
  await tx
    .insertInto('computer_use_runs')
    .values({ ...run, headless: run.headless ? 1 : 0, event_seqs: JSON.stringify(run.event_seqs ?? []) })
    .execute();
}

export async function findRun(db: Db, sessionId: string): Promise<RunRow | undefined> {
  const row = await db.selectFrom('computer_use_runs').selectAll().where('session_id', '=', sessionId).executeTakeFirst();
  return row ? runFromRow(row) : undefined;
}

/** Newest first (session ids are ULIDs); `beforeId` continues a listing. */
export async function listRuns(db: Db, page: { beforeId?: string; limit: number; status?: RunStatus }): Promise<RunRow[]> {
  let query = db.selectFrom('computer_use_runs').selectAll();
  if (page.beforeId) query = query.where('session_id', '<', page.beforeId);
  if (page.status) query = query.where('status', '=', page.status);
  return (await query.orderBy('session_id', 'desc').limit(page.limit).execute()).map(runFromRow);
}

/**
 * Changes a run only while it is in one of `from`: false when it has moved on meanwhile (canceled by
 * another request, or on another instance), so an ended run is never reopened.
 */
export async function updateRun(
  tx: Db,
  sessionId: string,
  from: readonly RunStatus[],
  change: Partial<Pick<RunRow, 'status' | 'turns' | 'final_answer' | 'failure_reason' | 'started_at' | 'ended_at' | 'event_seqs'>> & { updated_at: string },
): Promise<boolean> {
  const { event_seqs, ...rest } = change;
  const result = await tx
    .updateTable('computer_use_runs')
    .set({ ...rest, ...(event_seqs ? { event_seqs: JSON.stringify(event_seqs) } : {}) })
    .where('session_id', '=', sessionId)
    .where('status', 'in', [...from])
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function insertTurn(tx: Db, turn: TurnRow): Promise<void> {
  await tx
    .insertInto('computer_use_turns')
    .values({ ...turn, actions: JSON.stringify(turn.actions) })
    .execute();
}

/** A run's turns in order, without the screenshots themselves. */
export async function listTurns(db: Db, sessionId: string): Promise<(Omit<TurnRow, 'screenshot'> & { screenshot_stored: boolean })[]> {
  const rows = await db
    .selectFrom('computer_use_turns')
    .select(['session_id', 'turn', 'actions', 'model_text', 'screenshot_sha256', 'created_at'])
    .select((eb) => eb('screenshot', 'is not', null).as('stored'))
    .where('session_id', '=', sessionId)
    .orderBy('turn', 'asc')
    .execute();
  return rows.map(({ stored, ...row }) => ({ ...row, turn: Number(row.turn), actions: JSON.parse(row.actions) as RunAction[], screenshot_stored: Boolean(stored) }));
}

/** One turn's screenshot: undefined when there is no such turn, `null` when it was withheld. */
export async function findScreenshot(db: Db, sessionId: string, turn: number): Promise<{ screenshot: string | null; sha256: string } | undefined> {
  const row = await db
    .selectFrom('computer_use_turns')
    .select(['screenshot', 'screenshot_sha256'])
    .where('session_id', '=', sessionId)
    .where('turn', '=', turn)
    .executeTakeFirst();
  return row ? { screenshot: row.screenshot, sha256: row.screenshot_sha256 } : undefined;
}

/** Adds sequence numbers of the run's events (called in the unit that emitted them). */
export async function appendRunEventSeqs(tx: Db, sessionId: string, seqs: readonly number[]): Promise<void> {
  const row = await tx.selectFrom('computer_use_runs').select('event_seqs').where('session_id', '=', sessionId).executeTakeFirst();
  if (!row) return;
  const known = JSON.parse(row.event_seqs) as number[];
  await tx.updateTable('computer_use_runs').set({ event_seqs: JSON.stringify([...known, ...seqs]) }).where('session_id', '=', sessionId).execute();
}

/** Runs not ended that another instance holds: the caller ends those whose instance has stopped. */
export async function listUnendedRunsElsewhere(db: Db, instanceId: string): Promise<RunRow[]> {
  const rows = await db
    .selectFrom('computer_use_runs')
    .selectAll()
    .where('status', 'in', ['queued', 'running'])
    .where('instance_id', '<>', instanceId)
    .limit(100)
    .execute();
  return rows.map(runFromRow);
}

/** Ledger leaves of the given event sequence numbers, in order. */
export async function ledgerLeavesForSeqs(db: Db, seqs: readonly number[]): Promise<{ leaf_index: number; seq: number; leaf_hash: string; entry: string }[]> {
  if (seqs.length === 0) return [];
  const rows = await db.selectFrom('ledger_leaves').selectAll().where('seq', 'in', [...seqs]).orderBy('leaf_index', 'asc').execute();
  return rows.map((row) => ({ leaf_index: Number(row.leaf_index), seq: Number(row.seq), leaf_hash: row.leaf_hash, entry: row.entry }));
}

/** How many runs the store holds in each status (for the metrics; a few rows however many runs). */
export async function countRunsByStatus(db: Db): Promise<Array<{ status: string; count: number }>> {
  const rows = await db
    .selectFrom('computer_use_runs')
    .select(['status', (eb) => eb.fn.countAll<number | string>().as('count')])
    .groupBy('status')
    .execute();
  return rows.map((row) => ({ status: row.status, count: Number(row.count) }));
}

/**
 * The session ids of the runs that opened `url`, oldest first, after `afterSessionId`: the FHIR
 * directory's `Provenance?target=<url>`. Runs are an administrator's, few, and read a page at a time.
 */
export async function listRunIdsOpening(db: Db, url: string, page: { afterSessionId?: string; limit: number }): Promise<string[]> {
  let query = db.selectFrom('computer_use_runs').select('session_id').where('url', '=', url);
  if (page.afterSessionId !== undefined) query = query.where('session_id', '>', page.afterSessionId);
  const rows = await query.orderBy('session_id', 'asc').limit(page.limit).execute();
  return rows.map((row) => row.session_id);
}
