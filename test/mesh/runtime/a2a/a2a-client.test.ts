/**
 * A2A v0.3 compatibility (contract §10), with the official A2A JavaScript client as the caller: it
 * reads the capability card, then speaks `message/send`, `tasks/get`, `message/stream` and
 * `tasks/cancel` to the agent.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { Role, TaskState } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { createEchoAgent } from '../../fixtures/echo-agent.ts';
import { CALLER, listenAgent, token } from '../../helpers.ts';

/** fetch with the mesh credentials added, as an A2A deployment's auth interceptor would. */
function meshFetch(bearer: string): typeof fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${bearer}`);
    headers.set('x-agent-id', CALLER);
    return fetch(input, { ...init, headers });
  };
}

async function a2aClient(url: string): Promise<Client> {
  const fetchImpl = meshFetch(await token());
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl, legacyCompat: { enabled: true } }),
    }),
  );
  return factory.createFromUrl(url);
}

function userText(text: string, taskId = ''): any {
  return {
    message: { messageId: randomUUID(), role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: text } }], taskId, contextId: '' },
  };
}

describe('A2A v0.3 clients (official @a2a-js/sdk client as the caller)', () => {
  test('message/send blocks until the turn ends and returns the task; tasks/get reads it back', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const client = await a2aClient(url);
    const result: any = await client.sendMessage(userText('hello a2a'));
    assert.equal(result.status.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(result.status.message.parts[0].content.value, 'echo: hello a2a');
    const task: any = await client.getTask({ id: result.id } as any);
    assert.equal(task.id, result.id);
    assert.equal(task.status.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(task.artifacts[0].parts[0].content.value, 'hello a2a');
    assert.equal(task.history.length, 2);
  });

  test('an input-required task continues when the client answers with the task id', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const client = await a2aClient(url);
    const first: any = await client.sendMessage(userText('ask'));
    assert.equal(first.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    const second: any = await client.sendMessage(userText('more', first.id));
    assert.equal(second.id, first.id);
    assert.equal(second.status.state, TaskState.TASK_STATE_COMPLETED);
  });

  test('message/stream yields the task, then status updates to the final one', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const client = await a2aClient(url);
    const kinds: string[] = [];
    let last: any;
    for await (const event of client.sendMessageStream(userText('streamed'))) {
      const payload = (event as any).payload;
      kinds.push(payload.$case);
      last = payload.value;
    }
    assert.equal(kinds[0], 'task');
    assert.ok(kinds.includes('statusUpdate'));
    assert.ok(kinds.includes('artifactUpdate'));
    assert.equal(last.status.state, TaskState.TASK_STATE_COMPLETED);
  });

  test('tasks/cancel of a finished task reaches the client as an error', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const client = await a2aClient(url);
    const done: any = await client.sendMessage(userText('x'));
    await assert.rejects(client.cancelTask({ id: done.id } as any));
  });
});
