/**
 * The TCK agent (`ward agent tck`): on the runtime as any agent, its only own rule is the TCK's
 * message-id one (a2a-tck docs/SUT_REQUIREMENTS.md): `test-resubscribe-message-id-*` keeps its turn
 * running for 2 × TCK_STREAMING_TIMEOUT and then completes; every other task answers and stays open.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { systemClock } from '../../../src/core/clock.ts';
import { DENY_ALL_CONSENT } from '../../../src/mesh/runtime/consent-requirement.ts';
import { createAgent, resubscribeHoldMs } from '../../../src/mesh/agents/tck/tck-agent.ts';
import { listenAgent, meshConfig, rpc, tempDir } from '../helpers.ts';
import { eventually } from '../../helpers/eventually.ts';

async function tckAgent(t: Parameters<typeof meshConfig>[0]) {
  const config = meshConfig(t);
  const agent = await createAgent({ alias: 'tck', config, dataDir: tempDir(t), did: 'did:web:localhost:agents:tck', clock: systemClock, consent: DENY_ALL_CONSENT });
  return listenAgent(t, agent, { config });
}

describe('TCK agent', () => {
  test('holds a resubscribe task for twice TCK_STREAMING_TIMEOUT (default 2 s), in milliseconds', () => {
    assert.equal(resubscribeHoldMs({}), 4000);
    assert.equal(resubscribeHoldMs({ TCK_STREAMING_TIMEOUT: '0.1' }), 200);
    assert.equal(resubscribeHoldMs({ TCK_STREAMING_TIMEOUT: 'soon' }), 4000);
  });

  test('a task answers and stays open (working) for the next message', async (t) => {
    const { url } = await tckAgent(t);
    const first = await rpc(url, 'SendMessage', { message: { messageId: 'test-message-id-1', role: 'ROLE_USER', parts: [{ text: 'Hello' }] } });
    assert.equal(first.result.task.status.state, 'TASK_STATE_WORKING');
    assert.equal(first.result.task.status.message.parts[0].text, 'Received: Hello');
    const second = await rpc(url, 'SendMessage', { message: { messageId: 'test-message-id-2', role: 'ROLE_USER', taskId: first.result.task.id, parts: [{ text: 'More' }] } });
    assert.equal(second.result.task.status.state, 'TASK_STATE_WORKING');
  });

  test('a test-resubscribe-message-id task keeps running until the hold is over, then completes', async (t) => {
    const previous = process.env.TCK_STREAMING_TIMEOUT;
    // A hold of 10 s: far longer than the next request takes even on a busy machine, so "still open"
    // is a fact, not a race; completion is awaited, however long the hold turns out to take.
    process.env.TCK_STREAMING_TIMEOUT = '5';
    t.after(() => (previous === undefined ? delete process.env.TCK_STREAMING_TIMEOUT : (process.env.TCK_STREAMING_TIMEOUT = previous)));
    const { url } = await tckAgent(t);
    const sent = await rpc(url, 'SendMessage', { message: { messageId: 'test-resubscribe-message-id-1', role: 'ROLE_USER', parts: [{ text: 'stream me' }] }, configuration: { returnImmediately: true } });
    const id = sent.result.task.id;
    // Held: still open once the send has answered (how long, 2 × the timeout, is resubscribeHoldMs's, tested above).
    assert.notEqual((await rpc(url, 'GetTask', { id })).result.status.state, 'TASK_STATE_COMPLETED');
    await eventually(async () => ((await rpc(url, 'GetTask', { id })).result.status.state === 'TASK_STATE_COMPLETED' ? true : undefined), 'the task to complete once the hold is over', 60_000, 100);
  });
});
