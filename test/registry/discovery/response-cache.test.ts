import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createResponseCache } from '../../../src/registry/discovery/response-cache.ts';

const cacheOf = (maxEntries: number, maxAgeMs = 60_000) => {
  // lru-cache takes a start time of 0 as none: the injected clock starts later, as a real one does.
  const clock = { at: 10_000 };
  return { clock, cache: createResponseCache<string>({ maxEntries, maxAgeMs, now: () => clock.at }) };
};

test('an entry is served while its generation holds and it is younger than maxAgeMs', () => {
  const { clock, cache } = cacheOf(10, 1_000);
  cache.set('a', 7, 'A');
  assert.equal(cache.get('a', 7), 'A');
  assert.equal(cache.get('a', 8), undefined, 'another generation');
  assert.equal(cache.size, 0, 'and the stale entry is gone');
  cache.set('a', 8, 'A2');
  clock.at += 1_001;
  assert.equal(cache.get('a', 8), undefined, 'too old');
  assert.deepEqual(cache.stats(), { hits: 1, misses: 2, entries: 0, max_entries: 10 });
});

test('maxEntries 0 keeps nothing', () => {
  const { cache } = cacheOf(0);
  cache.set('a', 0, 'A');
  assert.equal(cache.get('a', 0), undefined);
  assert.equal(cache.size, 0);
});

test('the bound evicts the least recently used entry: one read since its insertion keeps an entry past later ones', () => {
  const { cache } = cacheOf(4);
  for (const key of ['a', 'b', 'c', 'd']) cache.set(key, 0, key);
  for (const key of ['e', 'f']) cache.set(key, 0, key); // a and b, never read, go first
  assert.equal(cache.get('a', 0), undefined);
  assert.equal(cache.get('b', 0), undefined);
  assert.equal(cache.get('c', 0), 'c', 'c is read: now the most recently used');
  cache.set('g', 0, 'g'); // evicts d, the oldest now, not c
  assert.equal(cache.get('d', 0), undefined);
  assert.equal(cache.get('c', 0), 'c');
  assert.equal(cache.size, 4);
});

test('a busy key is never evicted while it is read more often than the bound turns over', () => {
  const { cache } = cacheOf(100);
  cache.set('hot', 0, 'H');
  for (let n = 0; n < 1_000; n += 1) {
    cache.set(`cold-${n}`, 0, 'x');
    if (n % 50 === 0) assert.equal(cache.get('hot', 0), 'H', `read after ${n} cold entries`);
  }
  assert.equal(cache.size, 100);
});
