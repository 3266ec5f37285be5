import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { WebSocket } from 'ws';
import { createEchoAgent } from '../../fixtures/echo-agent.ts';
import { CALLER, listenAgent, textMessage, token } from '../../helpers.ts';

type Frame = { id?: unknown; method?: string; params?: any; result?: any; error?: any };

/** A connected socket with a queue of received frames. */
async function connect(url: string, headers: Record<string, string>) {
  const socket = new WebSocket(url, { headers });
  const frames: Frame[] = [];
  const waiters: (() => void)[] = [];
  socket.on('message', (data) => {
    frames.push(JSON.parse(data.toString()));
    waiters.splice(0).forEach((wake) => wake());
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  const next = async (): Promise<Frame> => {
    while (frames.length === 0) await new Promise<void>((resolve) => waiters.push(resolve));
    return frames.shift() as Frame;
  };
  return { socket, next, send: (value: unknown) => socket.send(typeof value === 'string' ? value : JSON.stringify(value)) };
}

async function wsUrl(httpUrl: string) {
  return `${httpUrl.replace(/^http/, 'ws')}ws`;
}

async function headers() {
  return { authorization: `Bearer ${await token()}`, 'x-agent-id': CALLER };
}

describe('WebSocket transport', () => {
  test('carries the same JSON-RPC: a call is answered on the socket, bad JSON is -32700', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const ws = await connect(await wsUrl(url), await headers());
    t.after(() => ws.socket.close());
    ws.send({ jsonrpc: '2.0', id: 5, method: 'echo/say', params: { text: 'over ws' } });
    const answer = await ws.next();
    assert.equal(answer.id, 5);
    assert.equal(answer.result.text, 'over ws');
    ws.send('{nope');
    assert.equal((await ws.next()).error.code, -32700);
  });

  test('a task sent over the socket is answered, then followed by tasks/status notifications to the end', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const ws = await connect(await wsUrl(url), await headers());
    t.after(() => ws.socket.close());
    ws.send({ jsonrpc: '2.0', id: 1, method: 'tasks/send', params: { message: textMessage('hello') } });
    const answer = await ws.next();
    assert.equal(answer.result.status, 'submitted');
    const notifications: Frame[] = [];
    for (let frame = await ws.next(); ; frame = await ws.next()) {
      assert.equal(frame.method, 'tasks/status');
      assert.equal(frame.id, undefined, 'a notification has no id');
      assert.equal(frame.params.task_id, answer.result.task_id);
      notifications.push(frame);
      if (frame.params.final) break;
    }
    assert.equal(notifications.at(-1)?.params.status.state, 'completed');
    assert.equal(notifications.at(-1)?.params.message.parts[0].text, 'echo: hello');
  });

  test('tasks/sendSubscribe over the socket answers {subscribed: true} and pushes every update', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const ws = await connect(await wsUrl(url), await headers());
    t.after(() => ws.socket.close());
    ws.send({ jsonrpc: '2.0', id: 'sub', method: 'tasks/sendSubscribe', params: { message: textMessage('hi') } });
    assert.deepEqual((await ws.next()).result, { subscribed: true });
    const states: string[] = [];
    for (let frame = await ws.next(); ; frame = await ws.next()) {
      states.push(frame.params.status.state);
      assert.equal(typeof frame.params.event_id, 'number');
      if (frame.params.final) break;
    }
    assert.deepEqual(states, ['submitted', 'working', 'completed']);
  });

  test('an upgrade without valid credentials is refused with 401 and -32001', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const socket = new WebSocket(await wsUrl(url), { headers: { authorization: `Bearer ${await token()}`, 'x-agent-id': 'did:web:someone:else' } });
    const status = await new Promise<number>((resolve, reject) => {
      socket.once('unexpected-response', (_request, response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => {
          assert.equal(JSON.parse(body).error.code, -32001);
          resolve(response.statusCode ?? 0);
        });
      });
      socket.once('open', () => reject(new Error('opened without credentials')));
      socket.once('error', () => undefined);
    });
    assert.equal(status, 401);
  });
});

describe('WebSocket transport at shutdown', () => {
  test('closing the agent closes open sockets with 1012 and a reason to reconnect', async (t) => {
    const { app, url } = await listenAgent(t, createEchoAgent());
    const ws = await connect(await wsUrl(url), await headers());
    const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    await app.close();
    assert.deepEqual(await closed, { code: 1012, reason: 'server shutting down; reconnect' });
  });
});
