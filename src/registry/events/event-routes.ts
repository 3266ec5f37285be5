import type { OutgoingHttpHeaders } from 'node:http';
import { WardError } from '../../core/errors.ts';
import { SSE_HEADERS } from '../../core/http/server-sent-events.ts';
import { lastCommittedSeq, listEvents, listEventsNewestFirst, oldestRetainedSeq } from '../storage/stores/event-store.ts';
import { decodeCursor, encodeCursor } from '../../contract/cursor.ts';
import { createRecentEvents } from './recent-events.ts';
import { schedulePruning } from './event-retention.ts';
import { DEFAULT_EVENT_STREAM_OPTIONS, startEventStream, type EventStream, type EventStreamOptions } from './event-stream.ts';
import { assertStreamAllowed } from './stream-access.ts';
import { eventAudienceOf, isEventVisible, ORGANISATION_EVENT_TYPES } from './event-visibility.ts';
import { parseEventTypes, requestedPosition, resolveStartSeq } from './stream-position.ts';
import { callContext } from '../http/request-context.ts';
import { errorResponses } from '../../contract/schemas/common.ts';
import { EventHistoryQuery, EventHistorySchema, EventStreamHeaders, EventStreamQuery, EventStreamResponse } from '../../contract/schemas/event-schemas.ts';
import { registryRoutePlugin } from '../http/route-plugin.ts';

/** Stream tunables; tests shorten the ping interval and the stall timeout. */
export type EventRoutesOptions = Partial<EventStreamOptions>;

/**
 * `GET /v1/events/stream` (contract §6), plus what keeps it honest: one wake-up hub per instance and
 * the retention prune. Everything that can fail with a status (tier, filters, cursor) is checked
 * before the response is taken over, so those answers go out in the error envelope; after that the
 * response belongs to the stream (event-stream.ts).
 */
export const eventRoutes = registryRoutePlugin<EventRoutesOptions>('ward-event-stream-routes', async (app, overrides) => {
  const { storage, config, clock } = app.ward;
  const options: EventStreamOptions = { ...DEFAULT_EVENT_STREAM_OPTIONS, ...definedOnly(overrides) };
  const hub = app.ward.eventHub;
  const stopPruning = schedulePruning(storage, clock, config.REGISTRY_EVENT_RETENTION_DAYS, (error) =>
    app.log.warn({ err: error }, 'event retention prune failed'),
  );
  // One shared read of the newest events per wake-up, however many streams follow (recent-events.ts).
  const recent = createRecentEvents((afterSeq, limit) => listEvents(storage.db, { afterSeq, limit }));
  const active = new Set<EventStream>();
  // Open streams would keep the server from closing; end them first, telling clients why.
  app.addHook('preClose', async () => {
    for (const stream of active) stream.stop('shutting_down');
  });
  app.addHook('onClose', async () => {
    stopPruning();
  });

  app.get(
    '/v1/events/stream',
    {
      schema: {
        tags: ['events'],
        operationId: 'streamEvents',
        summary: 'Stream registry changes (server-sent events)',
        description: 'Follows registry changes as server-sent events, resumable from a sequence number (cursor or Last-Event-ID); 410 when that position is no longer retained (contract §6).',
        querystring: EventStreamQuery,
        headers: EventStreamHeaders,
        response: { 200: EventStreamResponse, ...errorResponses(410) },
      },
      // The cursor is a sequence number: a ten-digit one can pass the NHS check by arithmetic alone.
      config: { phiNumericQuery: ['cursor'] },
    },
    async (request, reply) => {
      const ctx = callContext(request);
      assertStreamAllowed(ctx);
      const audience = eventAudienceOf(ctx);
      const types = parseEventTypes(request.query.event_types);
      const startAfter = await resolveStartSeq(requestedPosition(request.query.cursor, request.headers['last-event-id']), {
        lastCommittedSeq: () => lastCommittedSeq(storage.db),
        oldestRetainedSeq: () => oldestRetainedSeq(storage.db),
      });

      if (request.method === 'HEAD') {
        // A HEAD answer has no body, so there is nothing to stream: the headers alone.
        return reply.code(200).headers(SSE_HEADERS).send();
      }
      reply.hijack();
      // The connection carries nothing after the stream, so it is closed with it rather than kept
      // alive, where it would hold up a graceful shutdown until the client's idle timeout.
      reply.raw.shouldKeepAlive = false;
      reply.raw.writeHead(200, { ...headersSetSoFar(reply.getHeaders()), ...SSE_HEADERS });
      reply.raw.socket?.setNoDelay(true);
      const stream = startEventStream({
        sink: reply.raw,
        readAfter: recent.readAfter,
        subscribe: hub.subscribe,
        startAfter,
        types,
        visible: (event) => isEventVisible(audience, event),
        options,
        onError: (error) => request.log.warn({ err: error }, 'event stream failed'),
      });
      active.add(stream);
      app.ward.metrics.streamOpened();
      void stream.finished.then((outcome) => {
        active.delete(stream);
        app.ward.metrics.streamClosed(outcome.reason);
      });
    },
  );
});

/**
 * `GET /v1/events`: the retained events as JSON pages, newest first (an agent's history, the recent
 * changes): the stream's content for readers that look back rather than follow, under the stream's
 * own tier rule.
 */
export const eventHistoryRoutes = registryRoutePlugin('ward-event-history-routes', async (app) => {
  const { storage } = app.ward;
  app.get(
    '/v1/events',
    {
      schema: {
        tags: ['events'],
        operationId: 'listEvents',
        summary: 'Retained events, newest first (filter by subject and type)',
        description: 'The events the stream carries, as JSON pages newest first: the history of an agent or registry, or the recent changes.',
        querystring: EventHistoryQuery,
        response: { 200: EventHistorySchema, ...errorResponses() },
      },
    },
    async (request) => {
      const ctx = callContext(request);
      assertStreamAllowed(ctx);
      const audience = eventAudienceOf(ctx);
      const { subject, event_types: rawTypes, cursor, limit = 20 } = request.query;
      const types = parseEventTypes(rawTypes);
      const before = cursor === undefined ? undefined : Number(decodeCursor(cursor, 'events'));
      if (before !== undefined && !Number.isSafeInteger(before)) {
        throw new WardError('VALIDATION_ERROR', 'The cursor is not one this listing issued.', {
          errors: [{ in: 'query', pointer: '/cursor', reason: 'unknown cursor' }],
        });
      }
      const rows = await listEventsNewestFirst(storage.db, {
        limit: limit + 1,
        ...(before !== undefined ? { beforeSeq: before } : {}),
        ...(types ? { types: [...types] } : {}),
        ...(subject ? { subject } : {}),
        ...(audience.admin ? {} : { restricted: { types: ORGANISATION_EVENT_TYPES, orgId: audience.orgId } }),
      });
      const events = rows.slice(0, limit);
      const oldest = events.at(-1);
      return {
        events,
        next_cursor: rows.length > limit && oldest ? encodeCursor('events', String(oldest.seq)) : null,
        last_seq: await lastCommittedSeq(storage.db),
        oldest_retained_seq: await oldestRetainedSeq(storage.db),
      };
    },
  );
});

/** The connection the LISTEN session needs: the configured PostgreSQL database and schema. */
function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** What hooks set so far (X-Request-Id): a hijacked reply no longer sends them by itself. */
function headersSetSoFar(headers: Record<string, number | string | string[] | undefined>): OutgoingHttpHeaders {
  const set: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) set[name] = value;
  return set;
}
