import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { describe, test } from 'node:test';
import { eventually } from '../../helpers/eventually.ts';
import { BACKENDS } from '../../helpers/registry.ts';
import {
  collectEvents,
  oneTo,
  registerOverHttp,
  seqsOf,
  startRegistries,
  testScope,
  WAIT_TIMEOUT_MS,
} from '../../helpers/listening.ts';

/**
 * Long enough that no ping (which also re-reads the log as a safety net) fires during a test: these
 * tests pass only if commits wake the stream.
 */
const NO_PING = { pingIntervalMs: 10 * 60 * 1000 };

async function suspend(baseUrl: string, agentId: string): Promise<void> {
  const ulid = agentId.slice(agentId.lastIndexOf('/') + 1);
  const response = await fetch(`${baseUrl}/v1/agents/${ulid}/suspend`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-idempotency-key': crypto.randomUUID() },
    body: JSON.stringify({ reason: 'review' }),
  });
  assert.equal(response.status, 200);
}

/** `ward_event_stream_subscribers` as /metrics reports it. */
async function subscribers(baseUrl: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  return Number(/^ward_event_stream_subscribers(?:\{[^}]*\})? (\d+)$/m.exec(text)?.[1]);
}

for (const backend of BACKENDS) {
  describe(`event stream over a real socket [${backend}]`, () => {
    test('a reader that closes its connection is dropped at once, its gauge with it, not at the next ping', async (t) => {
      const scope = testScope(t);
      const [registry] = await startRegistries(scope, backend, { events: NO_PING });
      const { baseUrl } = registry!;
      const { port } = new URL(baseUrl);
      const socket = connect(Number(port), '127.0.0.1');
      t.after(() => socket.destroy());
      let received = '';
      socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
      socket.write(`GET /v1/events/stream HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n\r\n`);
      await eventually(() => (received.includes('events after seq') ? true : undefined), 'the stream to open');
      assert.equal(await subscribers(baseUrl), 1);
      const closed = new Promise((resolve) => socket.once('close', resolve));
      socket.end();
      // The ping is ten minutes away: only the reader's close can end the stream within the wait.
      await eventually(async () => ((await subscribers(baseUrl)) === 0 ? true : undefined), 'the gauge to fall');
      await closed;
    });

    test('without a cursor the stream starts with the first event committed after it opened', async (t) => {
      const scope = testScope(t);
      const [registry] = await startRegistries(scope, backend, { events: NO_PING });
      const { baseUrl } = registry!;
      await registerOverHttp(baseUrl, 'Before the stream');
      const stream = collectEvents(scope, `${baseUrl}/v1/events/stream`);
      await stream.opened;
      const agentId = await registerOverHttp(baseUrl, 'After the stream');
      await stream.waitUntil((events) => events.length >= 2, 'two events');
      assert.deepEqual(seqsOf(stream.events), [3, 4]);
      const [registered] = stream.events;
      assert.equal(registered?.type, 'agent.registered');
      assert.deepEqual(Object.keys(registered?.data ?? {}).sort(), ['data', 'occurred_at', 'seq', 'subject', 'type']);
      assert.equal(registered?.data.seq, 3);
      assert.equal(registered?.data.type, 'agent.registered');
      assert.equal(registered?.data.subject, agentId);
      assert.equal(registered?.data.data.agent_id, agentId);
      assert.match(registered?.data.occurred_at ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    });

    test('cursor=0 replays every retained event and then continues live; cursor=n starts after n', async (t) => {
      const scope = testScope(t);
      const [registry] = await startRegistries(scope, backend, { events: NO_PING });
      const { baseUrl } = registry!;
      for (let i = 0; i < 3; i += 1) await registerOverHttp(baseUrl, `Early ${i}`);
      const all = collectEvents(scope, `${baseUrl}/v1/events/stream?cursor=0`);
      const later = collectEvents(scope, `${baseUrl}/v1/events/stream?cursor=4`);
      await Promise.all([all.opened, later.opened]);
      await registerOverHttp(baseUrl, 'Live');
      await all.waitUntil((events) => events.length >= 8, 'eight events');
      await later.waitUntil((events) => events.length >= 4, 'four events');
      assert.deepEqual(seqsOf(all.events), oneTo(8));
      assert.deepEqual(seqsOf(later.events), [5, 6, 7, 8]);
    });

    test('event_types filters, given as repeated parameters or as a comma list', async (t) => {
      const scope = testScope(t);
      const [registry] = await startRegistries(scope, backend, { events: NO_PING });
      const { baseUrl } = registry!;
      const repeated = collectEvents(scope, `${baseUrl}/v1/events/stream?event_types=agent.suspended&event_types=agent.registered`);
      const comma = collectEvents(scope, `${baseUrl}/v1/events/stream?event_types=agent.suspended,agent.trust_validated`);
      await Promise.all([repeated.opened, comma.opened]);
      const agentId = await registerOverHttp(baseUrl, 'Filtered');
      await suspend(baseUrl, agentId);
      await repeated.waitUntil((events) => events.some((e) => e.type === 'agent.suspended'), 'the suspension');
      await comma.waitUntil((events) => events.some((e) => e.type === 'agent.suspended'), 'the suspension');
      assert.deepEqual(repeated.events.map((e) => [Number(e.id), e.type]), [[1, 'agent.registered'], [3, 'agent.suspended']]);
      assert.deepEqual(comma.events.map((e) => [Number(e.id), e.type]), [[2, 'agent.trust_validated'], [3, 'agent.suspended']]);
    });

    test('a reader cut off in the middle of a burst resumes with Last-Event-ID and gets every event exactly once, in order', async (t) => {
      const scope = testScope(t);
      const [registry] = await startRegistries(scope, backend, { events: NO_PING });
      const { baseUrl, streamRequests } = registry!;
      // The client's reconnection waits at this gate, so events are certainly committed while it is away.
      let connections = 0;
      let openGate = () => {};
      const gate = new Promise<void>((resolve) => (openGate = resolve));
      const stream = collectEvents(scope, `${baseUrl}/v1/events/stream?cursor=0`, {
        fetch: async (input, init) => {
          connections += 1;
          if (connections > 1) await gate;
          return fetch(input, init);
        },
      });
      await stream.opened;

      const writers = (prefix: string, count: number) =>
        Promise.all([0, 1].map(async (w) => {
          for (let i = 0; i < count; i += 1) await registerOverHttp(baseUrl, `${prefix} ${w}-${i}`);
        }));
      const burst = writers('Burst', 10);
      await stream.waitUntil((events) => events.length >= 10, 'the first events of the burst');
      const receivedBeforeCut = stream.events.length;
      streamRequests[0]?.socket.destroy();
      await burst;
      const tail = writers('Tail', 5);
      openGate();
      await tail;
      await stream.waitUntil((events) => events.length >= 60, 'all 60 events');

      assert.ok(receivedBeforeCut < 40, 'the reader was cut off before the burst ended');
      assert.equal(streamRequests.length, 2, 'the client reconnected once');
      const resumedAfter = Number(streamRequests[1]?.headers['last-event-id']);
      assert.ok(resumedAfter >= receivedBeforeCut && resumedAfter < 40, `resumed after ${resumedAfter}`);
      assert.deepEqual(seqsOf(stream.events), oneTo(60), 'every event exactly once, in order');
    });

    test('a bad query is refused in the error envelope before any stream starts', async (t) => {
      const scope = testScope(t);
      const [registry] = await startRegistries(scope, backend);
      const cases: Array<[string, Record<string, string>, number, string, string]> = [
        ['?event_types=agent.registered,agent.exploded', {}, 422, 'VALIDATION_ERROR', '/event_types'],
        ['?cursor=abc', {}, 422, 'VALIDATION_ERROR', '/cursor'],
        ['?cursor=99', {}, 422, 'VALIDATION_ERROR', '/cursor'],
        ['', { 'last-event-id': '-1' }, 422, 'VALIDATION_ERROR', '/last-event-id'],
        ['?cursor=SSN%20123-45-6789', {}, 422, 'PHI_DETECTED', '/cursor'],
        ['?colour=blue', {}, 422, 'VALIDATION_ERROR', '/colour'],
      ];
      for (const [query, headers, status, code, pointer] of cases) {
        const response = await fetch(`${registry!.baseUrl}/v1/events/stream${query}`, { headers });
        const body = (await response.json()) as any;
        assert.equal(response.status, status, query);
        assert.match(response.headers.get('content-type') ?? '', /^application\/json/, query);
        assert.equal(body.error.code, code, query);
        const pointers = [...(body.error.details.errors ?? []), ...(body.error.details.findings ?? [])].map((e: any) => e.pointer);
        assert.ok(pointers.includes(pointer), `${query}: ${JSON.stringify(body.error.details)}`);
      }
    });

    test('the stream is text/event-stream, not cached, with the request id, and pings while idle; HEAD gets the headers only', async (t) => {
      const scope = testScope(t);
      const [registry] = await startRegistries(scope, backend, { events: { pingIntervalMs: 20 } });
      const controller = new AbortController();
      scope.defer(() => controller.abort());
      const response = await fetch(`${registry!.baseUrl}/v1/events/stream`, {
        headers: { 'x-request-id': 'stream-test-1' },
        signal: controller.signal,
      });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'text/event-stream; charset=utf-8');
      assert.match(response.headers.get('cache-control') ?? '', /no-cache/);
      assert.equal(response.headers.get('x-request-id'), 'stream-test-1');
      const reader = response.body!.getReader();
      let text = '';
      const deadline = setTimeout(() => controller.abort(), WAIT_TIMEOUT_MS);
      while (!/^: ping$/m.test(text)) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      clearTimeout(deadline);
      assert.match(text, /^retry: \d+$/m);
      assert.match(text, /^: ping$/m);

      const head = await fetch(`${registry!.baseUrl}/v1/events/stream`, { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.equal(head.headers.get('content-type'), 'text/event-stream; charset=utf-8');
      assert.equal(await head.text(), '');
    });

    test('closing the registry ends open streams with a shutting_down notice instead of hanging', async (t) => {
      const scope = testScope(t);
      const [registry] = await startRegistries(scope, backend, { events: NO_PING });
      const stream = collectEvents(scope, `${registry!.baseUrl}/v1/events/stream`);
      await stream.opened;
      await registerOverHttp(registry!.baseUrl, 'Before shutdown');
      await stream.waitUntil((events) => events.length >= 2, 'two events');
      await registry!.app.close();
      await stream.waitUntil(() => stream.dropped.length > 0, 'the shutdown notice');
      stream.close();
      assert.deepEqual(stream.dropped, [{ reason: 'shutting_down', cursor: '2' }]);
    });
  });
}
