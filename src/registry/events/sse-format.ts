import { formatSseEvent } from '../../core/http/server-sent-events.ts';
import type { StoredEvent } from '../storage/stores/event-store.ts';

/**
 * The change stream's frames (contract §6), written with the one SSE encoder
 * (core/http/server-sent-events.ts).
 */

/** Frames already encoded, per event object: streams sharing recent events (recent-events.ts) encode each once. */
const encoded = new WeakMap<StoredEvent, string>();

/** `id: <seq>`, `event: <type>`, `data: {seq, type, occurred_at, subject, data}`. */
export function eventFrame(event: StoredEvent): string {
  let frame = encoded.get(event);
  if (frame === undefined) {
    const body = { seq: event.seq, type: event.type, occurred_at: event.occurred_at, subject: event.subject, data: event.data };
    frame = formatSseEvent({ id: event.seq, event: event.type, data: JSON.stringify(body) });
    encoded.set(event, frame);
  }
  return frame;
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
  return formatSseEvent({ event: 'stream.dropped', data: JSON.stringify({ reason, cursor: String(cursor) }) });
}
