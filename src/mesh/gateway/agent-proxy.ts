/**
 * Forwarding one HTTP exchange to an agent, on `@fastify/reply-from` over a keep-alive undici pool:
 * the request body as received (so a body signature still verifies), only the listed headers either
 * way, and the answer sent on as it arrives, so SSE streams pass through event by event. A caller
 * that goes away aborts the agent's request, whether or not its answer has begun.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import replyFrom from '@fastify/reply-from';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { Agent, type Dispatcher } from 'undici';

/** Request headers passed on to an agent; hop-by-hop and others stay behind. */
const FORWARDED_REQUEST_HEADERS = [
  'content-type',
  'accept',
  'authorization',
  'x-agent-id',
  'x-mesh-signature',
  'last-event-id',
  'tracestate',
  'a2a-version',
] as const;

/** Response headers passed back to the caller; the rest of the agent's stay behind. */
const FORWARDED_RESPONSE_HEADERS = ['content-type', 'cache-control', 'www-authenticate', 'x-accel-buffering', 'content-length'];

/** The headers of `names` that have one value (a repeated header is not passed on). */
function pickHeaders(headers: IncomingHttpHeaders, names: readonly string[]): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of names) {
    const value = headers[name];
    if (typeof value === 'string') picked[name] = value;
  }
  return picked;
}

/** What an agent gets of a caller's request headers: the listed ones, the next trace context, the request id. */
export function agentRequestHeaders(request: FastifyRequest, traceparent: string): Record<string, string> {
  return { ...pickHeaders(request.headers, FORWARDED_REQUEST_HEADERS), traceparent, 'x-request-id': request.id };
}

/**
 * The caller's abort signal, handed to the pool's request: reply-from builds the request itself and
 * takes no signal, so the exchange runs inside this store and the dispatcher below reads it.
 */
const callerGone = new AsyncLocalStorage<AbortSignal>();

export type AgentProxyOptions = {
  /** Until an agent's response headers arrive; a stream then runs as long as it lasts. */
  readonly timeoutMs: number;
};

/** A keep-alive pool whose requests carry the caller's abort signal (`callerGone`). */
class CallerBoundPool extends Agent {
  override request<T = null>(options: Dispatcher.RequestOptions<T>): Promise<Dispatcher.ResponseData<T>>;
  override request<T = null>(options: Dispatcher.RequestOptions<T>, callback: (error: Error | null, data: Dispatcher.ResponseData<T>) => void): void;
  override request<T = null>(
    options: Dispatcher.RequestOptions<T>,
    callback?: (error: Error | null, data: Dispatcher.ResponseData<T>) => void,
  ): Promise<Dispatcher.ResponseData<T>> | void {
    const bound = { ...options, signal: callerGone.getStore() ?? null };
    return callback ? super.request(bound, callback) : super.request(bound);
  }
}

/** The `ward-agent-proxy` plugin: `reply.from` over the pool to the gateway's agents, closed with the app. */
export const agentProxy = fastifyPlugin<AgentProxyOptions>(
  async (app, options) => {
    const pool = new CallerBoundPool({
      connections: 512,
      pipelining: 1,
      connectTimeout: options.timeoutMs,
      headersTimeout: options.timeoutMs,
      // An event stream may stay quiet between events for as long as it likes.
      bodyTimeout: 0,
    });
    await app.register(replyFrom, { undici: pool, disableRequestLogging: true });
    app.addHook('onClose', async () => pool.destroy());
  },
  { name: 'ward-agent-proxy', fastify: '5.x' },
);

export type AgentExchange = {
  /** The agent's base URL; the request goes to its `/`. */
  readonly url: string;
  /** The request headers the agent gets (content-length is added). */
  readonly headers: Record<string, string>;
  readonly body: Buffer;
  /** Called when the answer turns out to be a stream; returns what to call when it ends. */
  readonly onStream: () => () => void;
  /** The agent could not be reached or did not answer in time, and the caller is still there: answer it. */
  readonly onUnreachable: (error: Error) => void;
  /** Sees each chunk of the agent's answer as it passes (the gateway's task log reads the task state). */
  readonly onChunk?: (chunk: Buffer) => void;
  /** The exchange is over: answered (`finished`), failed, or the caller gone (not `finished`). */
  readonly onEnd: (finished: boolean) => void;
};

/** POSTs the caller's request to the agent and sends its answer on; returns the reply, as a handler does. */
export function forwardToAgent(reply: FastifyReply, exchange: AgentExchange): FastifyReply {
  // A caller that left while its agent started has closed already: no 'close' would come to end it.
  if (reply.raw.destroyed) {
    exchange.onEnd(false);
    return reply;
  }
  const gone = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) gone.abort();
    exchange.onEnd(reply.raw.writableFinished);
  });
  const { body } = exchange;
  return callerGone.run(gone.signal, () =>
    reply.from(`${exchange.url}/`, {
      method: 'POST',
      body,
      // Any type keeps the bytes as they are (reply-from re-encodes JSON bodies it is given without one).
      contentType: 'application/octet-stream',
      rewriteRequestHeaders: () => ({ ...exchange.headers, 'content-length': String(body.length) }),
      rewriteHeaders: (headers) => pickHeaders(headers as IncomingHttpHeaders, FORWARDED_RESPONSE_HEADERS),
      onResponse: (_request, _reply, response) => sendAnswer(reply, response.stream, exchange),
      onError: (_reply, { error }) => {
        if (!reply.raw.destroyed) exchange.onUnreachable(error);
      },
    }),
  );
}

/** Sends the agent's answer on: an event stream's headers at once, and a broken answer breaks the caller's connection too. */
function sendAnswer(reply: FastifyReply, answer: Readable, exchange: Pick<AgentExchange, 'onStream' | 'onChunk'>): void {
  if (reply.raw.destroyed) {
    // The caller left while the agent worked; nothing is sent, and the agent's answer is dropped.
    answer.destroy();
    return;
  }
  // An agent that dies mid-answer drops the caller's connection too, so the caller resumes.
  answer.once('error', () => reply.raw.destroy());
  const isStream = String(reply.getHeader('content-type') ?? '').startsWith('text/event-stream');
  if (isStream) answer.once('close', exchange.onStream());
  if (exchange.onChunk) tap(answer, exchange.onChunk);
  reply.send(answer);
  if (isStream) reply.raw.flushHeaders();
}

/**
 * Shows each chunk of `answer` to `onChunk` as it goes to the caller, without a stream in between (a
 * Transform cost the gateway a tenth of its round trips, bench:mesh row b). The listener joins when
 * the reply's pipe starts the answer flowing ('resume' comes before the first chunk), so it never
 * starts the flow itself, which would spend chunks before the pipe is there to send them.
 */
function tap(answer: Readable, onChunk: (chunk: Buffer) => void): void {
  answer.once('resume', () => answer.on('data', onChunk));
}

/** Response headers of an agent's own web routes (a page's security headers) passed back besides the usual ones. */
const WEB_RESPONSE_HEADERS = [...FORWARDED_RESPONSE_HEADERS, 'content-security-policy', 'x-content-type-options', 'referrer-policy', 'etag', 'last-modified'];

export type AgentWebExchange = {
  /** The agent's base URL. */
  readonly url: string;
  readonly method: 'GET' | 'HEAD' | 'POST';
  /** The path on the agent, with its query (`/avatar`, `/tts/voices?x=1`). */
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: Buffer | undefined;
  readonly onUnreachable: (error: Error) => void;
  readonly onEnd: () => void;
};

/** Forwards one request to an agent's own HTTP routes (not JSON-RPC) and sends its answer on. */
export function forwardToAgentWeb(reply: FastifyReply, exchange: AgentWebExchange): FastifyReply {
  reply.raw.once('close', exchange.onEnd);
  const { body } = exchange;
  return reply.from(`${exchange.url}${exchange.path}`, {
    method: exchange.method,
    ...(body === undefined ? {} : { body, contentType: 'application/octet-stream' }),
    rewriteRequestHeaders: () => ({ ...exchange.headers, ...(body === undefined ? {} : { 'content-length': String(body.length) }) }),
    rewriteHeaders: (headers) => pickHeaders(headers as IncomingHttpHeaders, WEB_RESPONSE_HEADERS),
    onError: (_reply, { error }) => {
      if (!reply.raw.destroyed) exchange.onUnreachable(error);
    },
  });
}
