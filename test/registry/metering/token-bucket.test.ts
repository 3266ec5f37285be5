import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  UNITS_PER_TOKEN,
  fullBucket,
  hasToken,
  msUntilFull,
  msUntilToken,
  refill,
  takeToken,
  wholeTokens,
} from '../../../src/registry/metering/token-bucket.ts';

const T0 = Date.parse('2030-01-15T10:00:00.000Z');

/** Takes tokens until the bucket has none; returns how many were taken. */
function drain(capacity: number, nowMs: number, bucket = fullBucket(capacity, nowMs)) {
  let taken = 0;
  let current = refill(bucket, capacity, nowMs);
  while (hasToken(current)) {
    current = takeToken(current);
    taken += 1;
  }
  return { taken, bucket: current };
}

describe('token bucket arithmetic', () => {
  test('a new bucket holds its capacity: exactly the per-minute figure at one instant', () => {
    for (const capacity of [60, 30, 300, 100, 1000, 500, 5000, 2000, 7, 1]) {
      assert.equal(drain(capacity, T0).taken, capacity, `capacity ${capacity}`);
    }
    assert.equal(refill(undefined, 60, T0).units, 60 * UNITS_PER_TOKEN, 'an absent bucket is full');
  });

  test('tokens come back continuously: capacity per minute, spread evenly', () => {
    const empty = drain(60, T0).bucket;
    assert.equal(wholeTokens(refill(empty, 60, T0 + 999).units), 0, 'not one token before a second');
    assert.equal(wholeTokens(refill(empty, 60, T0 + 1000).units), 1, 'one token a second at 60/min');
    assert.equal(wholeTokens(refill(empty, 60, T0 + 30_000).units), 30, 'half the bucket in half a minute');
    const fast = drain(1000, T0).bucket;
    assert.equal(wholeTokens(refill(fast, 1000, T0 + 59).units), 0);
    assert.equal(wholeTokens(refill(fast, 1000, T0 + 60).units), 1, 'one token each 60 ms at 1000/min');
    const odd = drain(7, T0).bucket;
    assert.equal(wholeTokens(refill(odd, 7, T0 + 8571).units), 0);
    assert.equal(wholeTokens(refill(odd, 7, T0 + 8572).units), 1, '60000/7 ms rounds up, never early');
  });

  test('a bucket never holds more than its capacity, however long it waited', () => {
    const empty = drain(60, T0).bucket;
    assert.equal(refill(empty, 60, T0 + 60_000).units, 60 * UNITS_PER_TOKEN);
    assert.equal(refill(empty, 60, T0 + 86_400_000 * 365).units, 60 * UNITS_PER_TOKEN);
    assert.equal(
      refill(empty, 1_000_000_000, T0 + 86_400_000).units,
      1_000_000_000 * UNITS_PER_TOKEN,
      'the largest override stays exact',
    );
  });

  test('a clock that goes backwards adds nothing and keeps the later stamp', () => {
    const half = { units: 30 * UNITS_PER_TOKEN, updatedMs: T0 };
    assert.deepEqual(refill(half, 60, T0 - 5000), half);
    assert.deepEqual(refill(half, 60, T0), half);
  });

  test('the waits: until the next token and until the bucket is full', () => {
    assert.equal(msUntilToken(UNITS_PER_TOKEN, 60), 0);
    assert.equal(msUntilToken(0, 60), 1000);
    assert.equal(msUntilToken(UNITS_PER_TOKEN / 2, 60), 500);
    assert.equal(msUntilToken(0, 1000), 60);
    assert.equal(msUntilToken(0, 0), null, 'a zero figure never refills');
    assert.equal(msUntilFull(0, 60), 60_000);
    assert.equal(msUntilFull(59 * UNITS_PER_TOKEN, 60), 1000);
    assert.equal(msUntilFull(60 * UNITS_PER_TOKEN, 60), 0);
  });

  test('taking from a bucket without a whole token is a programmer error', () => {
    assert.throws(() => takeToken({ units: UNITS_PER_TOKEN - 1, updatedMs: T0 }), /without a whole token/);
    assert.throws(() => fullBucket(-1, T0), /capacity/);
    assert.throws(() => refill(undefined, 1.5, T0), /capacity/);
  });
});
