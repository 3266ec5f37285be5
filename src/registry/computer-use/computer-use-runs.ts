/**
 * Computer-use runs (docs/computer-use.md): an administrator's natural-language task, carried out in the
 * console by the model, turn by turn, in a browser signed in as that administrator and restricted to
 * the run's persona.
 *
 * - A run is stored when it is asked for (`queued`) and runs on the instance that accepted it, at most
 *   `COMPUTER_USE_MAX_RUNS` at once; the rest wait in order.
 * - Each turn: the model sees the latest screenshot, asks for actions, the actions are carried out in
 *   the page, and each answer carries the new screenshot. The turn, its actions and their screenshots'
 *   SHA-256 are stored and ledgered together, in one write.
 * - A run ends on the model's final answer (`completed`), at `max_turns` (`max_turns_reached`), on
 *   cancel (`canceled`), or on an error (`failed`, with the reason). Every status change is guarded by
 *   the status it leaves, so a cancel on any instance wins over a turn still in flight, and an ended run
 *   never changes again.
 * - Free text (the model's words, typed text, the final answer) and screenshots pass the PHI guard
 *   before they are stored; the ledger holds digests, never the text.
 *
 * This file is the queue and what the API asks of runs; one run's loop is run-execution.ts, its
 * credential run-credential.ts, what it records run-records.ts.
 */
import type { CallContext } from '../../core/call-context.ts';
import type { Clock } from '../../core/clock.ts';
import { WardError } from '../../core/errors.ts';
import { newUlid } from '../../core/ids.ts';
import type { Storage } from '../storage/database.ts';
import {
  findRun,
  findScreenshot,
  insertRun,
  ledgerLeavesForSeqs,
  listRuns,
  listTurns,
  listUnendedRunsElsewhere,
  updateRun,
  type RunRow,
  type RunStatus,
} from '../storage/stores/computer-use-store.ts';
import { runWrite, type WriteUnit } from '../storage/write-unit.ts';
import { DEFAULT_PERSONA, type Persona } from '../../contract/personas.ts';
import { decodeCursor, encodeCursor } from '../http/cursor.ts';
import type { ApiKeyService } from '../keys/api-key-service.ts';
import type { ComputerUseModel } from './computer-use-model.ts';
import type { ConsoleBrowser } from './console-browser.ts';
import { createRunCredentials, type RunRequester } from './run-credential.ts';
import { createRunExecution, type EndFields, type LocalRun } from './run-execution.ts';
import { keepEventSeqs, sha256, summary } from './run-records.ts';

export type { RunRequester } from './run-credential.ts';

export type RunRequest = { task: string; url?: string | undefined; persona?: Persona | undefined; max_turns?: number | undefined; headless?: boolean | undefined };

export type RunDeps = {
  storage: Storage;
  clock: Clock;
  browser: ConsoleBrowser;
  model: () => ComputerUseModel;
  maxRuns: number;
  instanceId: string;
  /** Whether another instance still runs (its heartbeat); its unended runs are failed otherwise. */
  isInstanceLive: (instanceId: string) => Promise<boolean>;
  /** Where the browser may go. */
  allowedOrigins: () => string[];
  /** The console's origin: the one place a run signs in. */
  consoleOrigin: () => string;
  /** Mints the run's own console credential, and revokes it when the run ends. */
  apiKeys: ApiKeyService;
  /** How long one model call may take: a run's credential lives for its turns at most. */
  modelTimeoutSeconds: number;
  log: (error: unknown, message: string) => void;
};

export function createComputerUseRuns(deps: RunDeps) {
  const { storage, clock } = deps;
  const waiting: LocalRun[] = [];
  const running = new Map<string, LocalRun>();
  const finished = new Set<Promise<void>>();
  let closed = false;
  const now = () => clock.now().toISOString();

  /** One write of a run: its events' sequence numbers are kept with it, in the same transaction. */
  async function writeRun<T>(sessionId: string, work: (unit: WriteUnit) => Promise<T>): Promise<T> {
    const { result } = await runWrite(storage, async (unit) => {
      keepEventSeqs(unit, sessionId);
      return work(unit);
    });
    return result;
  }

  /** Ends a run still queued or running; false when it had already ended. */
  async function end(sessionId: string, status: RunStatus, fields: EndFields): Promise<boolean> {
    return writeRun(sessionId, async (unit) => {
      const at = now();
      const ended = await updateRun(unit.tx, sessionId, ['queued', 'running'], { status, ended_at: at, updated_at: at, ...fields });
      if (ended) {
        const run = await findRun(unit.tx, sessionId);
        unit.emit({
          type: 'computer_use.ended',
          subject: sessionId,
          occurred_at: at,
          data: { session_id: sessionId, status, turns: run?.turns ?? 0, ...(fields.final_answer ? { final_answer_sha256: sha256(fields.final_answer) } : {}) },
        });
      }
      return ended;
    });
  }

  const credentials = createRunCredentials({ storage, clock, apiKeys: deps.apiKeys, modelTimeoutSeconds: deps.modelTimeoutSeconds, writeRun, log: deps.log });
  const execute = createRunExecution({
    storage,
    clock,
    browser: deps.browser,
    model: deps.model,
    allowedOrigins: deps.allowedOrigins,
    consoleOrigin: deps.consoleOrigin,
    credentials,
    writeRun,
    end,
    log: deps.log,
  });

  function pump(): void {
    while (!closed && running.size < deps.maxRuns && waiting.length > 0) {
      const local = waiting.shift() as LocalRun;
      running.set(local.sessionId, local);
      const done = execute(local)
        .catch((error: unknown) => deps.log(error, 'computer-use run failed unexpectedly'))
        .finally(() => {
          running.delete(local.sessionId);
          finished.delete(done);
          pump();
        });
      finished.add(done);
    }
  }

  async function view(run: RunRow) {
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

  async function sweepOrphans(): Promise<void> {
    const runs = await listUnendedRunsElsewhere(storage.db, deps.instanceId);
    const live = new Map<string, boolean>();
    for (const run of runs) {
      if (!live.has(run.instance_id)) live.set(run.instance_id, await deps.isInstanceLive(run.instance_id));
      if (!live.get(run.instance_id)) await end(run.session_id, 'failed', { failure_reason: 'the registry instance running it stopped before it ended' });
    }
  }

  return {
    /**
     * Stores a queued run in `unit` (its `computer_use.requested` event with it). `begin` then hands
     * it to the queue once the unit has committed.
     */
    async create(unit: WriteUnit, ctx: CallContext, request: RunRequest & { url: string }): Promise<RunRow> {
      const at = ctx.clock.now().toISOString();
      const sessionId = newUlid(ctx.clock.now().getTime());
      const run: RunRow = {
        session_id: sessionId,
        status: 'queued',
        task: request.task,
        persona: request.persona ?? DEFAULT_PERSONA,
        url: request.url,
        max_turns: request.max_turns ?? 20,
        headless: request.headless ?? true,
        requested_by: ctx.principal.credentialId,
        instance_id: deps.instanceId,
        turns: 0,
        final_answer: null,
        failure_reason: null,
        event_seqs: [],
        created_at: at,
        started_at: null,
        ended_at: null,
        updated_at: at,
      };
      await insertRun(unit.tx, run);
      keepEventSeqs(unit, sessionId);
      unit.emit({
        type: 'computer_use.requested',
        subject: sessionId,
        occurred_at: at,
        data: { session_id: sessionId, persona: run.persona, url: run.url, task_sha256: sha256(run.task), max_turns: run.max_turns, headless: run.headless, requested_by: run.requested_by },
      });
      return run;
    },

    /** Queues a committed run; it starts once fewer than `COMPUTER_USE_MAX_RUNS` run here. */
    begin(sessionId: string, requester: RunRequester): void {
      if (closed) return;
      waiting.push({ sessionId, requester, controller: new AbortController() });
      pump();
    },

    async get(sessionId: string) {
      const run = await findRun(storage.db, sessionId);
      if (!run) throw new WardError('RUN_NOT_FOUND', undefined, { session_id: sessionId });
      return view(run);
    },

    async list(page: { cursor?: string | undefined; limit: number; status?: RunStatus | undefined }) {
      const beforeId = page.cursor === undefined ? undefined : decodeCursor(page.cursor, 'computer-use-runs');
      const rows = await listRuns(storage.db, { limit: page.limit + 1, ...(beforeId ? { beforeId } : {}), ...(page.status ? { status: page.status } : {}) });
      const shown = rows.slice(0, page.limit);
      const last = shown.at(-1);
      return { runs: shown.map(summary), next_cursor: rows.length > page.limit && last ? encodeCursor('computer-use-runs', last.session_id) : null };
    },

    /** Cancels a queued or running run (the running one stops within its turn); 409 once it has ended. */
    async cancel(unit: WriteUnit, ctx: CallContext, sessionId: string): Promise<void> {
      const run = await findRun(unit.tx, sessionId);
      if (!run) throw new WardError('RUN_NOT_FOUND', undefined, { session_id: sessionId });
      const at = ctx.clock.now().toISOString();
      // Inside the write unit nothing can end the run between the read above and this guarded update.
      if (!(await updateRun(unit.tx, sessionId, ['queued', 'running'], { status: 'canceled', ended_at: at, updated_at: at }))) {
        throw new WardError('INVALID_STATE_TRANSITION', `The run has already ended (${run.status}).`, { session_id: sessionId, status: run.status });
      }
      keepEventSeqs(unit, sessionId);
      unit.emit({ type: 'computer_use.ended', subject: sessionId, occurred_at: at, data: { session_id: sessionId, status: 'canceled', turns: run.turns, canceled_by: ctx.principal.credentialId } });
    },

    /** After a cancel has committed: a run of this instance stops at once. */
    stopLocally(sessionId: string): void {
      const queued = waiting.findIndex((local) => local.sessionId === sessionId);
      if (queued >= 0) waiting.splice(queued, 1);
      running.get(sessionId)?.controller.abort();
    },

    async screenshot(sessionId: string, turn: number): Promise<Buffer> {
      const shot = await findScreenshot(storage.db, sessionId, turn);
      if (!shot) throw new WardError('RUN_NOT_FOUND', `The run has no turn ${turn}.`, { session_id: sessionId, turn });
      if (shot.screenshot === null) {
        throw new WardError('RUN_NOT_FOUND', `The screenshot of turn ${turn} was withheld: the PHI guard found health data on the page.`, { session_id: sessionId, turn, withheld: 'phi', screenshot_sha256: shot.sha256 });
      }
      return Buffer.from(shot.screenshot, 'base64');
    },

    sweepOrphans,

    /** Stops every run of this instance, recording each as failed, before storage closes. */
    async close(): Promise<void> {
      closed = true;
      const stopped = [...waiting.splice(0), ...running.values()];
      for (const local of stopped) local.controller.abort();
      await Promise.allSettled([...finished]);
      for (const local of stopped) {
        await end(local.sessionId, 'failed', { failure_reason: 'the registry shut down during the run' }).catch((error: unknown) => deps.log(error, 'could not record a run stopped at shutdown'));
      }
    },
  };
}

export type ComputerUseRuns = ReturnType<typeof createComputerUseRuns>;
