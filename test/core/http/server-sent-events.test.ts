import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { formatSseComment, formatSseEvent } from '../../../src/core/http/server-sent-events.ts';

describe('server-sent event frames', () => {
  test('an event is its id, event and data lines and a blank line', () => {
    assert.equal(formatSseEvent({ id: 7, data: '{"a":1}' }), 'id: 7\ndata: {"a":1}\n\n');
    assert.equal(formatSseEvent({ id: 4, event: 'agent.updated', data: '{}' }), 'id: 4\nevent: agent.updated\ndata: {}\n\n');
    assert.equal(formatSseEvent({ event: 'ward-open', data: '{}' }), 'event: ward-open\ndata: {}\n\n');
  });

  test('retry comes first, as a whole number of milliseconds, and may stand alone', () => {
    assert.equal(formatSseEvent({ retry: 600_000, event: 'ward-end', data: '{"status":401}' }), 'retry: 600000\nevent: ward-end\ndata: {"status":401}\n\n');
    assert.equal(formatSseEvent({ retry: 1000.7 }), 'retry: 1000\n\n');
    assert.equal(formatSseEvent({ retry: -5 }), 'retry: 0\n\n');
  });

  test('every line of the data is a data line, whichever line break ends it', () => {
    assert.equal(formatSseEvent({ data: 'x\ny' }), 'data: x\ndata: y\n\n');
    assert.equal(formatSseEvent({ data: 'a\r\nb\rc' }), 'data: a\ndata: b\ndata: c\n\n');
    assert.equal(formatSseEvent({ data: '' }), 'data: \n\n');
  });

  test('an id or event name that would break the frame is a programming error', () => {
    assert.throws(() => formatSseEvent({ id: '1\nevent: forged', data: '{}' }), TypeError);
    assert.throws(() => formatSseEvent({ event: 'a\rb', data: '{}' }), TypeError);
    assert.throws(() => formatSseEvent({ id: 'a\0b', data: '{}' }), TypeError);
  });

  test('a comment stays on one line', () => {
    assert.equal(formatSseComment('ping'), ': ping\n\n');
    assert.equal(formatSseComment('events\r\nafter\nseq 3'), ': events after seq 3\n\n');
  });
});
