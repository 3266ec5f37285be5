/**
 * The event streams (`/live`, a task's relay) each session holds open. A stream is checked when it
 * opens, so it must also end when its session does: at sign-out, when the session expires or its
 * credential is refused (asked again while it is open), and at the moment the session would expire
 * unless the person acts. A session holds at most a few
 * (each is a registry connection); a new one beyond that ends the oldest.
 */
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { AnswerEnvelope } from '../../client/registry-answer.ts';
import { SSE_HEADERS, formatSseEvent } from '../../core/http/server-sent-events.ts';
import { READ_VERDICT_MAX_AGE_MS } from './credential-check.ts';

const MAX_STREAMS_PER_SESSION = 4;
/** Per session: each stream's `end`, and its `stop`. */
const streams = new Map<string, Map<() => void, () => void>>();

/**
 * How a stream is ended: `stop` cuts it (a newer stream of the session takes its place, or the session
 * may have expired: the page reconnects and learns which); `end` tells the page its session is over
 * and ends it (sign-out, expiry, the credential refused: the page reloads into the sign-in form); `stillAccepted`, when given, is asked every
 * {@link READ_VERDICT_MAX_AGE_MS} (access.ts), and a refusal ends the stream even if the person does
 * nothing.
 */
export type LiveStreamEnds = { stop: () => void; end: () => void; stillAccepted?: (() => Promise<boolean>) | undefined };

/** Registers a stream; returns what to call when the stream ends by itself. */
export function trackLiveStream(sessionId: string, ends: LiveStreamEnds, deadline: number | undefined): () => void {
  const open = streams.get(sessionId) ?? new Map<() => void, () => void>();
  streams.set(sessionId, open);
  if (open.size >= MAX_STREAMS_PER_SESSION) open.values().next().value?.();
  const finish = (how: () => void) => () => {
    clearTimeout(timer);
    clearInterval(asking);
    how();
  };
  // At the deadline the stream is cut: the page reconnects, and finds its session ended, or renewed
  // meanwhile by the person's activity elsewhere (a reload here would count as activity).
  const timer = deadline === undefined ? undefined : setTimeout(finish(ends.stop), Math.max(0, deadline - Date.now()) + 1000);
  timer?.unref();
  const { stillAccepted } = ends;
  const asking = stillAccepted && setInterval(() => void stillAccepted().then((accepted) => accepted || finish(ends.end)(), () => undefined), READ_VERDICT_MAX_AGE_MS);
  asking?.unref();
  const end = finish(ends.end);
  open.set(end, finish(ends.stop));
  return () => {
    clearTimeout(timer);
    clearInterval(asking);
    open.delete(end);
    if (open.size === 0) streams.delete(sessionId);
  };
}

/** Ends every stream of the session, telling each page the session is over. */
export function closeLiveStreams(sessionId: string): void {
  const open = streams.get(sessionId);
  streams.delete(sessionId);
  for (const end of open?.keys() ?? []) end();
}

/**
 * A stream body relaying `source` that can be ended with a last frame of the console's own: `end`
 * stops relaying and writes `frame`, after a blank line when the source stopped inside one of its
 * frames (that frame then arrives cut, as a reconnecting client would see it).
 */
export function endableRelay(source: AsyncIterable<Buffer | string>): { body: Readable; end(frame: string): void } {
  let ending: ((frame: string) => void) | undefined;
  const ended = new Promise<string>((resolve) => (ending = resolve));
  async function* relay(): AsyncGenerator<Buffer | string> {
    const iterator = source[Symbol.asyncIterator]();
    let boundary = true;
    try {
      for (;;) {
        const pending = iterator.next();
        pending.catch(() => undefined); // left behind when the relay ends first
        const next = await Promise.race([pending, ended.then((frame) => ({ frame }))]);
        if ('frame' in next) {
          yield `${boundary ? '' : '\n\n'}${next.frame}`;
          return;
        }
        if (next.done) return;
        boundary = next.value.toString().endsWith('\n\n');
        yield next.value;
      }
    } finally {
      // Not awaited: a source waiting for its next chunk would hold the ending back until then.
      void Promise.resolve(iterator.return?.()).catch(() => undefined);
    }
  }
  return { body: Readable.from(relay()), end: (frame) => ending?.(frame) };
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
