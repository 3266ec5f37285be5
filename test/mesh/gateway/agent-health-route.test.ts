/**
 * The gateway's per-agent health (`GET /rpc/{alias}/health`, what the registry probes) and its card
 * memory: health is answered from what the gateway knows, never by starting an agent; a card read
 * starts an agent only when it never served a card, and never puts off its idle stop. Real child
 * processes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentHealth, startTestGateway } from './gateway-helpers.ts';
import { eventually } from '../../helpers/eventually.ts';

async function getJson(url: string): Promise<{ status: number; body: any }> {
  const response = await fetch(url);
  return { status: response.status, body: await response.json() };
}

describe('gateway per-agent health', () => {
  test('a stopped agent is healthy (it starts on first use) and the health read does not start it', async (t) => {
    const gateway = await startTestGateway(t, { probe: { entry: 'probe' } });
    const health = await getJson(`${gateway.url}/rpc/probe/health`);
    assert.equal(health.status, 200);
    assert.equal(health.body.status, 'ok');
    assert.equal(health.body.alias, 'probe');
    assert.equal(health.body.state, 'stopped');
    assert.equal(health.body.log_tail, undefined, 'no log to an unauthenticated caller');
    const agent = await agentHealth(gateway, 'probe');
    assert.equal(agent.state, 'stopped');
    assert.equal(agent.starts, 0);
  });

  test('an agent that cannot start answers 503 with its state and error', async (t) => {
    const gateway = await startTestGateway(t, { broken: { entry: 'fails-at-start' } });
    const card = await fetch(`${gateway.url}/rpc/broken/.well-known/agent-card.json`);
    assert.equal(card.status, 503);
    const health = await getJson(`${gateway.url}/rpc/broken/health`);
    assert.equal(health.status, 503);
    assert.equal(health.body.status, 'unavailable');
    assert.equal(health.body.state, 'failed');
    assert.match(String(health.body.last_error), /exited during start|could not|healthy/);
  });

  test('an unknown alias is 404 in the JSON-RPC envelope', async (t) => {
    const gateway = await startTestGateway(t, { probe: { entry: 'probe' } });
    const health = await getJson(`${gateway.url}/rpc/nobody/health`);
    assert.equal(health.status, 404);
    assert.equal(health.body.jsonrpc, '2.0');
    assert.equal(health.body.id, null);
    assert.equal(health.body.error.data.alias, 'nobody');
  });
});

describe('gateway card memory', () => {
  test('the first card read starts the agent; later reads neither restart it nor keep it running', async (t) => {
    const gateway = await startTestGateway(t, { probe: { entry: 'probe' } }, { idleSweep: false });
    const first = await getJson(`${gateway.url}/rpc/probe/.well-known/agent-card.json`);
    assert.equal(first.status, 200);
    assert.equal(first.body.name, 'Probe probe');
    const started = await agentHealth(gateway, 'probe');
    assert.equal(started.state, 'running');
    assert.equal(started.starts, 1);

    // A read of a running agent's card asks the agent and is not use: last_used_at stays. The clock is
    // past the last use first, so a read counted as use would stamp another value.
    await eventually(() => (Date.now() > Date.parse(started.last_used_at) ? true : undefined), 'the clock to pass the last use');
    const again = await getJson(`${gateway.url}/rpc/probe/.well-known/agent-card.json`);
    assert.deepEqual(again.body, first.body);
    assert.equal((await agentHealth(gateway, 'probe')).last_used_at, started.last_used_at);

    // Stopped: the card comes from memory and the agent stays stopped.
    await gateway.app.meshFleet.get('probe').stop();
    const remembered = await getJson(`${gateway.url}/rpc/probe/.well-known/agent-card.json`);
    assert.equal(remembered.status, 200);
    assert.deepEqual(remembered.body, first.body);
    const after = await agentHealth(gateway, 'probe');
    assert.equal(after.state, 'stopped');
    assert.equal(after.starts, 1);

    // The 0.3 shape is remembered apart: never served, so this read starts the agent again.
    const v03 = await fetch(`${gateway.url}/rpc/probe/.well-known/agent-card.json`, { headers: { 'a2a-version': '0.3' } });
    assert.equal(v03.status, 200);
    assert.equal(((await v03.json()) as { protocolVersion?: string }).protocolVersion, '0.3.0');
    assert.equal((await agentHealth(gateway, 'probe')).starts, 2);
  });
});
