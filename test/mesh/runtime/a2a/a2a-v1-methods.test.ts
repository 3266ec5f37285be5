/**
 * A2A 1.0's methods on the agent runtime, over HTTP as any 1.0 client calls them (docs/mesh.md, A2A 1.0
 * coverage): ListTasks (filters, paging, history, artifacts, refusals), GetExtendedAgentCard, the 1.0
 * error codes (-32004 for a finished task, -32001 only for a task the caller does not have, stream
 * errors inside the event stream), the card's 1.0 shape unless 0.3 is asked for, a refused 1.0 call's
 * 401, and tasks an executor keeps open. The contract's methods keep their codes beside them.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { MeshAgent } from '../../../../src/mesh/runtime/mesh-agent.ts';
import { createEchoAgent } from '../../fixtures/echo-agent.ts';
import { CALLER, authHeaders, listenAgent, post, rpc, sseReader, textMessage } from '../../helpers.ts';

const OTHER = 'did:web:localhost:agents:someone-else';

let nextId = 1;
const v1Message = (text: string, extra: Record<string, unknown> = {}) => ({
  message: { messageId: `m-${nextId++}`, role: 'ROLE_USER', parts: [{ text }], ...extra },
});

async function send(url: string, text: string, extra: Record<string, unknown> = {}, sub = CALLER): Promise<any> {
  const answer = await rpc(url, 'SendMessage', v1Message(text, extra), sub);
  assert.ok(answer.result, JSON.stringify(answer));
  return answer.result.task;
}

/** An agent whose tasks answer and stay open (`working`), like the TCK agent's. */
function openTaskAgent(): MeshAgent {
  return {
    info: { alias: 'open', name: 'Open', description: 'Keeps tasks open.', version: '1.0.0', skills: [] },
    executeTask: async ({ message }) => ({ state: 'working', message: `got ${message.parts.length} part(s)` }),
  };
}

describe('A2A 1.0 ListTasks', () => {
  test('lists only the caller\'s tasks, most recent first, without artifacts unless asked, and filters by context and state', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const first = await send(url, 'one', { contextId: 'ctx-a' });
    const second = await send(url, 'ask', { contextId: 'ctx-a' });
    const third = await send(url, 'three', { contextId: 'ctx-b' });
    await send(url, 'not yours', {}, OTHER);
    const all = (await rpc(url, 'ListTasks', {})).result;
    assert.deepEqual(all.tasks.map((task: any) => task.id), [third.id, second.id, first.id]);
    assert.equal(all.totalSize, 3);
    assert.equal(all.pageSize, 3);
    assert.equal(all.nextPageToken, '');
    assert.ok(all.tasks.every((task: any) => !('artifacts' in task)), 'artifacts are omitted by default');
    const withArtifacts = (await rpc(url, 'ListTasks', { includeArtifacts: true })).result;
    assert.equal(withArtifacts.tasks.find((task: any) => task.id === first.id).artifacts[0].parts[0].text, 'one');
    const inContext = (await rpc(url, 'ListTasks', { contextId: 'ctx-a' })).result;
    assert.deepEqual(inContext.tasks.map((task: any) => task.id), [second.id, first.id]);
    const waiting = (await rpc(url, 'ListTasks', { status: 'TASK_STATE_INPUT_REQUIRED' })).result;
    assert.deepEqual(waiting.tasks.map((task: any) => task.id), [second.id]);
    const later = (await rpc(url, 'ListTasks', { statusTimestampAfter: '2999-01-01T00:00:00Z' })).result;
    assert.deepEqual(later, { tasks: [], nextPageToken: '', pageSize: 0, totalSize: 0 });
  });

  test('pages with an opaque cursor: no task twice, none left out, an empty token on the last page', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const created = [];
    for (let index = 0; index < 5; index++) created.push((await send(url, `task ${index}`)).id);
    const seen: string[] = [];
    let pageToken = '';
    let pages = 0;
    do {
      const page = (await rpc(url, 'ListTasks', { pageSize: 2, ...(pageToken ? { pageToken } : {}) })).result;
      assert.equal(page.totalSize, 5);
      assert.equal(page.pageSize, page.tasks.length);
      seen.push(...page.tasks.map((task: any) => task.id));
      pageToken = page.nextPageToken;
      pages++;
    } while (pageToken !== '');
    assert.equal(pages, 3);
    assert.deepEqual(seen, created.reverse());
  });

  test('historyLength trims each task\'s history, and 0 omits it', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    await send(url, 'hello');
    const one = (await rpc(url, 'ListTasks', { historyLength: 1 })).result.tasks[0];
    assert.equal(one.history.length, 1);
    assert.equal(one.history[0].role, 'ROLE_AGENT');
    const none = (await rpc(url, 'ListTasks', { historyLength: 0 })).result.tasks[0];
    assert.ok(!('history' in none));
  });

  for (const [label, params, pointer] of [
    ['pageSize 0', { pageSize: 0 }, '/pageSize'],
    ['pageSize 101', { pageSize: 101 }, '/pageSize'],
    ['a negative historyLength', { historyLength: -1 }, '/historyLength'],
    ['an unknown state', { status: 'TASK_STATE_NAPPING' }, '/status'],
    ['a page token it never gave', { pageToken: 'invalid-token-xyz' }, '/pageToken'],
    ['a timestamp that is not one', { statusTimestampAfter: '-1' }, '/statusTimestampAfter'],
  ] as const) {
    test(`${label} is -32602 naming the field`, async (t) => {
      const { url } = await listenAgent(t, createEchoAgent());
      const answer = await rpc(url, 'ListTasks', params);
      assert.equal(answer.error.code, -32602);
      assert.equal(answer.error.data.errors[0].pointer, pointer);
    });
  }
});

describe('A2A 1.0 error codes and streams', () => {
  test('a message to a finished task is UnsupportedOperationError (-32004); tasks/send keeps the contract\'s -32602', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const done = await send(url, 'finish');
    assert.equal(done.status.state, 'TASK_STATE_COMPLETED');
    const v1 = await rpc(url, 'SendMessage', v1Message('again', { taskId: done.id }));
    assert.equal(v1.error.code, -32004);
    assert.equal(v1.error.data.state, 'completed');
    const contract = await rpc(url, 'tasks/send', { task_id: done.id, message: textMessage('again') });
    assert.equal(contract.error.code, -32602);
    assert.equal(contract.error.data.reason, 'task_not_awaiting_input');
  });

  test('a message naming a task the caller does not have is TaskNotFoundError (-32001), and starts nothing', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const answer = await rpc(url, 'SendMessage', v1Message('hello', { taskId: 'no-such-task' }));
    assert.equal(answer.error.code, -32001);
    const theirs = await send(url, 'ask', {}, OTHER);
    assert.equal((await rpc(url, 'SendMessage', v1Message('mine now', { taskId: theirs.id }))).error.code, -32001);
    assert.equal((await rpc(url, 'ListTasks', {})).result.totalSize, 0);
  });

  for (const [label, setup, code] of [
    ['an unknown task: TaskNotFoundError (-32001)', async () => 'no-such-task', -32001],
    ['a finished task: UnsupportedOperationError (-32004)', async (url: string) => (await send(url, 'finish')).id, -32004],
  ] as const) {
    test(`SubscribeToTask to ${label}, inside an event stream`, async (t) => {
      const { url } = await listenAgent(t, createEchoAgent());
      const id = await setup(url);
      const response = await fetch(url, {
        method: 'POST',
        headers: { ...(await authHeaders()), accept: 'text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'SubscribeToTask', params: { id } }),
      });
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
      const events = sseReader(response);
      const event = await events.next();
      assert.equal(event?.data.id, 7);
      assert.equal(event?.data.error.code, code);
      assert.equal(await events.next(), undefined);
    });
  }

  test('the push-notification config methods are PushNotificationNotSupportedError (-32003): the card says pushNotifications: false', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    for (const method of ['CreateTaskPushNotificationConfig', 'GetTaskPushNotificationConfig', 'ListTaskPushNotificationConfigs', 'DeleteTaskPushNotificationConfig']) {
      const answer = await rpc(url, method, { taskId: 't-1', id: 'c-1' });
      assert.equal(answer.error.code, -32003, method);
    }
  });

  test('tasks/resubscribe to an unknown task keeps the contract\'s plain -32002 answer', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const answer = await post(url, { jsonrpc: '2.0', id: 1, method: 'tasks/resubscribe', params: { task_id: 'nope' } }, await authHeaders());
    assert.equal(answer.body.error.code, -32002);
  });

  test('a task the executor keeps open stays working, takes the next message and can be canceled', async (t) => {
    const { url } = await listenAgent(t, openTaskAgent());
    const task = await send(url, 'first');
    assert.equal(task.status.state, 'TASK_STATE_WORKING');
    assert.equal(task.status.message.parts[0].text, 'got 1 part(s)');
    const next = await send(url, 'second', { taskId: task.id });
    assert.equal(next.id, task.id);
    assert.equal(next.status.state, 'TASK_STATE_WORKING');
    assert.equal(next.history.length, 4);
    const canceled = await rpc(url, 'CancelTask', { id: task.id });
    assert.equal(canceled.result.status.state, 'TASK_STATE_CANCELED');
  });
});

describe('A2A 1.0 card and authentication', () => {
  test('the card has 1.0\'s shape for a caller that does not ask for 0.3 (no contract authentication object); 0.3 by header or query gets it', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const plain: any = await (await fetch(`${url}.well-known/agent-card.json`)).json();
    assert.ok(!('authentication' in plain) && !('security' in plain) && !('protocolVersion' in plain));
    assert.deepEqual(plain.securityRequirements, [{ schemes: { mesh_jwt: { list: [] } } }]);
    assert.equal(plain.capabilities.extendedAgentCard, true);
    for (const init of [{ headers: { 'a2a-version': '0.3' } }, {}]) {
      const target = 'headers' in init ? `${url}.well-known/agent-card.json` : `${url}.well-known/agent-card.json?A2A-Version=0.3`;
      const legacy: any = await (await fetch(target, init)).json();
      assert.equal(legacy.authentication.required_scope, 'mesh:invoke');
      assert.deepEqual(legacy.security, [{ mesh_jwt: [] }]);
    }
  });

  test('GetExtendedAgentCard answers an authenticated caller with the 1.0 card', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const card = (await rpc(url, 'GetExtendedAgentCard', {})).result;
    assert.equal(card.name, 'Echo test agent');
    assert.ok(!('authentication' in card));
    assert.equal(card.supportedInterfaces[0].protocolVersion, '1.0');
    assert.ok(card.methods.includes('ListTasks') && card.methods.includes('GetExtendedAgentCard'));
  });

  test('a 1.0 call without a credential is 401 with a challenge and -32000 (not -32001, 1.0\'s TaskNotFoundError); a contract call keeps -32001', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    for (const method of ['GetExtendedAgentCard', 'GetTask', 'ListTasks']) {
      const answer = await post(url, { jsonrpc: '2.0', id: 'a', method, params: { id: 'x' } }, { 'content-type': 'application/json' });
      assert.equal(answer.status, 401, method);
      assert.match(answer.headers.get('www-authenticate') ?? '', /^Bearer /);
      assert.deepEqual({ id: answer.body.id, code: answer.body.error.code, reason: answer.body.error.data.reason }, { id: 'a', code: -32000, reason: 'missing_token' });
    }
    const contract = await post(url, { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { task_id: 'x' } }, { 'content-type': 'application/json' });
    assert.equal(contract.status, 401);
    assert.equal(contract.body.error.code, -32001);
    const v1Header = await post(url, { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { task_id: 'x' } }, { 'content-type': 'application/json', 'a2a-version': '1.0' });
    assert.equal(v1Header.body.error.code, -32000, 'A2A-Version: 1.0 makes any call a 1.0 call');
  });
});
