/**
 * The shared window of newest events (recent-events.ts): streams woken together at one position cause
 * one read; later pages come from memory while the window covers them; a stream behind the window
 * reads the source; what is answered is always exactly what the source holds.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { StoredEvent } from '../../../src/registry/storage/stores/event-store.ts';
import { createRecentEvents } from '../../../src/registry/events/recent-events.ts';
import { eventFrame } from '../../../src/registry/events/sse-format.ts';

const event = (seq: number): StoredEvent => ({ seq, type: 'agent.updated', subject: `s${seq}`, occurred_at: '2026-11-25T00:00:00.000Z', data: { n: seq } });

describe('recent events shared by streams', () => {
  test('a thousand readers at the tail make one read; the window answers exactly the source', async () => {
    const log: StoredEvent[] = [];
    const reads: [number, number][] = [];
    const source = async (afterSeq: number, limit: number) => {
      reads.push([afterSeq, limit]);
      await new Promise((resolve) => setImmediate(resolve));
      return log.filter((e) => e.seq > afterSeq).slice(0, limit);
    };
    const recent = createRecentEvents(source, 8);
    for (let seq = 1; seq <= 3; seq += 1) log.push(event(seq));
    const pages = await Promise.all(Array.from({ length: 1000 }, () => recent.readAfter(0, 100)));
    assert.equal(reads.length, 1);
    assert.ok(pages.every((page) => page.length === 3 && page[0] === pages[0]?.[0]), 'the same event objects for every reader');
    assert.equal(eventFrame(pages[0]?.[0] as StoredEvent), eventFrame(pages[999]?.[0] as StoredEvent));

    // From memory while covered (behind the tail), from the source at the tail.
    assert.deepEqual((await recent.readAfter(1, 100)).map((e) => e.seq), [2, 3]);
    assert.equal(reads.length, 1);
    for (let seq = 4; seq <= 12; seq += 1) log.push(event(seq));
    assert.deepEqual((await recent.readAfter(3, 100)).map((e) => e.seq), [4, 5, 6, 7, 8, 9, 10, 11, 12]);
    assert.equal(reads.length, 2);
    // The window keeps the newest 8 (5..12): a reader at 2 is behind it and reads the source.
    assert.deepEqual((await recent.readAfter(6, 2)).map((e) => e.seq), [7, 8]);
    assert.equal(reads.length, 2);
    assert.deepEqual((await recent.readAfter(2, 3)).map((e) => e.seq), [3, 4, 5]);
    assert.equal(reads.length, 3);
    // Whatever the order of reads, every answer equals the source's.
    for (const [after, limit] of [[0, 5], [4, 100], [11, 100], [12, 100], [7, 1]] as const) {
      assert.deepEqual((await recent.readAfter(after, limit)).map((e) => e.seq), log.filter((e) => e.seq > after).slice(0, limit).map((e) => e.seq), `${after}/${limit}`);
    }
  });

  test('a failed read is not kept: the next reader tries again', async () => {
    let fail = true;
    const recent = createRecentEvents(async () => {
      if (fail) throw new Error('database away');
      return [event(1)];
    });
    await assert.rejects(recent.readAfter(0, 10), /database away/);
    fail = false;
    assert.deepEqual((await recent.readAfter(0, 10)).map((e) => e.seq), [1]);
  });
});
