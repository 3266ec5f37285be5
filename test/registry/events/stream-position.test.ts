import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { WardError } from '../../../src/core/errors.ts';
import { EVENT_TYPES } from '../../../src/contract/event-types.ts';
import { parseEventTypes, requestedPosition, resolveStartSeq } from '../../../src/registry/events/stream-position.ts';

function refusal(run: () => unknown): WardError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof WardError, String(error));
    return error;
  }
  assert.fail('not refused');
}

async function refusalOf(promise: Promise<unknown>): Promise<WardError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof WardError, String(error));
    return error;
  }
  assert.fail('not refused');
}

describe('where a stream starts', () => {
  test('Last-Event-ID takes precedence over cursor, because a reconnecting client keeps its first URL', () => {
    assert.deepEqual(requestedPosition('0', '17'), { kind: 'after', seq: 17, from: 'header' });
    assert.deepEqual(requestedPosition('5', undefined), { kind: 'after', seq: 5, from: 'query' });
    assert.deepEqual(requestedPosition('5', ''), { kind: 'after', seq: 5, from: 'query' });
    assert.deepEqual(requestedPosition(undefined, undefined), { kind: 'now' });
  });

  test('a position that is not a decimal sequence number is a 422 naming where it came from', () => {
    for (const [cursor, header, where] of [
      ['x', undefined, ['query', '/cursor']],
      ['-3', undefined, ['query', '/cursor']],
      ['1e3', undefined, ['query', '/cursor']],
      ['007', undefined, ['query', '/cursor']],
      [undefined, '12abc', ['header', '/last-event-id']],
    ] as const) {
      const error = refusal(() => requestedPosition(cursor, header));
      assert.equal(error.code, 'VALIDATION_ERROR');
      const [issue] = error.details.errors as Array<{ in: string; pointer: string }>;
      assert.deepEqual([issue?.in, issue?.pointer], where);
    }
  });

  test('event_types takes repeated parameters, comma lists or both, and refuses unknown types', () => {
    assert.deepEqual([...(parseEventTypes(['agent.revoked', 'agent.updated,agent.retired']) ?? [])], ['agent.revoked', 'agent.updated', 'agent.retired']);
    assert.deepEqual([...(parseEventTypes('agent.revoked') ?? [])], ['agent.revoked']);
    assert.equal(parseEventTypes(undefined), undefined);
    assert.equal(parseEventTypes(['', ' , ']), undefined);
    assert.equal(parseEventTypes([...EVENT_TYPES])?.size, EVENT_TYPES.length);
    const error = refusal(() => parseEventTypes(['agent.revoked,agent.exploded', 'Agent.Updated']));
    assert.equal(error.code, 'VALIDATION_ERROR');
    assert.deepEqual((error.details.errors as Array<{ reason: string }>).map((e) => e.reason), [
      'unknown event type "agent.exploded"',
      'unknown event type "Agent.Updated"',
    ]);
  });

  const log = (oldest: number, last: number) => ({ oldestRetainedSeq: async () => oldest, lastCommittedSeq: async () => last });

  test('now is the last committed event; 0 is just before the oldest retained; n is n', async () => {
    assert.equal(await resolveStartSeq({ kind: 'now' }, log(10, 40)), 40);
    assert.equal(await resolveStartSeq({ kind: 'after', seq: 0, from: 'query' }, log(10, 40)), 9);
    assert.equal(await resolveStartSeq({ kind: 'after', seq: 9, from: 'query' }, log(10, 40)), 9);
    assert.equal(await resolveStartSeq({ kind: 'after', seq: 40, from: 'query' }, log(10, 40)), 40);
    assert.equal(await resolveStartSeq({ kind: 'after', seq: 0, from: 'query' }, log(41, 40)), 40, 'everything pruned');
  });

  test('a position whose next events were pruned is 410 CURSOR_EXPIRED; one beyond the log is 422', async () => {
    const expired = await refusalOf(resolveStartSeq({ kind: 'after', seq: 8, from: 'header' }, log(10, 40)));
    assert.equal(expired.code, 'CURSOR_EXPIRED');
    assert.equal(expired.status, 410);
    assert.deepEqual(expired.details, { cursor: '8', oldest_retained_seq: 10 });
    const ahead = await refusalOf(resolveStartSeq({ kind: 'after', seq: 41, from: 'header' }, log(10, 40)));
    assert.equal(ahead.code, 'VALIDATION_ERROR');
    assert.equal((ahead.details.errors as Array<{ pointer: string }>)[0]?.pointer, '/last-event-id');
  });
});
