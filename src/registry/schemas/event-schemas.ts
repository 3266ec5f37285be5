import { Type } from 'typebox';

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
