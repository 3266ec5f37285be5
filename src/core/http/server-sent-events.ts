/**
 * Server-sent event frames (WHATWG HTML §9.2.6, "Interpreting an event stream"): the one encoder
 * behind every event stream Ward writes (the registry's change stream, the agents' JSON-RPC streams,
 * the console's pass-through). A frame is one field per line, ended by a blank line.
 */

/**
 * The response headers of every event stream: its type, no caching or transforming on the way, and no
 * buffering by a reverse proxy (nginx holds a response back otherwise). A stream that carries a
 * session's data may make the cache rule stricter (`no-store`).
 */
export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
} as const;

/** One frame's fields. A frame with only `retry` sets the delay and dispatches no event. */
export type SseEvent = {
  /** The reconnection delay, in milliseconds, the client uses from now on. */
  readonly retry?: number;
  /** What the client sends back as `Last-Event-ID`. */
  readonly id?: number | string;
  /** The event's name; a client's `message` handler when absent. */
  readonly event?: string;
  /** The payload; each of its lines becomes a `data:` line, which the client joins again. */
  readonly data?: string;
};

const LINE_BREAK = /\r\n|\r|\n/;

/** `retry:`, `id:`, `event:` and `data:` lines, in that order, and the blank line. */
export function formatSseEvent(event: SseEvent): string {
  let frame = event.retry === undefined ? '' : `retry: ${Math.max(0, Math.floor(event.retry))}\n`;
  if (event.id !== undefined) frame += `id: ${singleLine('id', String(event.id))}\n`;
  if (event.event !== undefined) frame += `event: ${singleLine('event', event.event)}\n`;
  if (event.data !== undefined) for (const line of event.data.split(LINE_BREAK)) frame += `data: ${line}\n`;
  return `${frame}\n`;
}

/** A comment, which clients ignore: keeps proxies from timing an idle stream out. */
export function formatSseComment(text: string): string {
  return `: ${text.replace(/[\r\n]+/g, ' ')}\n\n`;
}

/** A line break would end the field early, and a client ignores an `id` holding NUL (§9.2.6). */
function singleLine(field: 'id' | 'event', value: string): string {
  if (/[\r\n\0]/.test(value)) throw new TypeError(`an SSE ${field} cannot hold a line break or NUL: ${JSON.stringify(value)}`);
  return value;
}
