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
 */
import { createHash } from 'node:crypto';
import { systemContext, type CallContext, type Scope } from '../../core/call-context.ts';
import type { Clock } from '../../core/clock.ts';
import { WardError } from '../../core/errors.ts';
import { newUlid } from '../../core/ids.ts';
import { scanTextForPhi } from '../../core/phi/index.ts';
import type { PricingTier } from '../../core/pricing-tiers.ts';
import { findApiKey } from '../../core/storage/stores/api-key-store.ts';
import type { Storage } from '../../core/storage/database.ts';
import {
  appendRunEventSeqs,
  findRun,
  findScreenshot,
  insertRun,
  insertTurn,
  ledgerLeavesForSeqs,
  listRuns,
  listTurns,
  listUnendedRunsElsewhere,
  updateRun,
  type RunAction,
  type RunRow,
  type RunStatus,
} from '../../core/storage/stores/computer-use-store.ts';
import { runWrite, type WriteUnit } from '../../core/storage/write-unit.ts';
import { decodeCursor, encodeCursor } from '../http/cursor.ts';
import type { ApiKeyService } from '../keys/api-key-service.ts';
import { ActionError, carryOut, type DrivenPage, type ToolInput } from './browser-actions.ts';
import { SignInRefused, type ConsoleBrowser, type ConsoleSession } from './console-browser.ts';
import { ModelCallError, type ComputerUseModel, type ModelContentBlock, type ModelMessageParam } from './computer-use-model.ts';
import type { BlockedRequest } from './origin-guard-proxy.ts';
import { DEFAULT_PERSONA, personaMayAct, systemPrompt, type Persona } from '../../contract/personas.ts';

export type RunRequest = { task: string; url?: string | undefined; persona?: Persona | undefined; max_turns?: number | undefined; headless?: boolean | undefined };

/** How many of the latest screenshots the model is sent again each turn; older ones become a note. */
const SCREENSHOTS_KEPT_IN_CONVERSATION = 3;

export type RunDeps = {
  storage: Storage;
  clock: Clock;
  browser: ConsoleBrowser;
  model: () => ComputerUseModel;
  maxRuns: number;
  instanceId: string;
  /** Whether another instance still runs (its heartbeat); its unended runs are failed otherwise. */
  isInstanceLive: (instanceId: string) => Promise<boolean>;
  /** Where the browser may go, and whether `url` is one of those places (throws URL_NOT_ALLOWED). */
  allowedOrigins: () => string[];
  /** The console's origin: the one place a run signs in. */
  consoleOrigin: () => string;
  /** Mints the run's own console credential, and revokes it when the run ends. */
  apiKeys: ApiKeyService;
  /** How long one model call may take: a run's credential lives for its turns at most. */
  modelTimeoutSeconds: number;
  log: (error: unknown, message: string) => void;
};

/**
 * Who asked for a run: enough to mint the run's own credential (their organisation, their scopes
 * narrowed to the persona, their tier) and to stop when their own credential is revoked. Their
 * credential itself is never kept.
 */
export type RunRequester = { kind: string; credentialId: string; orgId?: string | undefined; scopes: readonly Scope[]; tier?: PricingTier | undefined };

/** A run this instance holds. */
type LocalRun = { sessionId: string; requester: RunRequester; controller: AbortController };

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
  async function end(sessionId: string, status: RunStatus, fields: { turns?: number; final_answer?: string | null; failure_reason?: string | null }): Promise<boolean> {
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

  async function execute(local: LocalRun): Promise<void> {
    const { sessionId, controller } = local;
    const signal = controller.signal;
    const startedAt = now();
    if (!(await writeRun(sessionId, (unit) => updateRun(unit.tx, sessionId, ['queued'], { status: 'running', started_at: startedAt, updated_at: startedAt })))) return;
    const run = (await findRun(storage.db, sessionId)) as RunRow;
    let session: ConsoleSession | undefined;
    let credential: { keyId: string } | undefined;
    let recordedBlocked = 0;
    /** Requests the browser refused since the last write, as ledger entries of `turn`. */
    const emitBlocked = (unit: WriteUnit, turn: number, from = session) => {
      const fresh = from?.blocked.slice(recordedBlocked) ?? [];
      recordedBlocked += fresh.length;
      for (const blocked of fresh) unit.emit({ type: 'computer_use.blocked', subject: sessionId, occurred_at: now(), data: { session_id: sessionId, turn, ...ledgerBlocked(blocked) } });
    };
    let turnsDone = 0;
    /**
     * Lets go of what the run holds, before its end is written (so whoever sees the end finds its
     * credential revoked) and again on the way out: the browser, the refusals not yet recorded, and
     * the run's credential.
     */
    const release = async () => {
      const open = session;
      session = undefined;
      await open?.close().catch(() => undefined);
      if (open && open.blocked.length > recordedBlocked) {
        await writeRun(sessionId, async (unit) => emitBlocked(unit, turnsDone, open)).catch((error: unknown) => deps.log(error, "could not record a run's blocked requests"));
      }
      const held = credential;
      credential = undefined;
      if (held) await revokeCredential(sessionId, held.keyId);
    };
    const finish = async (status: RunStatus, fields: Parameters<typeof end>[2]) => {
      await release();
      await end(sessionId, status, fields);
    };
    try {
      await requireRequester(local.requester);
      const consoleOrigin = deps.consoleOrigin();
      try {
        session = await deps.browser.open({
          consoleOrigin,
          allowedOrigins: deps.allowedOrigins(),
          credential: async () => {
            const minted = await mintCredential(local, run);
            credential = minted;
            return minted.rawKey;
          },
          persona: run.persona,
          headless: run.headless,
        });
        await session.page.goto(run.url, { waitUntil: 'load' });
      } catch (error) {
        if (error instanceof SignInRefused) throw new RunFailure(CREDENTIAL_REFUSED);
        throw new RunFailure(`the console at ${consoleOrigin} could not be opened (${firstLine(error)})`);
      }
      const opened = new URL(session.page.url());
      if (opened.origin === consoleOrigin && opened.pathname === '/sign-in') throw new RunFailure(CREDENTIAL_REFUSED);
      const driven: DrivenPage = { page: session.page, cursor: { x: 0, y: 0 } };

      const first = await capture(session);
      const began = await writeRun(sessionId, async (unit) => {
        if (!(await updateRun(unit.tx, sessionId, ['running'], { updated_at: now() }))) return false;
        await insertTurn(unit.tx, { session_id: sessionId, turn: 0, actions: [], model_text: null, screenshot_sha256: first.sha256, screenshot: first.stored, created_at: now() });
        emitBlocked(unit, 0);
        unit.emit({
          type: 'computer_use.started',
          subject: sessionId,
          occurred_at: now(),
          data: { session_id: sessionId, persona: run.persona, url: run.url, task_sha256: sha256(run.task), max_turns: run.max_turns, screenshot_sha256: first.sha256 },
        });
        return true;
      });
      if (!began) return;

      const messages: ModelMessageParam[] = [
        { role: 'user', content: [{ type: 'text', text: `Task: ${run.task}` }, addressNote(session), imageBlock(first.png)] },
      ];
      const system = systemPrompt(run.persona as Persona);
      for (let turn = 1; turn <= run.max_turns; turn += 1) {
        if (signal.aborted || !(await isRunning(sessionId))) return;
        await requireRequester(local.requester);
        const reply = await deps.model().next({ system, messages, signal });
        const said = reply.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n').trim();
        const uses = reply.content.flatMap((block) => (block.type === 'tool_use' ? [block] : []));
        if (uses.length === 0) {
          if (reply.stop_reason === 'refusal') throw new RunFailure('the model refused the task');
          await finish('completed', { turns: turn - 1, final_answer: guardText(said || '(the model finished without a report)') });
          return;
        }

        const actions: RunAction[] = [];
        const results: ModelContentBlock[] = [];
        let last = first;
        for (const use of uses) {
          // A cancel stops before the next action; what was already done is still recorded below.
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
        if (actions.length === 0) return;

        const shot = last;
        const recorded = await writeRun(sessionId, async (unit) => {
          const at = now();
          // Actions carried out before a cancel took effect are recorded all the same (after its end).
          if (!(await updateRun(unit.tx, sessionId, ['running', 'canceled'], { turns: turn, updated_at: at }))) return false;
          await insertTurn(unit.tx, { session_id: sessionId, turn, actions, model_text: said ? guardText(said) : null, screenshot_sha256: shot.sha256, screenshot: shot.stored, created_at: at });
          for (const action of actions) {
            unit.emit({ type: 'computer_use.action', subject: sessionId, occurred_at: at, data: { session_id: sessionId, turn, ...ledgerForm(action) } });
          }
          emitBlocked(unit, turn);
          return true;
        });
        if (!recorded || signal.aborted) return;
        turnsDone = turn;
        messages.push({ role: 'assistant', content: reply.content as ModelContentBlock[] });
        messages.push({ role: 'user', content: results });
        forgetOldScreenshots(messages);
      }
      await finish('max_turns_reached', { turns: run.max_turns });
    } catch (error) {
      if (signal.aborted || (error instanceof ModelCallError && error.canceled)) {
        // Canceled (the cancel wrote the end) or shut down (close() writes it).
        return;
      }
      const reason = error instanceof RunFailure || error instanceof ModelCallError ? error.message : `the run stopped on an unexpected error (${firstLine(error)})`;
      if (!(error instanceof RunFailure || error instanceof ModelCallError)) deps.log(error, 'computer-use run failed');
      await finish('failed', { failure_reason: guardText(reason) });
    } finally {
      await release();
    }
  }

  /**
   * The run's own console credential: an API key of the requester's organisation and tier, holding
   * `registry:admin` (the console's sign-in needs it) and `registry:read`, and `registry:write` only for
   * a persona that may act; never more than the requester holds. It expires when the run's turns could
   * last no longer, and is revoked when the run ends. Its creation is one of the run's ledger entries.
   */
  async function mintCredential(local: LocalRun, run: RunRow): Promise<{ keyId: string; rawKey: string }> {
    const wanted: Scope[] = personaMayAct(run.persona) ? ['registry:read', 'registry:write', 'registry:admin'] : ['registry:read', 'registry:admin'];
    const scopes = wanted.filter((scope) => local.requester.scopes.includes(scope));
    const lifetimeMs = run.max_turns * (deps.modelTimeoutSeconds + 60) * 1000;
    return writeRun(local.sessionId, async (unit) => {
      const key = await deps.apiKeys.create(unit, systemContext(clock), {
        org_id: local.requester.orgId ?? 'computer-use',
        display_name: `computer-use run ${local.sessionId} (${run.persona})`,
        tier: local.requester.tier ?? 'enterprise',
        scopes,
        expires_at: new Date(clock.now().getTime() + lifetimeMs).toISOString(),
      });
      return { keyId: key.key_id, rawKey: key.raw_key };
    });
  }

  async function revokeCredential(sessionId: string, keyId: string): Promise<void> {
    await writeRun(sessionId, (unit) => deps.apiKeys.revoke(unit, systemContext(clock), keyId)).catch((error: unknown) => deps.log(error, 'could not revoke a computer-use run\'s credential'));
  }

  /** A run stops once the credential that asked for it is revoked or expired (API keys; a token's expiry is its own). */
  async function requireRequester(requester: RunRequester): Promise<void> {
    if (requester.kind !== 'api_key') return;
    const key = await findApiKey(storage.db, requester.credentialId);
    const at = clock.now().toISOString();
    if (!key || key.revoked_at !== null || (key.expires_at !== null && key.expires_at <= at)) throw new RunFailure(REQUESTER_REVOKED);
  }

  async function isRunning(sessionId: string): Promise<boolean> {
    return (await findRun(storage.db, sessionId))?.status === 'running';
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

class RunFailure extends Error {}

const CREDENTIAL_REFUSED = "the console asked for sign-in and did not accept the run's credential";
const REQUESTER_REVOKED = 'the credential that asked for the run was revoked or has expired';

/** Keeps the sequence numbers of the events `unit` emits with the run, in the same transaction: its ledger entries. */
function keepEventSeqs(unit: WriteUnit, sessionId: string): void {
  unit.afterEvents(async (events) => {
    if (events.length > 0) await appendRunEventSeqs(unit.tx, sessionId, events.map((event) => event.seq));
  });
}

function summary(run: RunRow) {
  return {
    session_id: run.session_id,
    status: run.status,
    task: run.task,
    persona: run.persona as Persona,
    url: run.url,
    max_turns: run.max_turns,
    headless: run.headless,
    requested_by: run.requested_by,
    turns_taken: run.turns,
    final_answer: run.final_answer,
    failure_reason: run.failure_reason,
    created_at: run.created_at,
    started_at: run.started_at,
    ended_at: run.ended_at,
  };
}

type Capture = { png: Buffer; sha256: string; stored: string | null };

/** The page as PNG; kept only when the text on the page passes the PHI guard. */
async function capture(session: ConsoleSession): Promise<Capture> {
  const png = await screenshotSettled(session.page);
  const text = await session.page.evaluate(() => document.body?.innerText ?? '').catch(() => '');
  const withheld = scanTextForPhi(text).length > 0;
  return { png, sha256: sha256(png), stored: withheld ? null : png.toString('base64') };
}

/**
 * A screenshot, taken again once the page has loaded when a navigation was under way (a page that
 * submits or redirects itself): Chromium cannot capture a page between two documents, and a capture
 * begun as one commits can wait on a frame that never comes, so each try is short.
 */
async function screenshotSettled(page: DrivenPage['page']): Promise<Buffer> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await page.screenshot({ type: 'png', timeout: SCREENSHOT_TRY_MS });
    } catch (error) {
      if (attempt >= 3) throw error;
      await page.waitForLoadState('load', { timeout: SCREENSHOT_TRY_MS }).catch(() => undefined);
    }
  }
}

const SCREENSHOT_TRY_MS = 5_000;

/** Free text as it may be stored: itself, or a note naming what the PHI guard found. */
function guardText(text: string): string {
  const findings = scanTextForPhi(text);
  if (findings.length === 0) return text;
  return `[withheld by the PHI guard: ${[...new Set(findings.map((finding) => finding.detector))].join(', ')}]`;
}

/** What a run keeps of an action: its parameters, with typed text only when the PHI guard passes it. */
function describeAction(input: ToolInput): Omit<RunAction, 'screenshot_sha256'> {
  const described: Record<string, unknown> = { type: typeof input.action === 'string' ? input.action : 'unknown' };
  for (const name of ['coordinate', 'start_coordinate', 'scroll_direction', 'scroll_amount', 'duration'] as const) {
    if (input[name] !== undefined) described[name] = input[name];
  }
  if (typeof input.text === 'string') {
    if (described.type === 'type') {
      described.text = guardText(input.text);
      described.text_sha256 = sha256(input.text);
    } else {
      described.keys = guardText(input.text);
    }
  }
  return described as Omit<RunAction, 'screenshot_sha256'>;
}

/** An action as the ledger records it: the same, with typed text as its digest only. */
function ledgerForm(action: RunAction): Record<string, unknown> {
  const { text: _text, keys: _keys, error, ...rest } = action;
  return { ...rest, ...(error ? { failed: true } : {}) };
}

/**
 * A refused request as the ledger records it: its kind, and its origin (a tunnel's `host:port`) and
 * full address as digests only, as the ledger keeps every address.
 */
function ledgerBlocked(blocked: BlockedRequest): Record<string, unknown> {
  let origin = blocked.url.replace(/^\/\//, '');
  if (blocked.kind !== 'tunnel') {
    try {
      origin = new URL(blocked.url).origin;
    } catch {
      // an address no parser reads: its digest is the address itself
    }
  }
  return { blocked_kind: blocked.kind, origin_sha256: sha256(origin), url_sha256: sha256(blocked.url) };
}

/** The page's address, which a screenshot of the page alone (no address bar) does not show. */
function addressNote(session: ConsoleSession) {
  return { type: 'text' as const, text: `Address: ${session.page.url()}` };
}

function imageBlock(png: Buffer) {
  return { type: 'image' as const, source: { type: 'base64' as const, media_type: 'image/png' as const, data: png.toString('base64') } };
}

/** Replaces all but the latest screenshots in the conversation with a note: the request stays small. */
function forgetOldScreenshots(messages: ModelMessageParam[]): void {
  let kept = 0;
  for (let m = messages.length - 1; m >= 0; m -= 1) {
    const content = messages[m]?.content;
    if (!Array.isArray(content)) continue;
    for (const block of content) {
      if (block.type !== 'tool_result' || !Array.isArray(block.content)) continue;
      const images = block.content.filter((part) => part.type === 'image').length;
      if (images === 0) continue;
      if (kept < SCREENSHOTS_KEPT_IN_CONVERSATION) {
        kept += images;
        continue;
      }
      block.content = block.content.map((part) => (part.type === 'image' ? { type: 'text' as const, text: '(an earlier screenshot, no longer shown)' } : part));
    }
  }
}

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}
