/**
 * A2A interop (contract §10, docs/mesh.md), with the official A2A JavaScript client as the caller:
 * once as it ships (A2A 1.0, the card found from the agent's URL, only an auth hook added) and once
 * as a v0.3 client (the SDK's legacy transport on the card's v0.3 interface). Both speak to the same
 * tasks: send, get, stream, continue an input-required task, cancel.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TaskState } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, createAuthenticatingFetchWithRetry, type Client } from '@a2a-js/sdk/client';
import { TaskNotCancelableError, TaskNotFoundError } from '@a2a-js/sdk/errors';
import { createEchoAgent, type EchoAgentControls } from '../../fixtures/echo-agent.ts';
import { CALLER, authHeaders, listenAgent, post, token } from '../../helpers.ts';
import { a2aUserMessage, officialA2aClient } from './official-client.ts';

async function meshHeaders(): Promise<Record<string, string>> {
  return { authorization: `Bearer ${await token()}`, 'x-agent-id': CALLER };
}

/** A v0.3-only client: the SDK's legacy transport, given the card's v0.3 interface only. */
async function legacyClient(url: string): Promise<Client> {
  const headers = await meshHeaders();
  const fetchImpl = createAuthenticatingFetchWithRetry(fetch, { headers: async () => headers, shouldRetryWithHeaders: async () => undefined });
  const card: any = await (await fetch(new URL('.well-known/agent-card.json', url))).json();
  card.supportedInterfaces = card.supportedInterfaces.filter((entry: any) => entry.protocolVersion === '0.3');
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } })] }),
  );
  return factory.createFromAgentCard(card);
}

const clients: Array<[string, (url: string) => Promise<Client>]> = [
  ['A2A 1.0 (the SDK as shipped)', async (url) => officialA2aClient(url, await meshHeaders())],
  ['A2A v0.3 (legacy transport)', legacyClient],
];

for (const [label, connect] of clients) {
  describe(`official @a2a-js/sdk client, ${label}`, () => {
    test('send blocks until the turn ends and returns the task; get reads it back', async (t) => {
      const { url } = await listenAgent(t, createEchoAgent());
      const client = await connect(url);
      assert.equal(client.protocolVersion, label.startsWith('A2A 1.0') ? '1.0' : '0.3');
      const result: any = await client.sendMessage(a2aUserMessage({ text: 'hello a2a' }));
      assert.equal(result.status.state, TaskState.TASK_STATE_COMPLETED);
      assert.equal(result.status.message.parts[0].content.value, 'echo: hello a2a');
      const task: any = await client.getTask({ id: result.id, tenant: '' } as any);
      assert.equal(task.id, result.id);
      assert.equal(task.status.state, TaskState.TASK_STATE_COMPLETED);
      assert.equal(task.artifacts[0].parts[0].content.value, 'hello a2a');
      assert.equal(task.history.length, 2);
    });

    test('an input-required task continues when the client answers with the task id', async (t) => {
      const { url } = await listenAgent(t, createEchoAgent());
      const client = await connect(url);
      const first: any = await client.sendMessage(a2aUserMessage({ text: 'ask' }));
      assert.equal(first.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      const second: any = await client.sendMessage(a2aUserMessage({ text: 'more' }, first.id));
      assert.equal(second.id, first.id);
      assert.equal(second.status.state, TaskState.TASK_STATE_COMPLETED);
    });

    test('a data part reaches the agent as an object', async (t) => {
      const { url } = await listenAgent(t, createEchoAgent());
      const client = await connect(url);
      const result: any = await client.sendMessage(a2aUserMessage({ data: { hello: 'world' } }));
      assert.equal(result.status.message.parts[0].content.value, 'echo: {"hello":"world"}');
    });

    test('streaming yields the task, then status and artifact updates to the final one', async (t) => {
      const { url } = await listenAgent(t, createEchoAgent());
      const client = await connect(url);
      const kinds: string[] = [];
      let last: any;
      for await (const event of client.sendMessageStream(a2aUserMessage({ text: 'streamed' }))) {
        const payload = (event as any).payload;
        kinds.push(payload.$case);
        last = payload.value;
      }
      assert.equal(kinds[0], 'task');
      assert.ok(kinds.includes('statusUpdate'));
      assert.ok(kinds.includes('artifactUpdate'));
      assert.equal(last.status.state, TaskState.TASK_STATE_COMPLETED);
    });

    test('cancel stops a running task; cancelling a finished one is TaskNotCancelable in 1.0', async (t) => {
      let open!: () => void;
      const controls: EchoAgentControls = { gate: new Promise<void>((resolve) => (open = resolve)) };
      t.after(() => open());
      const { url } = await listenAgent(t, createEchoAgent(controls));
      const client = await connect(url);
      const running: any = await client.sendMessage({ ...a2aUserMessage({ text: 'wait' }), configuration: { returnImmediately: true, acceptedOutputModes: [] } });
      assert.notEqual(running.status.state, TaskState.TASK_STATE_COMPLETED);
      const canceled: any = await client.cancelTask({ id: running.id, tenant: '' } as any);
      assert.equal(canceled.status.state, TaskState.TASK_STATE_CANCELED);
      const again = client.cancelTask({ id: running.id, tenant: '' } as any);
      if (label.startsWith('A2A 1.0')) await assert.rejects(again, TaskNotCancelableError);
      else await assert.rejects(again);
    });
  });
}

describe('A2A 1.0 on the agent runtime', () => {
  test('the card is public and lists the JSON-RPC interface for 1.0 and 0.3; 0.3 callers get 0.3 security shapes, the others 1.0\'s', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const legacy = await fetch(`${url}.well-known/agent-card.json`, { headers: { 'a2a-version': '0.3' } });
    assert.equal(legacy.status, 200);
    const v03: any = await legacy.json();
    assert.deepEqual(
      v03.supportedInterfaces.map((entry: any) => [entry.protocolBinding, entry.protocolVersion, entry.url]),
      [
        ['JSONRPC', '1.0', url],
        ['JSONRPC', '0.3', url],
      ],
    );
    assert.equal(v03.protocolVersion, '0.3.0');
    assert.deepEqual(v03.security, [{ mesh_jwt: [] }]);
    assert.equal(legacy.headers.get('vary'), 'A2A-Version');
    const v1: any = await (await fetch(`${url}.well-known/agent-card.json`, { headers: { 'a2a-version': '1.0' } })).json();
    assert.deepEqual(v1.securitySchemes, { mesh_jwt: { httpAuthSecurityScheme: { scheme: 'Bearer', bearerFormat: 'JWT' } } });
    assert.deepEqual(v1.securityRequirements, [{ schemes: { mesh_jwt: { list: [] } } }]);
    assert.ok(v1.methods.includes('SendMessage') && v1.methods.includes('tasks/send'));
  });

  test('GetTask of an unknown task is TaskNotFound (-32001, A2A numbering); tasks/get keeps the contract -32002', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const client = await officialA2aClient(url, await meshHeaders());
    await assert.rejects(client.getTask({ id: 'no-such-task', tenant: '' } as any), TaskNotFoundError);
    const mesh = await post(url, { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { task_id: 'no-such-task' } }, await authHeaders());
    assert.equal(mesh.body.error.code, -32002);
  });

  test('SubscribeToTask yields the current task, then its updates until it ends', async (t) => {
    let open!: () => void;
    const controls: EchoAgentControls = { gate: new Promise<void>((resolve) => (open = resolve)) };
    const { url } = await listenAgent(t, createEchoAgent(controls));
    const client = await officialA2aClient(url, await meshHeaders());
    const running: any = await client.sendMessage({ ...a2aUserMessage({ text: 'wait' }), configuration: { returnImmediately: true, acceptedOutputModes: [] } });
    const seen: string[] = [];
    let last: any;
    for await (const event of client.resubscribeTask({ id: running.id, tenant: '' } as any)) {
      const payload = (event as any).payload;
      seen.push(payload.$case);
      last = payload.value;
      if (seen.length === 1) open();
    }
    assert.equal(seen[0], 'task');
    assert.equal(last.status.state, TaskState.TASK_STATE_COMPLETED);
  });

  test('bad 1.0 params name the field: an undeclared file part (-32005), a non-object data part, a push config, a bad role', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const send = async (params: unknown) => (await post(url, { jsonrpc: '2.0', id: 1, method: 'SendMessage', params }, await authHeaders())).body.error;
    const message = (parts: unknown[], role = 'ROLE_USER') => ({ messageId: 'm-1', role, parts });
    // The echo agent declares text and JSON only: ContentTypeNotSupportedError (file-parts.test.ts has the rest).
    const file = await send({ message: message([{ url: 'https://example.org/x.pdf' }]) });
    assert.equal(file.code, -32005);
    assert.deepEqual(file.data.errors[0].pointer, '/message/parts/0');
    const scalar = await send({ message: message([{ data: 42 }]) });
    assert.equal(scalar.data.errors[0].pointer, '/message/parts/0/data');
    const push = await send({ message: message([{ text: 'x' }]), configuration: { taskPushNotificationConfig: { url: 'https://example.org/hook' } } });
    assert.equal(push.data.errors[0].pointer, '/configuration/taskPushNotificationConfig');
    const role = await send({ message: message([{ text: 'x' }], 'user') });
    assert.equal(role.code, -32602);
    assert.match(JSON.stringify(role.data), /role/);
  });
});
