/**
 * The gateway's `GET /tasks`: each forwarded exchange with its agent, method, task state and
 * duration — and nothing of the message — served to loopback and authenticated mesh callers only.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { authHeaders, rpc, textMessage } from '../helpers.ts';
import { startTestGateway } from './gateway-helpers.ts';

describe('gateway task log', () => {
  test('a task sent through the gateway is listed with its state and duration, and no content', async (t) => {
    const gateway = await startTestGateway(t, { probe: { entry: 'probe' } });
    const empty = await (await fetch(`${gateway.url}/tasks`)).json();
    assert.deepEqual(empty, { in_flight: [], recent: [], kept: 50 });

    const sent = await rpc(`${gateway.url}/rpc/probe`, 'message/send', { message: { ...textMessage('secret words'), messageId: 'm-1' }, configuration: { blocking: true } });
    assert.ok(sent.result, JSON.stringify(sent));
    await rpc(`${gateway.url}/rpc/probe`, 'probe/info', {});
    const answer = await fetch(`${gateway.url}/tasks`);
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('cache-control'), 'no-store');
    const text = await answer.text();
    assert.equal(sent.result.status.state, 'completed');
    assert.ok(!text.includes('secret words') && !text.includes(sent.result.id), 'no message content, no task id');
    const log = JSON.parse(text);
    assert.deepEqual(log.in_flight, []);
    assert.deepEqual(
      log.recent.map((entry: { alias: string; method: string; state: string; streamed: boolean }) => [entry.alias, entry.method, entry.state, entry.streamed]),
      [
        ['probe', 'probe/info', 'answered', false],
        ['probe', 'message/send', 'completed', false],
      ],
    );
    for (const entry of log.recent) {
      assert.ok(entry.duration_ms >= 0);
      assert.ok(Date.parse(entry.ended_at) >= Date.parse(entry.started_at));
    }
  });

  test('a caller that is not on loopback needs a mesh credential', async (t) => {
    const gateway = await startTestGateway(t, { probe: { entry: 'probe' } });
    const relayed = await fetch(`${gateway.url}/tasks`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
    assert.equal(relayed.status, 403);
    // A proxy on this machine that says only X-Real-IP (nginx's habit) or Via relayed it too.
    for (const headers of [{ 'x-real-ip': '203.0.113.9' }, { via: '1.1 proxy' }] as Array<Record<string, string>>) {
      assert.equal((await fetch(`${gateway.url}/tasks`, { headers })).status, 403, JSON.stringify(headers));
    }
    assert.equal((await fetch(`${gateway.url}/tasks`)).status, 200, 'straight from loopback');
    const authenticated = await fetch(`${gateway.url}/tasks`, { headers: { 'x-forwarded-for': '203.0.113.9', ...(await authHeaders()) } });
    assert.equal(authenticated.status, 200);
  });
});
