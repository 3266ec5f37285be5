/**
 * Ward's demonstration model (issue 33 item 9; docs/computer-use.md, "Trying it without a paid
 * model"): a scripted stand-in for the Messages API on loopback, so an operator can watch a
 * computer-use run end to end offline. The registry keeps calling it through the vendor's client
 * library (COMPUTER_USE_MODEL_URL), and a run it drives is labelled a demonstration, because it
 * answers only to the model name {@link DEMONSTRATION_MODEL} (any other name is refused as the real
 * API refuses a model it does not have).
 *
 * It follows simple task patterns, one step a turn: "open the <name> page", "click <name>" (a link or
 * button by its visible name), "take a screenshot", and at the end it reports what it sees (the page's
 * heading, sections and first table). It does not read the screenshots: it finds where a link is by
 * opening the same address in a browser of its own, at the run's screen size and persona, which only
 * works on a console that opens without sign-in (development).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { chromium, type Browser, type Page } from 'playwright-core';
import { CONSOLE_PERSONA_HEADER, PERSONAS, systemPrompt } from '../contract/personas.ts';
import { CHROMIUM_ARGS, VIEWPORT } from './console-browser.ts';
import { latestTexts, listenMessagesServer, readMessagesRequest, sendError, sendTurn, type MessagesRequestBody, type ScriptedTurn } from './messages-wire.ts';

/** The model name the demonstration answers to; a run asking it is labelled a demonstration. */
export const DEMONSTRATION_MODEL = 'ward-demonstration';

export type DemoStep = { kind: 'screenshot' } | { kind: 'click'; name: string; page: boolean } | { kind: 'report' };

const PATTERNS = 'open the <name> page, click <name>, take a screenshot, report what you see';

/**
 * The steps a task asks for, in order, ending with the report; only the report when no pattern is
 * recognised (the report then says which patterns it follows).
 */
export function planDemonstration(task: string): DemoStep[] {
  const steps: DemoStep[] = [];
  for (const clause of task.split(/[.;,]\s*|\s+(?:and then|then|and)\s+/i)) {
    const words = clause.trim();
    const page = /\b(?:open|go to|visit|show|navigate to)\s+(?:the\s+)?["“']?(.+?)["”']?\s+page\b/i.exec(words);
    const click = /\bclick(?:\s+on)?\s+(?:the\s+)?(?:link\s+|button\s+)?["“']?(.+?)["”']?(?:\s+(?:link|button))?$/i.exec(words);
    if (page?.[1]) steps.push({ kind: 'click', name: page[1].trim(), page: true });
    else if (click?.[1]) steps.push({ kind: 'click', name: click[1].trim(), page: false });
    else if (/\b(?:take|make|capture)\s+(?:a\s+)?screenshot\b/i.test(words)) steps.push({ kind: 'screenshot' });
  }
  return [...steps, { kind: 'report' }];
}

export type DemonstrationModel = { url: string; close(): Promise<void> };

/** Starts the demonstration model on `host:port` (0: any free port) with the Chromium at `chromiumPath`. */
export async function startDemonstrationModel(options: { port: number; host?: string; chromiumPath: string }): Promise<DemonstrationModel> {
  let browser: Promise<Browser> | undefined;
  const lookAt = async <T>(address: string, persona: string | undefined, read: (page: Page) => Promise<T>): Promise<T> => {
    browser ??= chromium.launch({ executablePath: options.chromiumPath, headless: true, args: [...CHROMIUM_ARGS] });
    const context = await (await browser).newContext({ viewport: VIEWPORT, ...(persona ? { extraHTTPHeaders: { [CONSOLE_PERSONA_HEADER]: persona } } : {}) });
    try {
      const page = await context.newPage();
      await page.goto(address, { waitUntil: 'load', timeout: 15_000 });
      return await read(page);
    } finally {
      await context.close().catch(() => undefined);
    }
  };
  const { server, url } = await listenMessagesServer((req, res) => void answer(req, res, lookAt).catch((error: unknown) => {
    if (!res.headersSent) sendError(res, 500, `the demonstration model failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  }), options.port, options.host);
  return {
    url,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (browser) await (await browser.catch(() => undefined))?.close();
    },
  };
}

type LookAt = <T>(address: string, persona: string | undefined, read: (page: Page) => Promise<T>) => Promise<T>;

async function answer(req: IncomingMessage, res: ServerResponse, lookAt: LookAt): Promise<void> {
  const body = await readMessagesRequest(req, res);
  if (!body) return;
  if (body.model !== DEMONSTRATION_MODEL) {
    return sendError(res, 404, `model: ${String(body.model).slice(0, 80)}. This is Ward's demonstration model: it answers only to COMPUTER_USE_MODEL=${DEMONSTRATION_MODEL}.`, 'not_found_error');
  }
  if (!Array.isArray(body.messages) || !body.tools?.some((tool) => tool.name === 'computer')) {
    return sendError(res, 400, 'the request has no messages or no computer tool', 'invalid_request_error');
  }
  const index = body.messages.filter((message) => message.role === 'assistant').length;
  sendTurn(res, index, DEMONSTRATION_MODEL, await turnFor(body, index, lookAt));
}

/** The task (the first message's "Task: …" text). */
function taskOf(body: MessagesRequestBody): string {
  const first = body.messages[0]?.content.find((part) => part.type === 'text' && typeof part.text === 'string' && part.text.startsWith('Task: '));
  return first?.text?.slice('Task: '.length) ?? '';
}

/** One turn of the plan: the step at `index`, acted on the page at the address the run last reported. */
export async function turnFor(body: MessagesRequestBody, index: number, lookAt: LookAt): Promise<ScriptedTurn> {
  const steps = planDemonstration(taskOf(body));
  const step = steps[Math.min(index, steps.length - 1)] as DemoStep;
  const address = latestTexts(body).findLast((text) => text.startsWith('Address: '))?.slice('Address: '.length);
  const persona = PERSONAS.find((candidate) => body.system === systemPrompt(candidate));
  if (step.kind === 'screenshot') return { text: 'Taking a screenshot.', actions: [{ action: 'screenshot' }] };
  if (!address || !/^https?:\/\//.test(address)) return { final: 'I was not told the page\'s address, so I cannot see it.' };
  if (step.kind === 'click') {
    const found = await lookAt(address, persona, (page) => locate(page, step));
    if (found === 'sign-in') return { final: signInNote(address) };
    if (!found) return { final: `I looked for a ${step.page ? 'page' : 'link or button'} named “${step.name}” on ${address} and found none, so I stopped there.` };
    return { text: `Clicking “${found.label}”.`, actions: [{ action: 'left_click', coordinate: found.at }] };
  }
  const seen = await lookAt(address, persona, describe);
  if (seen === 'sign-in') return { final: signInNote(address) };
  const recognised = steps.length > 1 ? '' : ` I follow only these task patterns: ${PATTERNS}.`;
  return { final: `${seen}${recognised} (Ward's demonstration model: a script, not an AI.)` };
}

const signInNote = (address: string) => `The console at ${address} asks for sign-in. The demonstration model finds links by opening the console itself, which it can do only on a console that opens without sign-in (development).`;

/** Where a named link (a page in the navigation first) or button is, at the run's screen size. */
async function locate(page: Page, step: Extract<DemoStep, { kind: 'click' }>): Promise<{ at: [number, number]; label: string } | 'sign-in' | null> {
  if (new URL(page.url()).pathname === '/sign-in') return 'sign-in';
  const name = new RegExp(`^\\s*${step.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`, 'i');
  const candidates = [
    ...(step.page ? [page.getByRole('navigation').getByRole('link', { name })] : []),
    page.getByRole('link', { name }),
    page.getByRole('button', { name }),
    page.getByRole('link', { name: step.name }),
  ];
  for (const candidate of candidates) {
    const first = candidate.first();
    if ((await first.count()) === 0) continue;
    const box = await first.boundingBox();
    if (!box || box.y + box.height / 2 > VIEWPORT.height || box.y < 0) continue;
    return { at: [Math.round(box.x + box.width / 2), Math.round(box.y + box.height / 2)], label: ((await first.textContent()) ?? step.name).trim().slice(0, 80) };
  }
  return null;
}

/** What the page shows, in a few sentences: its heading, its sections, and its first table's rows. */
async function describe(page: Page): Promise<string | 'sign-in'> {
  if (new URL(page.url()).pathname === '/sign-in') return 'sign-in';
  const heading = ((await page.locator('main h1').first().textContent().catch(() => null)) ?? '').trim() || (await page.title());
  const sections = (await page.locator('main h2').allTextContents()).map((text) => text.trim()).filter(Boolean).slice(0, 8);
  const rows = await page.locator('main table tbody tr').evaluateAll((found) => found.slice(0, 50).map((row) => (row.querySelector('th, td')?.textContent ?? '').trim().replace(/\s+/g, ' ')));
  const firstTable = rows.length > 0 ? ` The first table lists ${rows.length === 50 ? '50 or more' : rows.length} row${rows.length === 1 ? '' : 's'}, beginning ${rows.slice(0, 3).map((row) => `“${row.slice(0, 60)}”`).join(', ')}.` : ' It shows no table rows.';
  return `I see the ${heading} page at ${new URL(page.url()).pathname}.${sections.length > 0 ? ` Its sections: ${sections.map((section) => `“${section}”`).join(', ')}.` : ''}${firstTable}`;
}
