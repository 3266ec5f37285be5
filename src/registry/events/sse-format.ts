import type { StoredEvent } from '../../core/storage/stores/event-store.ts';

/**
 * Server-sent event frames (WHATWG HTML §9.2, contract §6). Every value written here is a single
 * line: JSON never contains a raw newline, sequence numbers and event types cannot.
 */

/** Frames already encoded, per event object: streams sharing recent events (recent-events.ts) encode each once. */
const encoded = new WeakMap<StoredEvent, string>();

/** `id: <seq>`, `event: <type>`, `data: {seq, type, occurred_at, subject, data}`. */
export function eventFrame(event: StoredEvent): string {
  let frame = encoded.get(event);
  if (frame === undefined) {
    const body = { seq: event.seq, type: event.type, occurred_at: event.occurred_at, subject: event.subject, data: event.data };
    frame = `id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(body)}\n\n`;
    encoded.set(event, frame);
  }
  return frame;
}

/** A comment line, which clients ignore: keeps proxies from timing the connection out. */
export function commentFrame(text: string): string {
  return `: ${text.replace(/[\r\n]+/g, ' ')}\n\n`;
}

/** The reconnection delay the client should use after losing the connection. */
export function retryFrame(milliseconds: number): string {
  return `retry: ${Math.max(0, Math.floor(milliseconds))}\n\n`;
}

/** Why the registry ended a stream itself (docs/api.md, "Event stream"). */
export type StreamEndReason = 'slow_consumer' | 'cursor_expired' | 'shutting_down' | 'unavailable';

/**
 * The last frame of a stream the registry ends itself. It is a named event *without* an `id:` line,
 * so a client's Last-Event-ID stays at the last event it received and an automatic reconnect
 * resumes exactly there; `cursor` is how far this stream had got (every matching event up to it was
 * sent before this frame), for clients that reconnect by hand with `cursor=`.
 */
export function droppedFrame(reason: StreamEndReason, cursor: number): string {
  return `event: stream.dropped\ndata: ${JSON.stringify({ reason, cursor: String(cursor) })}\n\n`;
}
