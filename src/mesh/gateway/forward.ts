/**
 * Forwarding one HTTP exchange to an agent: the request body as received (so a body signature still
 * verifies), the response piped back as it arrives, so SSE streams pass through event by event. A
 * keep-alive agent reuses connections to the children.
 */
import { Agent, request as httpRequest, type IncomingHttpHeaders, type ServerResponse } from 'node:http';

export const upstreamAgent = new Agent({ keepAlive: true, maxSockets: 512 });

/** Request headers passed on to an agent; hop-by-hop and others stay behind. */
export const FORWARDED_REQUEST_HEADERS = [
  'content-type',
  'accept',
  'authorization',
  'x-agent-id',
  'x-mesh-signature',
  'last-event-id',
  'tracestate',
  'a2a-version',
] as const;

const FORWARDED_RESPONSE_HEADERS = ['content-type', 'cache-control', 'www-authenticate', 'x-accel-buffering', 'content-length'];

export function pickHeaders(headers: IncomingHttpHeaders, names: readonly string[]): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of names) {
    const value = headers[name];
    if (typeof value === 'string') picked[name] = value;
  }
  return picked;
}

export type ForwardOptions = {
  readonly url: string;
  readonly method: 'GET' | 'POST';
  readonly headers: Record<string, string>;
  readonly body?: Buffer;
  readonly response: ServerResponse;
  /** Until the response headers arrive; a stream then runs as long as it lasts. */
  readonly timeoutMs: number;
  /** Called when the answer turns out to be a stream; returns what to call when it ends. */
  readonly onStream?: () => () => void;
  /** The agent could not be reached, and nothing was sent yet: the caller answers. */
  readonly onUnreachable: (error: Error) => void;
};

/** Forwards one request; resolves when the exchange is over (either side done or gone). */
export function forward(options: ForwardOptions): Promise<void> {
  const { response } = options;
  return new Promise((resolve) => {
    let release: (() => void) | undefined;
    let settled = false;
    const done = () => {
      if (settled) return;
      settled = true;
      release?.();
      resolve();
    };
    const headers = { ...options.headers, ...(options.body ? { 'content-length': String(options.body.length) } : {}) };
    const upstream = httpRequest(options.url, { method: options.method, headers, agent: upstreamAgent }, (answer) => {
      const isStream = (answer.headers['content-type'] ?? '').startsWith('text/event-stream');
      if (isStream) {
        upstream.setTimeout(0);
        release = options.onStream?.();
      }
      response.writeHead(answer.statusCode ?? 502, pickHeaders(answer.headers, FORWARDED_RESPONSE_HEADERS));
      if (isStream) response.flushHeaders();
      answer.pipe(response);
      // An agent that dies mid-stream drops the caller's connection too, so the caller resumes.
      answer.once('aborted', () => response.destroy());
      answer.once('error', () => response.destroy());
      answer.once('end', done);
    });
    upstream.setTimeout(options.timeoutMs, () => upstream.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
    upstream.once('error', (error) => {
      if (!response.headersSent) options.onUnreachable(error);
      else response.destroy();
      done();
    });
    response.once('close', () => {
      if (!response.writableFinished) upstream.destroy();
      done();
    });
    upstream.end(options.body);
  });
}
