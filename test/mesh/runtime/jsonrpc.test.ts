import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Type } from 'typebox';
import { dispatch, parsePayload, type RpcMethods } from '../../../src/mesh/runtime/jsonrpc.ts';
import { MeshRpcError } from '../../../src/mesh/runtime/mesh-errors.ts';

type Ctx = { user: string };

const methods: RpcMethods<Ctx> = new Map([
  ['echo', { params: Type.Object({ text: Type.String() }), handle: (params: { text: string }) => ({ text: params.text }) }],
  ['whoami', { handle: (_params: unknown, context: Ctx) => context.user }],
  ['boom', { handle: () => { throw new Error('secret internals'); } }],
  ['missing', { handle: () => { throw new MeshRpcError('TASK_NOT_FOUND'); } }],
  ['nothing', { handle: () => undefined }],
  [
    'count',
    {
      kind: 'stream' as const,
      open: async () =>
        (async function* () {
          yield { eventId: 1, result: 1 };
          yield { eventId: 2, result: 2 };
        })(),
    },
  ],
]);

async function run(text: string, onInternalError?: (error: unknown) => void) {
  return dispatch(parsePayload(text), methods, { user: 'alice' }, onInternalError ? { onInternalError } : {});
}

async function reply(text: string): Promise<any> {
  const outcome = await run(text);
  assert.equal(outcome.kind, 'reply');
  return outcome.kind === 'reply' ? outcome.body : undefined;
}

describe('JSON-RPC 2.0 dispatch', () => {
  test('a request is answered with its result and the same id', async () => {
    assert.deepEqual(await reply('{"jsonrpc":"2.0","id":"a1","method":"echo","params":{"text":"hi"}}'), {
      jsonrpc: '2.0',
      id: 'a1',
      result: { text: 'hi' },
    });
    assert.deepEqual(await reply('{"jsonrpc":"2.0","id":7,"method":"whoami"}'), { jsonrpc: '2.0', id: 7, result: 'alice' });
  });

  test('a handler returning nothing answers result null (a response always has result or error)', async () => {
    assert.deepEqual(await reply('{"jsonrpc":"2.0","id":1,"method":"nothing"}'), { jsonrpc: '2.0', id: 1, result: null });
  });

  test('invalid JSON is -32700 with id null', async () => {
    const body = await reply('{"jsonrpc":"2.0","method":"echo",');
    assert.equal(body.error.code, -32700);
    assert.equal(body.id, null);
  });

  for (const [name, payload, id] of [
    ['a non-object request', '42', null],
    ['a wrong jsonrpc version', '{"jsonrpc":"1.0","id":3,"method":"echo"}', 3],
    ['a missing method', '{"jsonrpc":"2.0","id":4}', 4],
    ['a non-string method', '{"jsonrpc":"2.0","id":5,"method":12}', 5],
    ['scalar params', '{"jsonrpc":"2.0","id":6,"method":"echo","params":"x"}', 6],
    ['null params', '{"jsonrpc":"2.0","id":6,"method":"echo","params":null}', 6],
    ['an object id', '{"jsonrpc":"2.0","id":{"a":1},"method":"echo"}', null],
    ['an empty batch', '[]', null],
  ] as const) {
    test(`${name} is -32600 Invalid Request`, async () => {
      const body = await reply(payload);
      assert.equal(body.error.code, -32600);
      assert.equal(body.id, id);
    });
  }

  test('an unknown method is -32601, naming the method', async () => {
    const body = await reply('{"jsonrpc":"2.0","id":1,"method":"nope"}');
    assert.equal(body.error.code, -32601);
    assert.deepEqual(body.error.data, { method: 'nope' });
  });

  test('params that do not match the schema are -32602 with JSON pointers', async () => {
    const body = await reply('{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":5}}');
    assert.equal(body.error.code, -32602);
    assert.ok(body.error.data.errors.some((error: { pointer: string }) => error.pointer === '/text'));
    const missing = await reply('{"jsonrpc":"2.0","id":2,"method":"echo"}');
    assert.equal(missing.error.code, -32602);
  });

  test('an unexpected failure is -32603 without its message, and is reported to the host', async () => {
    const reported: unknown[] = [];
    const outcome = await run('{"jsonrpc":"2.0","id":1,"method":"boom"}', (error) => reported.push(error));
    assert.equal(outcome.kind, 'reply');
    const body = outcome.kind === 'reply' ? (outcome.body as any) : undefined;
    assert.equal(body.error.code, -32603);
    assert.equal(body.error.message, 'Internal error');
    assert.doesNotMatch(JSON.stringify(body), /secret internals/);
    assert.equal(reported.length, 1);
  });

  test('a mesh error keeps its code', async () => {
    assert.equal((await reply('{"jsonrpc":"2.0","id":1,"method":"missing"}')).error.code, -32002);
  });

  test('a notification is run but not answered', async () => {
    assert.equal(await reply('{"jsonrpc":"2.0","method":"echo","params":{"text":"x"}}'), undefined);
  });

  test('a batch answers every request in order, skips notifications, and answers bad members in place', async () => {
    const body = await reply(
      JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'echo', params: { text: 'a' } },
        { jsonrpc: '2.0', method: 'echo', params: { text: 'note' } },
        1,
        { jsonrpc: '2.0', id: 2, method: 'nope' },
        { jsonrpc: '2.0', id: 3, method: 'whoami' },
      ]),
    );
    assert.deepEqual(
      body.map((entry: any) => [entry.id, entry.result ?? entry.error.code]),
      [[1, { text: 'a' }], [null, -32600], [2, -32601], [3, 'alice']],
    );
  });

  test('a batch of notifications only has no answer', async () => {
    assert.equal(await reply('[{"jsonrpc":"2.0","method":"whoami"},{"jsonrpc":"2.0","method":"whoami"}]'), undefined);
  });

  test('a single request to a streaming method yields its stream; inside a batch it is -32600', async () => {
    const outcome = await run('{"jsonrpc":"2.0","id":9,"method":"count"}');
    assert.equal(outcome.kind, 'stream');
    if (outcome.kind !== 'stream') return;
    assert.equal(outcome.id, 9);
    const items = [];
    for await (const item of outcome.items) items.push(item);
    assert.deepEqual(items, [{ eventId: 1, result: 1 }, { eventId: 2, result: 2 }]);
    const batch = await reply('[{"jsonrpc":"2.0","id":1,"method":"count"}]');
    assert.equal(batch[0].error.code, -32600);
  });
});
