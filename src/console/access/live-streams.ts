/**
 * The event streams (`/live`) each session holds open. A stream is checked when it opens, so it must
 * also end when its session does: at sign-out, when the session expires or its credential is refused,
 * and at the moment the session would expire unless the person acts. A session holds at most a few
 * (each is a registry connection); a new one beyond that ends the oldest.
 */
import type { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { AnswerEnvelope } from '../../client/registry-answer.ts';
import { SSE_HEADERS, formatSseEvent } from '../../core/http/server-sent-events.ts';

const MAX_STREAMS_PER_SESSION = 4;
const streams = new Map<string, Set<() => void>>();

/** Registers a stream's `stop`; returns what to call when the stream ends by itself. */
export function trackLiveStream(sessionId: string, stop: () => void, deadline: number | undefined): () => void {
  const open = streams.get(sessionId) ?? new Set<() => void>();
  streams.set(sessionId, open);
  if (open.size >= MAX_STREAMS_PER_SESSION) open.values().next().value?.();
  const timer = deadline === undefined ? undefined : setTimeout(stop, Math.max(0, deadline - Date.now()) + 1000);
  timer?.unref();
  const entry = () => {
    clearTimeout(timer);
    stop();
  };
  open.add(entry);
  return () => {
    clearTimeout(timer);
    open.delete(entry);
    if (open.size === 0) streams.delete(sessionId);
  };
}

/** Ends every stream of the session. */
export function closeLiveStreams(sessionId: string): void {
  const open = streams.get(sessionId);
  streams.delete(sessionId);
  for (const stop of open ?? []) stop();
}

/**
 * Answers an event-stream request that cannot be served with one `ward-end` event carrying the status
 * and envelope, then ends: an EventSource cannot read an error status, and web/console.js decides
 * from this whether to reload (401), stop (403), start over (410, 422) or retry later.
 */
export function sendStreamEnd(reply: FastifyReply, status: number, envelope: AnswerEnvelope): FastifyReply {
  return sendEventStream(reply, formatSseEvent({ retry: 600_000, event: 'ward-end', data: JSON.stringify({ status, ...envelope }) }));
}

/** Answers 200 with an event stream; it carries a session's data, so nothing on the way may keep it (`no-store`). */
export function sendEventStream(reply: FastifyReply, body: string | Readable): FastifyReply {
  return reply
    .code(200)
    .headers({ ...SSE_HEADERS, 'cache-control': 'no-store' })
    .send(body);
}
