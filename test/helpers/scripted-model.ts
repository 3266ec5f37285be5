/**
 * A stand-in for the Anthropic Messages API on loopback, speaking its wire format: `POST /v1/messages`
 * with the computer-use beta, answered from a script. It records every request and checks what a real
 * model would rely on: the key and beta headers, the computer tool with the console's screen size, and
 * a real 1280×800 PNG in every successful tool result (and in the first message). The registry reaches
 * it through the vendor's own client library (`@anthropic-ai/sdk`), configured by
 * COMPUTER_USE_MODEL_URL, exactly as it would reach the real service.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import { assistantMessage, readMessagesRequest, sendTurn, type MessagesRequestBody, type ScriptedTurn } from '../../src/computer-use/messages-wire.ts';
import type { Scope } from './listening.ts';

/** What the model says in one turn: actions for the computer tool, text, or an HTTP error (the wire: src/computer-use/messages-wire.ts). */
export type ModelTurn =
  | ScriptedTurn
  /** Holds the answer until `release()` (or the client gives up). */
  | { hold: true };

export type ModelRequest = {
  headers: IncomingMessage['headers'];
  /** Loosely typed for the tests' reading: the content blocks as the wire carries them. */
  body: Omit<MessagesRequestBody, 'messages'> & { messages: { role: string; content: any[] }[] };
  /** The text parts of the newest user message's tool results (the page's address, cursor position). */
  resultTexts: string[];
};

export type ScriptedModel = {
  url: string;
  requests: ModelRequest[];
  /** What the server found wrong in a request (empty when every request was well formed). */
  problems: string[];
  release(): void;
  /** How many held requests the client gave up (closed) before a release: a model call abandoned. */
  abandoned(): number;
  /** Resolves once `count` requests have arrived. */
  waitForRequests(count: number): Promise<void>;
};

/** The API key the registry is configured with in tests; the server checks it arrives. */
export const SCRIPTED_MODEL_KEY = 'sk-test-scripted';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * `script(turnIndex, request)` gives each answer; a turn past the script's end is a final answer, so a
 * run never loops on a short script.
 */
export async function startScriptedModel(scope: Scope, script: ModelTurn[] | ((index: number, request: ModelRequest) => ModelTurn | Promise<ModelTurn>)): Promise<ScriptedModel> {
  const requests: ModelRequest[] = [];
  const problems: string[] = [];
  const holds: (() => void)[] = [];
  let abandoned = 0;
  const waiters: { count: number; resolve: () => void }[] = [];
  const server = createServer(async (req, res) => {
    const body = (await readMessagesRequest(req, res)) as ModelRequest['body'] | null;
    if (!body) return;
    const request: ModelRequest = { headers: req.headers, body, resultTexts: [] };
    check(request, requests.length, SCRIPTED_MODEL_KEY, problems);
    requests.push(request);
    for (const waiter of waiters.filter((w) => requests.length >= w.count)) waiter.resolve();
    const index = requests.length - 1;
    const turn = typeof script === 'function' ? await script(index, request) : (script[index] ?? { final: 'Done.' });
    if ('hold' in turn) {
      await new Promise<void>((resolve) => {
        holds.push(resolve);
        req.on('close', resolve);
        res.on('close', resolve);
      });
      if (res.writableEnded || res.destroyed) return void (abandoned += 1);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(assistantMessage(index, body.model, { final: 'Released.' })));
      return;
    }
    sendTurn(res, index, body.model, turn);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  scope.defer(
    () =>
      new Promise<void>((resolve) => {
        for (const hold of holds) hold();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    requests,
    problems,
    release: () => holds.splice(0).forEach((hold) => hold()),
    abandoned: () => abandoned,
    waitForRequests: (count) =>
      requests.length >= count ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ count, resolve })),
  };
}

/** The checks a real model's API would make (or rely on) of each request. */
function check(request: ModelRequest, index: number, expectedKey: string, problems: string[]): void {
  const { headers, body } = request;
  const problem = (text: string): void => void problems.push(`request ${index}: ${text}`);
  // The client library sends the key as a bearer token (older versions: x-api-key).
  const key = headers['x-api-key'] ?? /^Bearer (.+)$/.exec(String(headers.authorization ?? ''))?.[1];
  if (key !== expectedKey) problem(`the API key is ${String(key)}`);
  if (!String(headers['anthropic-version'] ?? '')) problem('no anthropic-version header');
  const betas = String(headers['anthropic-beta'] ?? '').split(',');
  const tool = body.tools?.[0];
  const toolVersion = betas.includes('computer-use-2025-11-24') ? 'computer_20251124' : betas.includes('computer-use-2025-01-24') ? 'computer_20250124' : undefined;
  if (!toolVersion) problem(`beta header is ${String(headers['anthropic-beta'])}`);
  if (!tool || tool.type !== toolVersion || tool.name !== 'computer' || tool.display_width_px !== 1280 || tool.display_height_px !== 800) {
    problem(`computer tool is ${JSON.stringify(body.tools)} with betas ${betas.join(',')}`);
  }
  const last = body.messages.at(-1);
  if (!last || last.role !== 'user') return problem('the last message is not the user\'s');
  // Roles alternate, starting with the user (the API refuses anything else).
  body.messages.forEach((m, i) => {
    if (m.role !== (i % 2 === 0 ? 'user' : 'assistant')) problem(`message ${i} has role ${m.role}`);
  });
  if (body.messages.length === 1) {
    const image = last.content.find((part: any) => part.type === 'image');
    if (!image) return problem('the first message has no screenshot');
    checkPng(image.source, problems);
    request.resultTexts = last.content.filter((part: any) => part.type === 'text').map((part: any) => part.text);
    return;
  }
  const previous = body.messages.at(-2);
  const asked = (previous?.content ?? []).filter((part: any) => part.type === 'tool_use').map((part: any) => part.id);
  const results = last.content.filter((part: any) => part.type === 'tool_result');
  if (JSON.stringify(results.map((r: any) => r.tool_use_id)) !== JSON.stringify(asked)) problem(`tool results ${JSON.stringify(results.map((r: any) => r.tool_use_id))} answer ${JSON.stringify(asked)}`);
  for (const result of results) {
    const parts = Array.isArray(result.content) ? result.content : [];
    request.resultTexts.push(...parts.filter((part: any) => part.type === 'text').map((part: any) => part.text));
    if (result.is_error) continue;
    const image = parts.find((part: any) => part.type === 'image');
    if (!image) problem(`tool result ${result.tool_use_id} has no screenshot`);
    else checkPng(image.source, problems);
  }
}

function checkPng(source: { type: string; media_type: string; data: string }, problems: string[]): void {
  try {
    assert.equal(source.type, 'base64');
    assert.equal(source.media_type, 'image/png');
    const bytes = Buffer.from(source.data, 'base64');
    assert.ok(bytes.subarray(0, 8).equals(PNG_SIGNATURE), 'PNG signature');
    assert.equal(bytes.readUInt32BE(16), 1280, 'width');
    assert.equal(bytes.readUInt32BE(20), 800, 'height');
  } catch (error) {
    problems.push(`screenshot is not a 1280×800 PNG: ${(error as Error).message}`);
  }
}
