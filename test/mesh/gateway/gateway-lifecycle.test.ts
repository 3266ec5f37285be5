/**
 * The gateway's agent lifecycle with real child processes (`ward agent <alias>`): lazy start with
 * dependencies, one start under concurrent first calls, crash and restart, idle stop, start timeout.
 * No assertion is about time: waits poll the gateway's /health, with a timeout only as a safety net.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { authHeaders, eventually, post, rpc } from '../helpers.ts';
import { agentHealth, gatewayHealth, isAlive, startTestGateway } from './gateway-helpers.ts';

describe('gateway: agents as child processes', () => {
  test('nothing runs before the first call; a call starts the agent and its dependency first', async (t) => {
    const gateway = await startTestGateway(t, { base: { entry: 'probe' }, top: { entry: 'probe', dependencies: ['base'] } });
    const before = await gatewayHealth(gateway);
    assert.deepEqual(before.agents.map((agent: any) => [agent.alias, agent.state]), [['base', 'stopped'], ['top', 'stopped']]);

    const answer = await rpc(`${gateway.url}/rpc/top`, 'probe/info', {});
    assert.equal(answer.result.alias, 'top');
    assert.notEqual(answer.result.pid, process.pid, 'answered by a child process');
    const base = await agentHealth(gateway, 'base');
    const top = await agentHealth(gateway, 'top');
    assert.equal(base.state, 'running');
    assert.equal(top.state, 'running');
    assert.ok(base.running_since <= top.last_start_at, 'the dependency was running before the dependent started');
    assert.ok(isAlive(base.pid) && isAlive(top.pid));

    const viaDependency = await rpc(`${gateway.url}/rpc/top`, 'probe/call', { alias: 'base' });
    assert.equal(viaDependency.result.pid, base.pid, 'the dependent reaches its dependency through the gateway');
    assert.equal(viaDependency.result.caller, 'did:web:localhost:agents:top');
  });

  test('20 concurrent first calls start the agent (and its dependency) exactly once', async (t) => {
    const gateway = await startTestGateway(t, { base: { entry: 'probe' }, top: { entry: 'probe', dependencies: ['base'] } });
    const answers = await Promise.all(Array.from({ length: 20 }, () => rpc(`${gateway.url}/rpc/top`, 'probe/info', {})));
    const pids = new Set(answers.map((answer) => answer.result?.pid));
    assert.equal(pids.size, 1, JSON.stringify(answers.filter((answer) => answer.error)));
    assert.equal((await agentHealth(gateway, 'top')).starts, 1);
    assert.equal((await agentHealth(gateway, 'base')).starts, 1);
  });

  test('a crashed agent is restarted with back-off, and calls reach the new process', async (t) => {
    const gateway = await startTestGateway(t, { probe: { entry: 'probe' } });
    const first = (await rpc(`${gateway.url}/rpc/probe`, 'probe/info', {})).result.pid;
    await rpc(`${gateway.url}/rpc/probe`, 'probe/crash', {});
    const restarted = await eventually(async () => {
      const agent = await agentHealth(gateway, 'probe');
      return agent.state === 'running' && agent.pid !== first ? agent : undefined;
    }, 'the restart');
    assert.equal(restarted.restarts, 1);
    assert.equal(restarted.last_exit.code, 3);
    // Recovered: the failure is history (last_exit), not a current error.
    assert.equal(restarted.consecutive_failures, 0);
    assert.equal(restarted.last_error, null);
    assert.equal(isAlive(first), false);
    assert.equal((await rpc(`${gateway.url}/rpc/probe`, 'probe/info', {})).result.pid, restarted.pid);
    const markers = restarted.log_tail.filter((line: string) => line.startsWith('--- ward gateway: starting probe'));
    assert.equal(markers.length, 2, 'one log file across both processes, its tail in /health');
  });

  test('an idle agent is stopped, and the next call starts it again', async (t) => {
    const gateway = await startTestGateway(t, { probe: { entry: 'probe', idle_timeout_ms: 300 } });
    const first = (await rpc(`${gateway.url}/rpc/probe`, 'probe/info', {})).result.pid;
    await eventually(async () => ((await agentHealth(gateway, 'probe')).state === 'stopped' ? true : undefined), 'the idle stop');
    assert.equal(isAlive(first), false);
    const second = (await rpc(`${gateway.url}/rpc/probe`, 'probe/info', {})).result.pid;
    assert.notEqual(second, first);
    assert.equal((await agentHealth(gateway, 'probe')).starts, 2);
  });

  test('an idle dependency is not stopped while an agent that depends on it runs', async (t) => {
    let now = Date.now();
    const clock = { now: () => new Date(now) };
    const gateway = await startTestGateway(
      t,
      { base: { entry: 'probe', idle_timeout_ms: 1000 }, top: { entry: 'probe', dependencies: ['base'], idle_timeout_ms: 0 } },
      { clock, idleSweep: false },
    );
    await rpc(`${gateway.url}/rpc/top`, 'probe/info', {});
    now += 60_000; // both idle for a minute; top never idles out (0), base would
    assert.deepEqual(await gateway.app.meshFleet.sweepIdle(), []);
    assert.equal((await agentHealth(gateway, 'base')).state, 'running');
    await gateway.app.meshFleet.get('top').stop();
    assert.deepEqual(await gateway.app.meshFleet.sweepIdle(), ['base'], 'once nothing depends on it, it goes');
    assert.equal((await agentHealth(gateway, 'base')).state, 'stopped');
  });

  test('an agent that does not become healthy in time is killed and the call gets -32011', async (t) => {
    // A long back-off, so that the second call surely falls inside it however slow the machine is.
    const gateway = await startTestGateway(t, { slow: { entry: 'never-healthy', start_timeout_ms: 1500 } }, { env: { GATEWAY_RESTART_BACKOFF_MS: '60000', GATEWAY_RESTART_BACKOFF_MAX_MS: '60000' } });
    const answer = await rpc(`${gateway.url}/rpc/slow`, 'probe/info', {});
    assert.equal(answer.error.code, -32011);
    assert.match(answer.error.data.reason, /did not become healthy/);
    const agent = await agentHealth(gateway, 'slow');
    assert.equal(agent.state, 'failed');
    assert.equal(agent.pid, null);
    assert.ok(agent.last_pid > 0);
    assert.equal(isAlive(agent.last_pid), false, 'the child was killed');
    const again = await rpc(`${gateway.url}/rpc/slow`, 'probe/info', {});
    assert.equal(again.error.code, -32011, 'during the back-off the answer is immediate');
    assert.ok(again.error.data.retry_after_ms > 0);
  });

  test('a first call that waited for starts says so in Server-Timing; a warm call does not', async (t) => {
    const gateway = await startTestGateway(t, { base: { entry: 'probe' }, top: { entry: 'probe', dependencies: ['base'] } });
    const cold = await post(`${gateway.url}/rpc/top`, { jsonrpc: '2.0', id: 1, method: 'probe/info' }, await authHeaders());
    assert.equal(cold.body.result.alias, 'top');
    assert.match(cold.headers.get('server-timing') ?? '', /^agent-start;dur=\d+;desc="base top"$/);
    const warm = await post(`${gateway.url}/rpc/top`, { jsonrpc: '2.0', id: 2, method: 'probe/info' }, await authHeaders());
    assert.equal(warm.headers.get('server-timing'), null);
  });

  test('an agent that exits while starting gets -32011 and its log shows why', async (t) => {
    const gateway = await startTestGateway(t, { broken: { entry: 'fails-at-start' } });
    const answer = await rpc(`${gateway.url}/rpc/broken`, 'probe/info', {});
    assert.equal(answer.error.code, -32011);
    // The cause from the agent's own log, not only "exited during start".
    assert.match(answer.error.data.reason, /^exited during start \(code 1, signal null\): .*this agent cannot start/);
    const agent = await agentHealth(gateway, 'broken');
    assert.ok(agent.log_tail.some((line: string) => line.includes('this agent cannot start')));
    const card = await fetch(`${gateway.url}/rpc/broken/.well-known/agent-card.json`);
    assert.equal(card.status, 503, 'a card that cannot be had is not a 200');
    assert.equal(((await card.json()) as any).error.code, -32011);
  });

  test('a manifest port already in use: free ports by default; with GATEWAY_AGENT_PORTS=manifest, -32011 naming EADDRINUSE', async (t) => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    t.after(() => busy.close());
    const port = (busy.address() as AddressInfo).port;
    const free = await startTestGateway(t, { pinned: { entry: 'probe', port } });
    const answered = await rpc(`${free.url}/rpc/pinned`, 'probe/info', {});
    assert.equal(answered.result.alias, 'pinned');
    assert.notEqual((await agentHealth(free, 'pinned')).port, port);

    const pinned = await startTestGateway(t, { pinned: { entry: 'probe', port } }, { env: { GATEWAY_AGENT_PORTS: 'manifest' } });
    const refused = await rpc(`${pinned.url}/rpc/pinned`, 'probe/info', {});
    assert.equal(refused.error.code, -32011);
    assert.match(refused.error.data.reason, /EADDRINUSE|in use/);
  });

  test('a dependency that cannot start fails its dependent\'s call with -32011 naming it', async (t) => {
    const gateway = await startTestGateway(t, { broken: { entry: 'fails-at-start' }, top: { entry: 'probe', dependencies: ['broken'] } });
    const answer = await rpc(`${gateway.url}/rpc/top`, 'probe/info', {});
    assert.equal(answer.error.code, -32011);
    assert.equal(answer.error.data.alias, 'broken');
    assert.equal((await agentHealth(gateway, 'top')).state, 'stopped', 'the dependent was not started');
  });

  test('closing the gateway stops every agent it started', async (t) => {
    const gateway = await startTestGateway(t, { base: { entry: 'probe' }, top: { entry: 'probe', dependencies: ['base'] } });
    await rpc(`${gateway.url}/rpc/top`, 'probe/info', {});
    const pids = (await gatewayHealth(gateway)).agents.map((agent: any) => agent.pid);
    await gateway.close();
    for (const pid of pids) assert.equal(isAlive(pid), false);
  });
});
