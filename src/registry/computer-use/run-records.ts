/**
 * What a computer-use run records and how (docs/computer-use.md): its screenshots, kept only when the
 * page's text passes the PHI guard; free text as stored (guarded); actions and refused requests as
 * the ledger records them (digests, never text or addresses); the conversation's screenshots, older
 * ones dropped; and the run as its summary answers it. Plain functions: the run loop
 * (run-execution.ts) and the queue (computer-use-runs.ts) call them.
 */
import { createHash } from 'node:crypto';
import type { Page } from 'playwright-core';
import { phiInText as scanTextForPhi } from '../storage/phi-boundary.ts';
import { appendRunEventSeqs, type RunAction, type RunRow } from './storage/computer-use-store.ts';
import type { WriteUnit } from '../storage/write-unit.ts';
import type { Persona } from '../../contract/personas.ts';
import type { ToolInput } from '../../computer-use/browser-actions.ts';
import type { ModelMessageParam } from '../../computer-use/computer-use-model.ts';
import { DEMONSTRATION_MODEL } from '../../computer-use/demo-model.ts';
import type { ConsoleSession } from '../../computer-use/console-browser.ts';
import type { BlockedRequest } from '../../computer-use/origin-guard-proxy.ts';

/** How many of the latest screenshots the model is sent again each turn; older ones become a note. */
const SCREENSHOTS_KEPT_IN_CONVERSATION = 3;

/** A run's end for a reason it states (the run is recorded as failed with it). */
export class RunFailure extends Error {}

export const CREDENTIAL_REFUSED = "the console asked for sign-in and did not accept the run's credential";
export const REQUESTER_REVOKED = 'the credential that asked for the run was revoked or has expired';

/** Keeps the sequence numbers of the events `unit` emits with the run, in the same transaction: its ledger entries. */
export function keepEventSeqs(unit: WriteUnit, sessionId: string): void {
  unit.afterEvents(async (events) => {
    if (events.length > 0) await appendRunEventSeqs(unit.tx, sessionId, events.map((event) => event.seq));
  });
}

export function summary(run: RunRow) {
  return {
    session_id: run.session_id,
    model: run.model === null ? null : { name: run.model, demonstration: run.model === DEMONSTRATION_MODEL },
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

export type Capture = { png: Buffer; sha256: string; stored: string | null };

/** The page as PNG; kept only when the text on the page passes the PHI guard. */
export async function capture(session: ConsoleSession): Promise<Capture> {
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
export async function screenshotSettled(page: Page): Promise<Buffer> {
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
export function guardText(text: string): string {
  const findings = scanTextForPhi(text);
  if (findings.length === 0) return text;
  return `[withheld by the PHI guard: ${[...new Set(findings.map((finding) => finding.detector))].join(', ')}]`;
}

/** What a run keeps of an action: its parameters, with typed text only when the PHI guard passes it. */
export function describeAction(input: ToolInput): Omit<RunAction, 'screenshot_sha256'> {
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
export function ledgerForm(action: RunAction): Record<string, unknown> {
  const { text: _text, keys: _keys, error, ...rest } = action;
  return { ...rest, ...(error ? { failed: true } : {}) };
}

/** A refused request as the ledger records it: its kind, and its origin and full address as digests only (the ledger keeps no address). */
export function ledgerBlocked(blocked: BlockedRequest): Record<string, unknown> {
  return { blocked_kind: blocked.kind, origin_sha256: sha256(blocked.origin), url_sha256: sha256(blocked.url) };
}

/** The page's address, which a screenshot of the page alone (no address bar) does not show. */
export function addressNote(session: ConsoleSession) {
  return { type: 'text' as const, text: `Address: ${session.page.url()}` };
}

export function imageBlock(png: Buffer) {
  return { type: 'image' as const, source: { type: 'base64' as const, media_type: 'image/png' as const, data: png.toString('base64') } };
}

/** Replaces all but the latest screenshots in the conversation with a note: the request stays small. */
export function forgetOldScreenshots(messages: ModelMessageParam[]): void {
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

export function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

export function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}
