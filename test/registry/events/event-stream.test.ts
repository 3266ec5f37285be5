import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import type { StoredEvent } from '../../../src/registry/storage/stores/event-store.ts';
import { startEventStream, type EventStreamOptions } from '../../../src/registry/events/event-stream.ts';

const OPTIONS: EventStreamOptions = { pingIntervalMs: 60_000, pageSize: 10, stallTimeoutMs: 60_000, retryMs: 1000 };

function event(seq: number, type = 'agent.updated'): StoredEvent {
  return { seq, type, subject: `registry://gb/agents/${seq}`, occurred_at: '2025-01-01T00:00:00.000Z', data: { n: seq } };
}

/** An in-memory event log with the wake-up plumbing the stream expects. */
function fakeLog(initial: number) {
  const events = Array.from({ length: initial }, (_, i) => event(i + 1));
  const wakes = new Set<() => void>();
  const reads: number[] = [];
  return {
    events,
    reads,
    subscribers: () => wakes.size,
    readAfter: async (afterSeq: number, limit: number) => {
      reads.push(afterSeq);
      return events.filter((e) => e.seq > afterSeq).slice(0, limit);
    },
    subscribe: (wake: () => void) => {
      wakes.add(wake);
      return () => wakes.delete(wake);
    },
    commit(...added: StoredEvent[]) {
      events.push(...added);
      for (const wake of wakes) wake();
    },
  };
}

/** A client that reads everything at once, recording the text. */
function readingClient() {
  let text = '';
  const sink = new Writable({
    write(chunk, _encoding, callback) {
      text += String(chunk);
      callback();
    },
  });
  return { sink, text: () => text, ids: () => [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1])) };
}

/** Resolves once `predicate` holds, polling the event loop; fails after a safety-net timeout. */
async function eventually(predicate: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!predicate()) {
    if (Date.now() > deadline) assert.fail('the condition never held');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('event stream delivery', () => {
  test('delivers the events after the start position in order, then what each commit adds', async () => {
    const log = fakeLog(25);
    const client = readingClient();
    const stream = startEventStream({ ...log, sink: client.sink, startAfter: 3, options: OPTIONS });
    await eventually(() => client.ids().length === 22);
    log.commit(event(26), event(27));
    await eventually(() => client.ids().length === 24);
    stream.stop('shutting_down');
    assert.deepEqual(client.ids(), Array.from({ length: 24 }, (_, i) => i + 4));
    assert.match(client.text(), /^retry: 1000$/m);
    assert.match(client.text(), /^id: 4\nevent: agent\.updated\ndata: \{"seq":4,"type":"agent\.updated","occurred_at":"[^"]+","subject":"registry:\/\/gb\/agents\/4","data":\{"n":4\}\}\n\n/m);
  });

  test('a type filter skips other events but still moves the position past them', async () => {
    const log = fakeLog(0);
    log.events.push(event(1, 'agent.updated'), event(2, 'agent.revoked'), event(3, 'agent.updated'));
    const client = readingClient();
    const stream = startEventStream({ ...log, sink: client.sink, startAfter: 0, types: new Set(['agent.revoked']), options: OPTIONS });
    await eventually(() => log.reads.includes(3));
    stream.stop('shutting_down');
    assert.deepEqual(client.ids(), [2]);
    assert.equal((await stream.finished).position, 3);
  });

  test('a client whose socket never drains is dropped as slow_consumer after one page, without reading further', async () => {
    const log = fakeLog(500);
    const written: string[] = [];
    const sink = new Writable({ highWaterMark: 256, write() {} }); // never calls back: a client that stopped reading
    const write = sink.write.bind(sink);
    sink.write = ((chunk: string) => (written.push(chunk), write(chunk))) as typeof sink.write;
    const end = sink.end.bind(sink);
    sink.end = ((chunk: string) => (written.push(chunk), end(chunk))) as typeof sink.end;
    const stream = startEventStream({ ...log, sink, startAfter: 0, options: { ...OPTIONS, stallTimeoutMs: 20 } });
    const outcome = await stream.finished;
    assert.deepEqual(outcome, { reason: 'slow_consumer', position: 10 });
    assert.deepEqual(log.reads, [0], 'nothing beyond the first page was read');
    assert.equal(written.filter((chunk) => chunk.startsWith('id: ')).length, 10);
    assert.equal(written.at(-1), 'event: stream.dropped\ndata: {"reason":"slow_consumer","cursor":"10"}\n\n');
    assert.equal(log.subscribers(), 0, 'the wake-up subscription is gone');
  });

  test('events pruned under a lagging reader end the stream with cursor_expired instead of a silent gap', async () => {
    const log = fakeLog(0);
    log.events.push(event(8), event(9));
    const client = readingClient();
    const stream = startEventStream({ ...log, sink: client.sink, startAfter: 5, options: OPTIONS });
    assert.deepEqual(await stream.finished, { reason: 'cursor_expired', position: 5 });
    assert.deepEqual(client.ids(), []);
    assert.match(client.text(), /event: stream\.dropped\ndata: \{"reason":"cursor_expired","cursor":"5"\}/);
  });

  test('a client that disconnects ends the stream and its subscription', async () => {
    const log = fakeLog(2);
    const client = readingClient();
    const stream = startEventStream({ ...log, sink: client.sink, startAfter: 0, options: OPTIONS });
    await eventually(() => client.ids().length === 2);
    client.sink.destroy();
    assert.deepEqual(await stream.finished, { reason: 'client_closed', position: 2 });
    assert.equal(log.subscribers(), 0);
  });

  test('a failing read ends the stream as unavailable, so the client reconnects', async () => {
    const log = fakeLog(0);
    const client = readingClient();
    const errors: unknown[] = [];
    const stream = startEventStream({
      ...log,
      readAfter: async () => Promise.reject(new Error('database down')),
      sink: client.sink,
      startAfter: 0,
      options: OPTIONS,
      onError: (error) => errors.push(error),
    });
    assert.equal((await stream.finished).reason, 'unavailable');
    assert.equal(errors.length, 1);
    assert.match(client.text(), /"reason":"unavailable"/);
  });

  test('pings are comments, and each also re-reads the log in case a wake-up was lost', async () => {
    const log = fakeLog(0);
    const client = readingClient();
    const stream = startEventStream({ ...log, sink: client.sink, startAfter: 0, options: { ...OPTIONS, pingIntervalMs: 5 } });
    await eventually(() => log.reads.length >= 1);
    log.events.push(event(1)); // committed without a wake-up
    await eventually(() => client.ids().length === 1);
    stream.stop('shutting_down');
    assert.match(client.text(), /^: ping$/m);
  });
});
