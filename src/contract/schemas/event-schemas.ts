import { Type } from 'typebox';
import { Cursor, Nullable, PageLimit, Timestamp } from './common.ts';

export const EventStreamQuery = Type.Object(
  {
    cursor: Type.Optional(
      Type.String({ maxLength: 32, description: 'Deliver the events after this sequence number; 0 replays everything retained.' }),
    ),
    event_types: Type.Optional(
      Type.Array(Type.String({ maxLength: 1024 }), { maxItems: 64, description: 'Only these types: repeated, or a comma list' }),
    ),
  },
  { additionalProperties: false },
);

export const EventStreamHeaders = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({ maxLength: 32, description: 'Sent by EventSource on reconnect; takes precedence over cursor.' }),
  ),
});

/** The 200 answer as OpenAPI sees it: a text/event-stream body (docs/api.md, "Event stream"). */
export const EventStreamResponse = {
  description:
    'Server-sent events: `id: <seq>`, `event: <type>`, `data: {seq, type, occurred_at, subject, data}`; `: ping` every 15 s.',
  content: { 'text/event-stream': { schema: { type: 'string' } } },
};

export const EventHistoryQuery = Type.Object(
  {
    subject: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'Only events about this agent or registry URI' })),
    event_types: EventStreamQuery.properties.event_types,
    cursor: Type.Optional(Cursor),
    limit: Type.Optional(PageLimit),
  },
  { additionalProperties: false },
);

export const StoredEventSchema = Type.Object(
  {
    seq: Type.Integer(),
    type: Type.String(),
    occurred_at: Timestamp,
    subject: Type.String(),
    data: Type.Object({}, { additionalProperties: true }),
  },
  { title: 'Event' },
);

export const EventHistorySchema = Type.Object({
  events: Type.Array(StoredEventSchema),
  /** Older events: pass as `cursor`; null at the oldest retained. */
  next_cursor: Nullable(Type.String()),
  last_seq: Type.Integer({ description: 'The sequence number of the last committed event' }),
  oldest_retained_seq: Type.Integer({ description: 'The oldest event still retained; older ones were pruned' }),
}, { title: 'EventPage' });
