/**
 * The gateway's probes and metrics (docs/operations.md): /livez, /readyz, and /metrics for a scraper on
 * this machine, counting requests by route template and the agents' state changes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { rpc } from '../helpers.ts';
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
});
