import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createEchoAgent } from '../../fixtures/echo-agent.ts';
import { authHeaders, deferred, eventually, listenAgent, rpc, sseReader, textMessage, type SseEvent } from '../../helpers.ts';

async function openStream(url: string, method: string, params: unknown, extraHeaders: Record<string, string> = {}, id: number | string = 'sub-1') {
  const response = await fetch(url, {
    method: 'POST',
    headers: { ...(await authHeaders()), accept: 'text/event-stream', ...extraHeaders },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
  });
  return response;
}

async function readAll(reader: ReturnType<typeof sseReader>): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for (let event = await reader.next(); event; event = await reader.next()) events.push(event);
  return events;
}

async function readUntil(reader: ReturnType<typeof sseReader>, done: (event: SseEvent) => boolean): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for (let event = await reader.next(); event; event = await reader.next()) {
    events.push(event);
    if (done(event)) break;
  }
  return events;
}

const stateOf = (event: SseEvent) => event.data.result.status.state;

describe('SSE streaming', () => {
  test('tasks/sendSubscribe streams JSON-RPC responses with id: lines, ending with the final event', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const response = await openStream(url, 'tasks/sendSubscribe', { message: textMessage('hello') });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    const events = await readAll(sseReader(response));
    assert.deepEqual(events.map(stateOf), ['submitted', 'working', 'completed']);
    for (const event of events) {
      assert.equal(event.data.jsonrpc, '2.0');
      assert.equal(event.data.id, 'sub-1');
      assert.ok(event.data.result.task_id);
    }
    const ids = events.map((event) => Number(event.id));
    assert.deepEqual(ids, [...ids].sort((a, b) => a - b), 'ids increase');
    assert.deepEqual(events.map((event) => event.data.result.final), [false, false, true]);
    const last = events.at(-1)?.data.result;
    assert.equal(last.message.parts[0].text, 'echo: hello');
    assert.equal(last.artifacts[0].name, 'echo', 'the final event carries the artifacts');
  });

  test('a stream that cannot start is a plain JSON-RPC error, not an event stream', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const response = await openStream(url, 'tasks/resubscribe', { task_id: 'no-such-task' });
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(((await response.json()) as any).error.code, -32002);
  });

  test('after a dropped connection, tasks/resubscribe with Last-Event-ID resumes with no gap and no repeat', async (t) => {
    const gate = deferred();
    const { url } = await listenAgent(t, createEchoAgent({ gate: gate.promise }));
    const first = sseReader(await openStream(url, 'tasks/sendSubscribe', { message: textMessage('wait') }));
    const before = await readUntil(first, (event) => event.data.result.message?.parts[0]?.text === 'waiting for the gate');
    const taskId = before[0]?.data.result.task_id as string;
    const lastSeen = before.at(-1)?.id as string;
    await first.cancel(); // the connection drops mid-task

    const resumed = sseReader(await openStream(url, 'tasks/resubscribe', { task_id: taskId }, { 'last-event-id': lastSeen }, 'resume-1'));
    gate.resolve();
    const after = await readAll(resumed);
    assert.deepEqual(after.map(stateOf), ['completed']);
    assert.ok(after.every((event) => Number(event.id) > Number(lastSeen)));
    assert.equal(after[0]?.data.id, 'resume-1');
    assert.equal(after.at(-1)?.data.result.final, true);
    const all = [...before, ...after].map((event) => Number(event.id));
    assert.equal(new Set(all).size, all.length, 'no event twice');
  });

  test('tasks/resubscribe replays what was missed while disconnected, then follows live', async (t) => {
    const gate = deferred();
    const { url } = await listenAgent(t, createEchoAgent({ gate: gate.promise }));
    const first = sseReader(await openStream(url, 'tasks/sendSubscribe', { message: textMessage('wait') }));
    const submitted = await first.next();
    await first.cancel();
    const taskId = submitted?.data.result.task_id as string;
    const resumed = sseReader(await openStream(url, 'tasks/resubscribe', { task_id: taskId, last_event_id: Number(submitted?.id) }));
    const replayed = await readUntil(resumed, (event) => event.data.result.message?.parts[0]?.text === 'waiting for the gate');
    assert.deepEqual(replayed.map(stateOf), ['working', 'working']);
    gate.resolve();
    const live = await readAll(resumed);
    assert.deepEqual(live.map(stateOf), ['completed']);
  });

  test('tasks/resubscribe without Last-Event-ID starts from the current status', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const sent = await rpc(url, 'tasks/send', { message: textMessage('ask') });
    await eventually(async () => ((await rpc(url, 'tasks/get', { task_id: sent.result.task_id })).result.status.state === 'input-required' ? true : undefined), 'input-required');
    const events = await readAll(sseReader(await openStream(url, 'tasks/resubscribe', { task_id: sent.result.task_id })));
    assert.deepEqual(events.map(stateOf), ['input-required']);
    assert.equal(events[0]?.data.result.final, true, 'input-required ends the turn, so the stream');
  });
});
