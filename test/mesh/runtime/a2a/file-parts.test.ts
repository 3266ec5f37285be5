/**
 * File parts on the agent runtime (docs/mesh.md "File parts", decision 85): an agent that declares a
 * media type among its input modes takes `raw` / `url` parts of it (1.0) and `file` parts (the
 * contract's and v0.3's methods), records them in the task's history and hands them to its executor;
 * an agent that does not declare it refuses them before any task exists, with 1.0's
 * ContentTypeNotSupportedError (-32005) for 1.0 methods and -32602 for the contract's methods; a raw
 * part over MESH_FILE_PART_MAX_BYTES is refused with a clear reason. Over HTTP, as clients call.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createAgent as createTckAgent } from '../../../../src/mesh/agents/tck/tck-agent.ts';
import type { MeshAgent } from '../../../../src/mesh/runtime/mesh-agent.ts';
import { MESH_FILE_PART_MAX_BYTES, takesMediaType } from '../../../../src/mesh/runtime/tasks/file-parts.ts';
import type { MeshMessage } from '../../../../src/mesh/runtime/tasks/task-types.ts';
import { createEchoAgent } from '../../fixtures/echo-agent.ts';
import { authHeaders, listenAgent, meshConfig, rpc, sseReader } from '../../helpers.ts';

const BINARY = Buffer.from('This is test binary data').toString('base64');
let nextId = 1;

/** The TCK's own multi-modal message (test_binary_data_handling). */
const binaryMessage = (raw = BINARY, mediaType = 'application/octet-stream') => ({
  message: {
    messageId: `file-${nextId++}`,
    role: 'ROLE_USER',
    parts: [{ text: 'Processing binary data' }, { raw, mediaType, filename: 'blob.bin' }],
  },
});

/** An agent that takes PDFs and keeps what its executor was handed. */
function pdfAgent(seen: MeshMessage[]): MeshAgent {
  return {
    info: { alias: 'pdf', name: 'PDF', description: 'Reads PDFs.', version: '1.0.0', skills: [], inputModes: ['text/plain', 'application/pdf'] },
    executeTask: async ({ message }) => {
      seen.push(message);
      return { state: 'completed', message: 'read' };
    },
  };
}

async function tckAgent(t: Parameters<typeof listenAgent>[0]) {
  const config = meshConfig(t);
  return listenAgent(t, await createTckAgent({ alias: 'tck', config } as never), { config });
}

describe('file parts: an agent that declares the media type', () => {
  test('the TCK agent declares octet-stream, takes the TCK\'s raw part, records it and answers it (1.0)', async (t) => {
    const { url } = await tckAgent(t);
    const card = (await (await fetch(new URL('.well-known/agent-card.json', url))).json()) as { defaultInputModes: string[] };
    assert.ok(card.defaultInputModes.includes('application/octet-stream'), JSON.stringify(card.defaultInputModes));
    const answer = await rpc(url, 'SendMessage', binaryMessage());
    assert.ok(answer.result?.task, JSON.stringify(answer));
    const task = answer.result.task;
    assert.deepEqual(task.history[0].parts[1], { raw: BINARY, mediaType: 'application/octet-stream', filename: 'blob.bin' }, 'recorded as sent');
    assert.match(task.status.message.parts[0].text, /Processing binary data \[file blob\.bin, application\/octet-stream, 24 bytes\]/);
    const again = (await rpc(url, 'GetTask', { id: task.id })).result;
    assert.deepEqual(again.history[0].parts[1].raw, BINARY, 'the store keeps the bytes');
  });

  test('a declared type reaches the executor as a file part, by raw (1.0), url (1.0) and file (contract), and the v0.3 view reads it back', async (t) => {
    const seen: MeshMessage[] = [];
    const { url } = await listenAgent(t, pdfAgent(seen));
    const pdf = Buffer.from('%PDF-1.7 not really').toString('base64');
    const raw = await rpc(url, 'SendMessage', binaryMessage(pdf, 'application/pdf'));
    assert.ok(raw.result?.task, JSON.stringify(raw));
    const link = await rpc(url, 'SendMessage', { message: { messageId: `u-${nextId++}`, role: 'ROLE_USER', parts: [{ url: 'https://files.example/r.pdf', mediaType: 'application/pdf' }] } });
    assert.deepEqual(link.result.task.history[0].parts, [{ url: 'https://files.example/r.pdf', mediaType: 'application/pdf' }]);
    const contract = await rpc(url, 'tasks/send', { message: { kind: 'message', role: 'user', parts: [{ kind: 'file', file: { bytes: pdf, mimeType: 'application/pdf', name: 'r.pdf' } }] } });
    assert.equal(contract.result.status, 'submitted', JSON.stringify(contract));
    const view = (await rpc(url, 'tasks/get', { task_id: contract.result.task_id })).result;
    assert.deepEqual(view.history[0].parts[0], { kind: 'file', file: { bytes: pdf, mimeType: 'application/pdf', name: 'r.pdf' } });
    assert.deepEqual(seen[0]!.parts[1], { kind: 'file', file: { bytes: pdf, mimeType: 'application/pdf', name: 'blob.bin' } });
    assert.equal(seen.length, 3);
  });
});

describe('file parts: refusals', () => {
  test('an undeclared type is ContentTypeNotSupportedError (-32005) for 1.0 methods, -32602 for the contract\'s, and no task is made', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const card = (await (await fetch(new URL('.well-known/agent-card.json', url))).json()) as { defaultInputModes: string[] };
    assert.deepEqual(card.defaultInputModes, ['text/plain', 'application/json'], 'an agent that declares nothing takes text and JSON');
    const answer = await rpc(url, 'SendMessage', binaryMessage());
    assert.equal(answer.error?.code, -32005, JSON.stringify(answer));
    assert.equal(answer.error.data.mediaType, 'application/octet-stream');
    assert.equal(answer.error.data.errors[0].pointer, '/message/parts/1');
    const response = await fetch(url, {
      method: 'POST',
      headers: { ...(await authHeaders()), accept: 'text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'SendStreamingMessage', params: binaryMessage() }),
    });
    const event = await sseReader(response).next();
    assert.equal(event?.data.error.code, -32005, 'a stream answers it inside the event stream');
    const untyped = await rpc(url, 'SendMessage', { message: { messageId: `n-${nextId++}`, role: 'ROLE_USER', parts: [{ url: 'https://files.example/x' }] } });
    assert.equal(untyped.error?.code, -32005, 'a file part without a media type is octet-stream');
    const contractPart = { kind: 'file', file: { bytes: BINARY, mimeType: 'application/octet-stream' } };
    for (const method of ['tasks/send', 'message/send']) {
      const answer = await rpc(url, method, { message: { kind: 'message', role: 'user', parts: [contractPart] } });
      assert.equal(answer.error?.code, -32602, `${method}: ${JSON.stringify(answer)}`);
      assert.equal(answer.error.data.reason, 'content_type_not_supported');
    }
    assert.equal((await rpc(url, 'ListTasks', {})).result.totalSize, 0, 'nothing was made');
  });

  test('a raw part over the bound is refused with its size and the limit, on 1.0 and contract methods alike; malformed ones too', async (t) => {
    const { url } = await tckAgent(t);
    const big = Buffer.alloc(MESH_FILE_PART_MAX_BYTES + 1, 7).toString('base64');
    const answer = await rpc(url, 'SendMessage', binaryMessage(big));
    assert.equal(answer.error?.code, -32602, JSON.stringify(answer).slice(0, 300));
    assert.equal(answer.error.data.reason, 'file_part_too_large');
    assert.equal(answer.error.data.limit, MESH_FILE_PART_MAX_BYTES);
    assert.match(answer.error.data.errors[0].reason, new RegExp(`at most ${MESH_FILE_PART_MAX_BYTES} bytes; this one has ${MESH_FILE_PART_MAX_BYTES + 1}`));
    const contract = await rpc(url, 'tasks/send', { message: { kind: 'message', role: 'user', parts: [{ kind: 'file', file: { bytes: big } }] } });
    assert.equal(contract.error?.data?.reason, 'file_part_too_large');
    const atLimit = await rpc(url, 'SendMessage', binaryMessage(Buffer.alloc(MESH_FILE_PART_MAX_BYTES, 7).toString('base64')));
    assert.ok(atLimit.result?.task, 'exactly the limit is taken');
    const notBase64 = await rpc(url, 'SendMessage', binaryMessage('not base64!'));
    assert.equal(notBase64.error?.code, -32602);
    const both = await rpc(url, 'SendMessage', { message: { messageId: `b-${nextId++}`, role: 'ROLE_USER', parts: [{ raw: BINARY, url: 'https://x.example/' }] } });
    assert.equal(both.error?.code, -32602);
  });

  test('media types match case-insensitively, without parameters, and by type/* wildcards', () => {
    assert.equal(takesMediaType(['image/*'], 'IMAGE/PNG'), true);
    assert.equal(takesMediaType(['application/pdf'], 'application/pdf; version=1.7'), true);
    assert.equal(takesMediaType(['image/*'], 'imagex/png'), false);
    assert.equal(takesMediaType(['text/plain', 'application/json'], 'application/octet-stream'), false);
    assert.equal(takesMediaType(['*/*'], 'application/x-anything'), true);
  });
});
