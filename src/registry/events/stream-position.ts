import { WardError } from '../../core/errors.ts';
import { EVENT_TYPES, type EventType } from '../../contract/event-types.ts';

/** Where a client asked the stream to start (contract §6). */
export type RequestedPosition = { kind: 'after'; seq: number; from: 'query' | 'header' } | { kind: 'now' };

const SEQ = /^(0|[1-9][0-9]{0,15})$/;

/**
 * The start a client asked for: `Last-Event-ID` when present (an EventSource reconnecting sends it
 * while its URL still carries the original `cursor=`, so the header is the newer of the two), else
 * `cursor`, else "now". Either must be a decimal sequence number.
 */
export function requestedPosition(cursor: string | undefined, lastEventId: string | undefined): RequestedPosition {
  if (lastEventId !== undefined && lastEventId.trim() !== '') {
    return { kind: 'after', seq: parseSeq(lastEventId.trim(), 'header', '/last-event-id'), from: 'header' };
  }
  if (cursor !== undefined) return { kind: 'after', seq: parseSeq(cursor, 'query', '/cursor'), from: 'query' };
  return { kind: 'now' };
}

function parseSeq(text: string, part: 'query' | 'header', pointer: string): number {
  const seq = SEQ.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(seq)) {
    throw new WardError('VALIDATION_ERROR', 'The stream position is not an event sequence number.', {
      errors: [{ in: part, pointer, reason: 'must be a decimal event sequence number' }],
    });
  }
  return seq;
}

/**
 * `event_types` as repeated parameters, a comma-separated list, or both. `undefined` when absent or
 * empty (every type). An unknown type is a 422 naming it.
 */
export function parseEventTypes(raw: string | readonly string[] | undefined): ReadonlySet<EventType> | undefined {
  if (raw === undefined) return undefined;
  const names = [raw]
    .flat()
    .flatMap((value) => value.split(','))
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const unknown = names.filter((name) => !(EVENT_TYPES as readonly string[]).includes(name));
  if (unknown.length > 0) {
    throw new WardError('VALIDATION_ERROR', 'event_types names an unknown event type.', {
      errors: unknown.map((name) => ({ in: 'query', pointer: '/event_types', reason: `unknown event type "${name}"` })),
      known_types: [...EVENT_TYPES],
    });
  }
  return names.length === 0 ? undefined : new Set(names as EventType[]);
}

/** What the stream needs to know about the log to place a client. */
export type EventLogBounds = {
  lastCommittedSeq(): Promise<number>;
  oldestRetainedSeq(): Promise<number>;
};

/**
 * The sequence number the stream delivers *after*:
 * - "now": the last committed event, so the first delivered is the first committed after opening;
 * - `0`: just before the oldest retained event (a replay of everything kept);
 * - `n`: `n`, if the events after it are still retained (else 410 `CURSOR_EXPIRED`) and it is not
 *   beyond the last committed event (a position nobody can have seen: 422).
 */
export async function resolveStartSeq(requested: RequestedPosition, log: EventLogBounds): Promise<number> {
  if (requested.kind === 'now') return log.lastCommittedSeq();
  const oldest = await log.oldestRetainedSeq();
  if (requested.seq === 0) return oldest - 1;
  if (requested.seq + 1 < oldest) {
    throw new WardError('CURSOR_EXPIRED', undefined, {
      cursor: String(requested.seq),
      oldest_retained_seq: oldest,
    });
  }
  const last = await log.lastCommittedSeq();
  if (requested.seq > last) {
    throw new WardError('VALIDATION_ERROR', 'The stream position is beyond the last committed event.', {
      errors: [
        {
          in: requested.from,
          pointer: requested.from === 'query' ? '/cursor' : '/last-event-id',
          reason: `must not exceed the last committed sequence number ${last}`,
        },
      ],
    });
  }
  return requested.seq;
}
