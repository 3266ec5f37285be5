/**
 * One computer-use run, from `queued` to its end (docs/computer-use.md, "The flow"): the console
 * opened under the run's own credential, the first screenshot and the `started` entry, then turn after
 * turn — the model asks, the browser acts, the turn is one write — until the model answers, the turns
 * run out, a cancel or shutdown stops it, or something fails. Whatever ends it, the browser is closed,
 * refused requests are recorded and the run's credential revoked before its end is written.
 */
import type { Clock } from '../../core/clock.ts';
import type { Storage } from '../storage/database.ts';
import { findRun, insertTurn, updateRun, type RunAction, type RunRow, type RunStatus } from './storage/computer-use-store.ts';
import type { WriteUnit } from '../storage/write-unit.ts';
import { systemPrompt, type Persona } from '../../contract/personas.ts';
import { ActionError, carryOut, type DrivenPage, type ToolInput } from '../../computer-use/browser-actions.ts';
import { ModelCallError, type ComputerUseModel, type ModelContentBlock, type ModelMessageParam, type ModelToolUseBlock } from '../../computer-use/computer-use-model.ts';
import { SignInRefused, type ConsoleBrowser, type ConsoleSession } from '../../computer-use/console-browser.ts';
import type { RunCredentials, RunRequester } from './run-credential.ts';
import {
  CREDENTIAL_REFUSED,
  RunFailure,
  addressNote,
  capture,
  describeAction,
  firstLine,
  forgetOldScreenshots,
  guardText,
  imageBlock,
  ledgerBlocked,
  ledgerForm,
  sha256,
  type Capture,
} from './run-records.ts';

/** A run this instance holds. */
export type LocalRun = { sessionId: string; requester: RunRequester; controller: AbortController };

export type EndFields = { turns?: number; final_answer?: string | null; failure_reason?: string | null };

export type RunExecutionDeps = {
  storage: Storage;
  clock: Clock;
  browser: ConsoleBrowser;
  model: () => ComputerUseModel;
  allowedOrigins: () => string[];
  /** The console's origin: the one place a run signs in. */
  consoleOrigin: () => string;
  credentials: RunCredentials;
  writeRun: <T>(sessionId: string, work: (unit: WriteUnit) => Promise<T>) => Promise<T>;
  /** Ends a run still queued or running; false when it had already ended. */
  end: (sessionId: string, status: RunStatus, fields: EndFields) => Promise<boolean>;
  log: (error: unknown, message: string) => void;
};

/** What a run holds while it runs, let go of by `release`. */
type Held = { deps: RunExecutionDeps; run: RunRow; local: LocalRun; session?: ConsoleSession | undefined; credential?: { keyId: string } | undefined; recordedBlocked: number; turnsDone: number };

const now = (held: Held) => held.deps.clock.now().toISOString();


/** Requests the browser refused since the last write, as ledger entries of `turn`. */
function emitBlocked(held: Held, unit: WriteUnit, turn: number, from = held.session): void {
  const fresh = from?.blocked.slice(held.recordedBlocked) ?? [];
  held.recordedBlocked += fresh.length;
  const sessionId = held.run.session_id;
  for (const blocked of fresh) unit.emit({ type: 'computer_use.blocked', subject: sessionId, occurred_at: now(held), data: { session_id: sessionId, turn, ...ledgerBlocked(blocked) } });
}

/**
 * Lets go of what the run holds, before its end is written (so whoever sees the end finds its
 * credential revoked) and again on the way out: the browser, the refusals not yet recorded, and the
 * run's credential.
 */
async function release(held: Held): Promise<void> {
  const open = held.session;
  held.session = undefined;
  await open?.close().catch(() => undefined);
  if (open && open.blocked.length > held.recordedBlocked) {
    await held.deps
      .writeRun(held.run.session_id, async (unit) => emitBlocked(held, unit, held.turnsDone, open))
      .catch((error: unknown) => held.deps.log(error, "could not record a run's blocked requests"));
  }
  const credential = held.credential;
  held.credential = undefined;
  if (credential) await held.deps.credentials.revoke(held.run.session_id, credential.keyId);
}

async function finish(held: Held, status: RunStatus, fields: EndFields): Promise<void> {
  await release(held);
  await held.deps.end(held.run.session_id, status, fields);
}

/** The console, signed in with a key minted for the run when it asks, at the run's address. */
async function openConsole(held: Held): Promise<ConsoleSession> {
  const { run, local } = held;
  const consoleOrigin = held.deps.consoleOrigin();
  let session: ConsoleSession;
  try {
    session = await held.deps.browser.open({
      consoleOrigin,
      allowedOrigins: held.deps.allowedOrigins(),
      credential: async () => {
        const minted = await held.deps.credentials.mint(run, local.requester);
        held.credential = minted;
        return minted.rawKey;
      },
      persona: run.persona,
      headless: run.headless,
    });
    held.session = session;
    await session.page.goto(run.url, { waitUntil: 'load' });
  } catch (error) {
    if (error instanceof SignInRefused) throw new RunFailure(CREDENTIAL_REFUSED);
    throw new RunFailure(`the console at ${consoleOrigin} could not be opened (${firstLine(error)})`);
  }
  const opened = new URL(session.page.url());
  if (opened.origin === consoleOrigin && opened.pathname === '/sign-in') throw new RunFailure(CREDENTIAL_REFUSED);
  return session;
}

/** Turn 0 (the page as opened) and the `started` entry; false when the run was canceled meanwhile. */
async function recordStart(held: Held, first: Capture): Promise<boolean> {
  const { run } = held;
  const sessionId = run.session_id;
  return held.deps.writeRun(sessionId, async (unit) => {
    if (!(await updateRun(unit.tx, sessionId, ['running'], { updated_at: now(held) }))) return false;
    await insertTurn(unit.tx, { session_id: sessionId, turn: 0, actions: [], model_text: null, screenshot_sha256: first.sha256, screenshot: first.stored, created_at: now(held) });
    emitBlocked(held, unit, 0);
    unit.emit({
      type: 'computer_use.started',
      subject: sessionId,
      occurred_at: now(held),
      data: { session_id: sessionId, persona: run.persona, url: run.url, task_sha256: sha256(run.task), max_turns: run.max_turns, screenshot_sha256: first.sha256, model: held.deps.model().name },
    });
    return true;
  });
}

/** Carries out the model's tool uses in the page, each answered with the screenshot after it. */
async function act(session: ConsoleSession, driven: DrivenPage, uses: ModelToolUseBlock[], signal: AbortSignal) {
  const actions: RunAction[] = [];
  const results: ModelContentBlock[] = [];
  let last: Capture | undefined;
  for (const use of uses) {
    // A cancel stops before the next action; what was already done is still recorded.
    if (signal.aborted) break;
    const input = (use.input ?? {}) as ToolInput;
    let answer: string | undefined;
    let problem: string | undefined;
    try {
      if (use.name !== 'computer') throw new ActionError(`there is no tool "${use.name}" here`);
      answer = await carryOut(driven, input, signal);
    } catch (error) {
      if (!(error instanceof ActionError)) throw new RunFailure(`the browser failed to carry out ${String(input.action)} (${firstLine(error)})`);
      problem = error.message;
    }
    last = await capture(session);
    actions.push({ ...describeAction(input), ...(problem ? { error: problem } : {}), screenshot_sha256: last.sha256 } as RunAction);
    results.push(
      problem
        ? { type: 'tool_result', tool_use_id: use.id, is_error: true, content: [{ type: 'text', text: problem }] }
        : { type: 'tool_result', tool_use_id: use.id, content: [...(answer ? [{ type: 'text' as const, text: answer }] : []), addressNote(session), imageBlock(last.png)] },
    );
  }
  return { actions, results, last };
}

/** One turn's write: the turn, its actions' ledger entries and the refusals since the last write. */
async function recordTurn(held: Held, turn: number, said: string, actions: RunAction[], shot: Capture): Promise<boolean> {
  const sessionId = held.run.session_id;
  return held.deps.writeRun(sessionId, async (unit) => {
    const at = now(held);
    // Actions carried out before a cancel took effect are recorded all the same (after its end).
    if (!(await updateRun(unit.tx, sessionId, ['running', 'canceled'], { turns: turn, updated_at: at }))) return false;
    await insertTurn(unit.tx, { session_id: sessionId, turn, actions, model_text: said ? guardText(said) : null, screenshot_sha256: shot.sha256, screenshot: shot.stored, created_at: at });
    for (const action of actions) {
      unit.emit({ type: 'computer_use.action', subject: sessionId, occurred_at: at, data: { session_id: sessionId, turn, ...ledgerForm(action) } });
    }
    emitBlocked(held, unit, turn);
    return true;
  });
}

/** One turn: `done` when the run has ended (answered, canceled, or its write found it ended). */
async function takeTurn(held: Held, driven: DrivenPage, turn: number, messages: ModelMessageParam[]): Promise<'next' | 'done'> {
  const { run, local } = held;
  const signal = local.controller.signal;
  if (signal.aborted || (await findRun(held.deps.storage.db, run.session_id))?.status !== 'running') return 'done';
  await held.deps.credentials.requireRequester(local.requester);
  const reply = await held.deps.model().next({ system: systemPrompt(run.persona as Persona), messages, signal });
  const said = reply.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n').trim();
  const uses = reply.content.flatMap((block) => (block.type === 'tool_use' ? [block] : []));
  if (uses.length === 0) {
    if (reply.stop_reason === 'refusal') throw new RunFailure('the model refused the task');
    await finish(held, 'completed', { turns: turn - 1, final_answer: guardText(said || '(the model finished without a report)') });
    return 'done';
  }
  const { actions, results, last } = await act(held.session as ConsoleSession, driven, uses, signal);
  if (actions.length === 0 || last === undefined) return 'done';
  if (!(await recordTurn(held, turn, said, actions, last)) || signal.aborted) return 'done';
  held.turnsDone = turn;
  messages.push({ role: 'assistant', content: reply.content as ModelContentBlock[] });
  messages.push({ role: 'user', content: results });
  forgetOldScreenshots(messages);
  return 'next';
}

/** Runs a queued run to its end. */
export function createRunExecution(deps: RunExecutionDeps): (local: LocalRun) => Promise<void> {
  return (local) => execute(deps, local);
}

async function execute(deps: RunExecutionDeps, local: LocalRun): Promise<void> {
  const { sessionId, controller } = local;
  const startedAt = deps.clock.now().toISOString();
  if (!(await deps.writeRun(sessionId, (unit) => updateRun(unit.tx, sessionId, ['queued'], { status: 'running', started_at: startedAt, updated_at: startedAt })))) return;
  const held: Held = { deps, run: (await findRun(deps.storage.db, sessionId)) as RunRow, local, recordedBlocked: 0, turnsDone: 0 };
  try {
    await deps.credentials.requireRequester(local.requester);
    const session = await openConsole(held);
    const first = await capture(session);
    if (!(await recordStart(held, first))) return;
    const driven: DrivenPage = { page: session.page, cursor: { x: 0, y: 0 } };
    const messages: ModelMessageParam[] = [{ role: 'user', content: [{ type: 'text', text: `Task: ${held.run.task}` }, addressNote(session), imageBlock(first.png)] }];
    for (let turn = 1; turn <= held.run.max_turns; turn += 1) {
      if ((await takeTurn(held, driven, turn, messages)) === 'done') return;
    }
    await finish(held, 'max_turns_reached', { turns: held.run.max_turns });
  } catch (error) {
    // Canceled (the cancel wrote the end) or shut down (close() writes it).
    if (controller.signal.aborted || (error instanceof ModelCallError && error.canceled)) return;
    const known = error instanceof RunFailure || error instanceof ModelCallError;
    if (!known) deps.log(error, 'computer-use run failed');
    await finish(held, 'failed', { failure_reason: guardText(known ? error.message : `the run stopped on an unexpected error (${firstLine(error)})`) });
  } finally {
    await release(held);
  }
}
