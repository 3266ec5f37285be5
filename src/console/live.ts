/**
 * `GET /live`: the registry's change stream (contract §6) passed through to the browser, so pages
 * update without a reload (web/console.js turns each event into a refresh of the live sections). The
 * browser never holds a registry credential: the console opens the stream with the session's.
 * Resuming is the registry's own: `Last-Event-ID` (an EventSource reconnecting) or `?cursor=` (the
 * page reopening after a failure) is passed on, so a dropped connection misses no event.
 */
import { Readable } from 'node:stream';
import type { ReadableStream } from 'node:stream/web';
import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { formatSseEvent } from '../core/http/server-sent-events.ts';
import { endableRelay, sendEventStream, sendStreamEnd, trackLiveStream } from './access/live-streams.ts';
import { errorEnvelope } from '../core/errors.ts';
import { credentialRefused, signInAgain } from './pages/page-kit.ts';

const SEQ = /^\d{1,19}$/;

export function registerLive(app: FastifyInstance): void {
  app.get<{ Querystring: { cursor?: string } }>('/live', async (request, reply) => {
    const lastEventId = request.headers['last-event-id'];
    const cursor = typeof request.query.cursor === 'string' && SEQ.test(request.query.cursor) ? request.query.cursor : undefined;
    // The response's close, not the request's: a GET's request stream closes as soon as it is read.
    const closed = new AbortController();
    reply.raw.once('close', () => closed.abort());
    const opened = await request.registry.openEventStream(
      { cursor, lastEventId: typeof lastEventId === 'string' && SEQ.test(lastEventId) ? lastEventId : undefined },
      { signal: closed.signal },
    );
    if (!opened.ok) {
      // A refused credential ends the session (the page then asks to sign in); anything else is told
      // to the page script, which decides whether to retry.
      if (credentialRefused(request, opened)) return signInAgain(request, reply);
      return sendStreamEnd(reply, opened.status ?? 503, opened.envelope);
    }
    const upstream = Readable.fromWeb(opened.response.body as ReadableStream<Uint8Array>);
    upstream.on('error', () => upstream.destroy());
    // `ward-open` first: the page script knows the registry's stream is really there (an EventSource's
    // own "open" also fires for a `ward-end` answer).
    const relay = endableRelay(
      (async function* () {
        yield formatSseEvent({ event: 'ward-open', data: '{}' });
        yield* upstream;
      })(),
    );
    const { body } = relay;
    // In open access there is no session to end; otherwise the stream ends with it (access/live-streams.ts),
    // told as a 401: the page reloads into the sign-in form, which says why.
    const end = () => relay.end(formatSseEvent({ retry: 600_000, event: 'ward-end', data: JSON.stringify({ status: 401, ...errorEnvelope('UNAUTHORIZED', 'Sign in to the console again.') }) }));
    const untrack = request.viewer.openAccess
      ? () => undefined
      : trackLiveStream(request.session.sessionId, { stop: () => reply.raw.destroy(), end, stillAccepted: request.credentialStillAccepted }, request.liveDeadline);
    reply.raw.once('close', () => {
      untrack();
      upstream.destroy();
      body.destroy();
    });
    return sendEventStream(reply, body);
  });
}

/** `registerLive` as the `ward-console-live` plugin, over `ward-console-access` (it reads `request.registry`). */
export const consoleLive = fastifyPlugin(async (app) => registerLive(app), {
  name: 'ward-console-live',
  fastify: '5.x',
  dependencies: ['ward-console-access'],
  decorators: { request: ['registry', 'viewer'] },
});
