import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { nextTraceparent, parseTraceparent } from '../../../src/mesh/runtime/trace-context.ts';

const VALID = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('W3C trace context', () => {
  test('a valid traceparent parses', () => {
    assert.deepEqual(parseTraceparent(VALID), { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', parentId: '00f067aa0ba902b7', flags: '01' });
  });

  for (const bad of ['', 'garbage', 'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', '00-00000000000000000000000000000000-00f067aa0ba902b7-01', '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01', '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01']) {
    test(`"${bad}" is not a traceparent`, () => {
      assert.equal(parseTraceparent(bad), undefined);
    });
  }

  test('the next hop keeps the trace id and flags with a new parent id; without one a trace starts', () => {
    const next = parseTraceparent(nextTraceparent(VALID));
    assert.equal(next?.traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
    assert.equal(next?.flags, '01');
    assert.notEqual(next?.parentId, '00f067aa0ba902b7');
    const fresh = parseTraceparent(nextTraceparent(undefined));
    assert.ok(fresh, 'a fresh traceparent is valid');
    assert.notEqual(parseTraceparent(nextTraceparent(undefined))?.traceId, fresh.traceId);
  });
});
