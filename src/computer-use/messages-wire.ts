/**
 * The Anthropic Messages API's wire format, as a server on loopback speaks it: `POST /v1/messages`
 * with the computer-use beta, a JSON message answer (text, `tool_use` blocks for the `computer` tool,
 * `stop_reason`) or a JSON error envelope. Shared by the demonstration model (demo-model.ts) and the
 * tests' scripted model (test/helpers/scripted-model.ts); the registry reaches either through the
 * vendor's own client library, exactly as it reaches the real service.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** What a model says in one turn: actions for the computer tool (with words), a final answer, or an HTTP error. */
export type ScriptedTurn =
  | { actions: Record<string, unknown>[]; text?: string }
  | { final: string }
  | { status: number; message: string; type?: string };

/** One block of a message's content (text, image, tool_use, tool_result…), loosely: a scripted model reads a few fields. */
export type ContentPart = { type?: string; text?: string; content?: unknown; [field: string]: unknown };

/** A Messages API request as the client library sends it (the parts a scripted model reads). */
export type MessagesRequestBody = {
  model: string;
  system?: string;
  tools: { type: string; name: string; display_width_px: number; display_height_px: number }[];
  messages: { role: string; content: ContentPart[] }[];
};

/** The answer to a turn: the assistant message with its text and `tool_use` blocks. */
export function assistantMessage(index: number, model: string, turn: Exclude<ScriptedTurn, { status: number }>) {
  const content =
    'final' in turn
      ? [{ type: 'text', text: turn.final }]
      : [
          ...(turn.text ? [{ type: 'text', text: turn.text }] : []),
          ...turn.actions.map((input, i) => ({ type: 'tool_use', id: `toolu_${index}_${i}`, name: 'computer', input })),
        ];
  return {
    id: `msg_${index}`,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: 'final' in turn ? 'end_turn' : 'tool_use',
    stop_sequence: null,
    usage: { input_tokens: 100, output_tokens: 20 },
  };
}

/** The API's error envelope; `x-should-retry: false` so the client library does not retry it. */
export function sendError(res: ServerResponse, status: number, message: string, type = 'api_error'): void {
  res.writeHead(status, { 'content-type': 'application/json', 'x-should-retry': 'false' }).end(JSON.stringify({ type: 'error', error: { type, message } }));
}

export function sendTurn(res: ServerResponse, index: number, model: string, turn: ScriptedTurn): void {
  if ('status' in turn) return sendError(res, turn.status, turn.message, turn.type);
  res.writeHead(200, { 'content-type': 'application/json', 'request-id': `req_${index}` }).end(JSON.stringify(assistantMessage(index, model, turn)));
}

/**
 * Reads a request: the parsed body of a `POST /v1/messages`, or null after answering anything else
 * (404 for another route, 400 for a body that is not JSON).
 */
export async function readMessagesRequest(req: IncomingMessage, res: ServerResponse): Promise<MessagesRequestBody | null> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  if (req.method !== 'POST' || req.url?.split('?')[0] !== '/v1/messages') {
    sendError(res, 404, `${req.method} ${req.url}`, 'not_found_error');
    return null;
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as MessagesRequestBody;
  } catch {
    sendError(res, 400, 'the body is not JSON', 'invalid_request_error');
    return null;
  }
}

/** The text parts of the newest user message: its tool results' texts (the page's address), or the first message's own. */
export function latestTexts(body: MessagesRequestBody): string[] {
  const last = body.messages.at(-1);
  if (!last || !Array.isArray(last.content)) return [];
  const parts = last.content.flatMap((part): ContentPart[] => (part.type === 'tool_result' ? (Array.isArray(part.content) ? (part.content as ContentPart[]) : []) : [part]));
  return parts.flatMap((part) => (part.type === 'text' && typeof part.text === 'string' ? [part.text] : []));
}

/** Listens on `host:port` (0: any free port) and resolves with the server and its URL. */
export async function listenMessagesServer(handler: (req: IncomingMessage, res: ServerResponse) => void, port: number, host = '127.0.0.1'): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as { port: number };
  return { server, url: `http://${host.includes(':') ? `[${host}]` : host}:${address.port}` };
}
