/**
 * The gateway's probes and metrics (docs/operations.md): /livez, /readyz, and /metrics for a scraper on
 * this machine, counting requests by route template and the agents' state changes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CALLER, post, rpc, token } from '../helpers.ts';
import { startTestGateway } from './gateway-helpers.ts';

describe('gateway: probes and metrics', () => {
  test('livez, readyz, and metrics that follow calls and agent starts', async (t) => {
    const gateway = await startTestGateway(t, { base: { entry: 'probe' } });
    assert.deepEqual(await (await fetch(`${gateway.url}/livez`)).json(), { status: 'ok' });
    assert.deepEqual(await (await fetch(`${gateway.url}/readyz`)).json(), { status: 'ready' });
    assert.equal((await rpc(`${gateway.url}/rpc/base`, 'probe/info', {})).result.alias, 'base');
    const metrics = await fetch(`${gateway.url}/metrics`);
    assert.equal(metrics.status, 200);
    const text = await metrics.text();
    assert.match(text, /ward_http_requests_total\{method="POST",route="\/rpc\/:alias",status="200",server="gateway"\} 1/);
    assert.match(text, /ward_gateway_agent_state_changes_total\{alias="base",state="running",server="gateway"\} 1/);
    assert.match(text, /process_cpu_seconds_total\{server="gateway"\}/);
  });

  test('public /health: states for probes; in production no pids, ports, log paths or errors without credentials', async (t) => {
    const secret = 'a-production-mesh-secret-of-32-bytes-or-more';
    const gateway = await startTestGateway(t, { base: { entry: 'probe' } }, { env: { REGISTRY_ENV: 'production', MESH_JWT_SECRET: secret } });
    const headers = { authorization: `Bearer ${await token(CALLER, { secret })}`, 'x-agent-id': CALLER, 'content-type': 'application/json' };
    assert.equal((await post(`${gateway.url}/rpc/base`, { jsonrpc: '2.0', id: 1, method: 'probe/info' }, headers)).body.result.alias, 'base');
    const anonymous: any = await (await fetch(`${gateway.url}/health`)).json();
    const [agent] = anonymous.agents;
    assert.equal(agent.state, 'running');
    for (const hidden of ['pid', 'last_pid', 'port', 'log_file', 'last_error', 'log_tail']) assert.equal(hidden in agent, false, hidden);
    const operator: any = await (await fetch(`${gateway.url}/health`, { headers })).json();
    assert.ok(operator.agents[0].pid > 0 && operator.agents[0].port > 0 && typeof operator.agents[0].log_file === 'string');

    const development = await startTestGateway(t, { base: { entry: 'probe' } });
    const open: any = await (await fetch(`${development.url}/health`)).json();
    assert.equal('log_file' in open.agents[0], true, 'development shows the process, for local work');
    assert.equal('log_tail' in open.agents[0], false);
  });
});
