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
 * This file is what the API asks of runs: it stores them, queues them (run-queue.ts), ends and cancels
 * them. One run's loop is run-execution.ts, its credential run-credential.ts, what it records
 * run-records.ts, what the API shows of it run-views.ts.
 */
import type { CallContext } from '../../core/call-context.ts';
import type { Clock } from '../../core/clock.ts';
import { WardError } from '../../core/errors.ts';
import { newUlid } from '../../core/ids.ts';
import type { Storage } from '../storage/database.ts';
import { findRun, insertRun, listUnendedRunsElsewhere, updateRun, type RunRow, type RunStatus } from './storage/computer-use-store.ts';
import { runWrite, type WriteUnit } from '../storage/write-unit.ts';
import { DEFAULT_PERSONA, type Persona } from '../../contract/personas.ts';
import type { ApiKeyService } from '../credentials/index.ts';
import type { ComputerUseModel } from '../../computer-use/computer-use-model.ts';
import type { ConsoleBrowser } from '../../computer-use/console-browser.ts';
import { createRunCredentials, type RunRequester } from './run-credential.ts';
import { createRunExecution, type EndFields } from './run-execution.ts';
import { RunQueue } from './run-queue.ts';
import { keepEventSeqs, sha256 } from './run-records.ts';
import { runPage, runScreenshot, runView } from './run-views.ts';

export type { RunRequester } from './run-credential.ts';

export type RunRequest = { task: string; url?: string | undefined; persona?: Persona | undefined; max_turns?: number | undefined; headless?: boolean | undefined };

export type RunDeps = {
  storage: Storage;
  clock: Clock;
  browser: ConsoleBrowser;
  model: () => ComputerUseModel;
  /** The model name runs ask (COMPUTER_USE_MODEL), kept with each run. */
  modelName: string;
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

/** One write of a run: its events' sequence numbers are kept with it, in the same transaction. */
async function writeRun<T>(storage: Storage, sessionId: string, work: (unit: WriteUnit) => Promise<T>): Promise<T> {
  const { result } = await runWrite(storage, async (unit) => {
    keepEventSeqs(unit, sessionId);
    return work(unit);
  });
  return result;
}

/** Ends a run still queued or running; false when it had already ended. */
async function endRun(deps: RunDeps, sessionId: string, status: RunStatus, fields: EndFields): Promise<boolean> {
  return writeRun(deps.storage, sessionId, async (unit) => {
    const at = deps.clock.now().toISOString();
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

/** Stores a queued run in `unit`, its `computer_use.requested` event with it. */
async function storeRequestedRun(unit: WriteUnit, ctx: CallContext, instanceId: string, modelName: string, request: RunRequest & { url: string }): Promise<RunRow> {
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
    instance_id: instanceId,
    turns: 0,
    final_answer: null,
    failure_reason: null,
    event_seqs: [],
    created_at: at,
    started_at: null,
    ended_at: null,
    updated_at: at,
    model: modelName,
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
}

/** Cancels a queued or running run in `unit`; 409 once it has ended. */
async function cancelRun(unit: WriteUnit, ctx: CallContext, sessionId: string): Promise<void> {
  const run = await findRun(unit.tx, sessionId);
  if (!run) throw new WardError('RUN_NOT_FOUND', undefined, { session_id: sessionId });
  const at = ctx.clock.now().toISOString();
  // Inside the write unit nothing can end the run between the read above and this guarded update.
  if (!(await updateRun(unit.tx, sessionId, ['queued', 'running'], { status: 'canceled', ended_at: at, updated_at: at }))) {
    throw new WardError('INVALID_STATE_TRANSITION', `The run has already ended (${run.status}).`, { session_id: sessionId, status: run.status });
  }
  keepEventSeqs(unit, sessionId);
  unit.emit({ type: 'computer_use.ended', subject: sessionId, occurred_at: at, data: { session_id: sessionId, status: 'canceled', turns: run.turns, canceled_by: ctx.principal.credentialId } });
}

/** Fails the unended runs of instances that have stopped (their heartbeat has lapsed). */
async function sweepOrphans(deps: RunDeps): Promise<void> {
  const runs = await listUnendedRunsElsewhere(deps.storage.db, deps.instanceId);
  const live = new Map<string, boolean>();
  for (const run of runs) {
    if (!live.has(run.instance_id)) live.set(run.instance_id, await deps.isInstanceLive(run.instance_id));
    if (!live.get(run.instance_id)) await endRun(deps, run.session_id, 'failed', { failure_reason: 'the registry instance running it stopped before it ended' });
  }
}

export function createComputerUseRuns(deps: RunDeps) {
  const { storage, clock } = deps;
  const write = <T>(sessionId: string, work: (unit: WriteUnit) => Promise<T>) => writeRun(storage, sessionId, work);
  const end = (sessionId: string, status: RunStatus, fields: EndFields) => endRun(deps, sessionId, status, fields);
  const credentials = createRunCredentials({ storage, clock, apiKeys: deps.apiKeys, modelTimeoutSeconds: deps.modelTimeoutSeconds, writeRun: write, log: deps.log });
  const execute = createRunExecution({ ...deps, credentials, writeRun: write, end });
  const queue = new RunQueue(execute, deps.maxRuns, deps.log);

  return {
    /** Stores a queued run in `unit`; `begin` then hands it to the queue once the unit has committed. */
    create: (unit: WriteUnit, ctx: CallContext, request: RunRequest & { url: string }) => storeRequestedRun(unit, ctx, deps.instanceId, deps.modelName, request),
    /** Queues a committed run; it starts once fewer than `COMPUTER_USE_MAX_RUNS` run here. */
    begin: (sessionId: string, requester: RunRequester) => queue.add(sessionId, requester),
    get: (sessionId: string) => runView(storage, sessionId),
    list: (page: { cursor?: string | undefined; limit: number; status?: RunStatus | undefined }) => runPage(storage, page),
    /** Cancels a queued or running run (the running one stops within its turn); 409 once it has ended. */
    cancel: cancelRun,
    /** After a cancel has committed: a run of this instance stops at once. */
    stopLocally: (sessionId: string) => queue.stop(sessionId),
    screenshot: (sessionId: string, turn: number) => runScreenshot(storage, sessionId, turn),
    sweepOrphans: () => sweepOrphans(deps),

    /** Stops every run of this instance, recording each as failed, before storage closes. */
    async close(): Promise<void> {
      for (const local of await queue.close()) {
        await end(local.sessionId, 'failed', { failure_reason: 'the registry shut down during the run' }).catch((error: unknown) => deps.log(error, 'could not record a run stopped at shutdown'));
      }
    },
  };
}

export type ComputerUseRuns = ReturnType<typeof createComputerUseRuns>;
