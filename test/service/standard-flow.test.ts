import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { loadConfig } from '../../src/core/config.ts';
import { loadMeshConfig } from '../../src/mesh/mesh-config.ts';
import { issueMeshToken } from '../../src/mesh/runtime/auth.ts';
import { startService } from '../../src/service/start-service.ts';
import { TaskState } from '@a2a-js/sdk';
import { a2aUserMessage, officialA2aClient } from '../mesh/runtime/a2a/official-client.ts';
import { eventually } from '../helpers/eventually.ts';

const CALLER = 'did:web:localhost:agents:flow-test';

/** `ward start` on a fresh data directory and free ports, stopped and removed when the test ends. */
async function startFlowService(t: TestContext) {
  const dir = mkdtempSync(join(tmpdir(), 'ward-flow-'));
  const env = { REGISTRY_DATA_DIR: dir, REGISTRY_PORT: '0', GATEWAY_PORT: '0', CONSOLE_PORT: '0', REGISTRY_LOG_LEVEL: 'warn', REGISTRY_HEALTH_PROBES: 'false' };
  const service = await startService(loadConfig(env), loadMeshConfig(env), env);
  t.after(async () => {
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { service, env };
}

describe('ward start: the standard flow', () => {
  test('discover by capability, route, tasks/send through the gateway, tasks/get until completed', async (t) => {
    const { service, env } = await startFlowService(t);
    const registryUrl = service.registry.ward.baseUrl();

    const discovered = (await (await fetch(`${registryUrl}/v1/discover?capability=triage.assess&protocol=mesh-a2a-jsonrpc`)).json()) as any;
    assert.equal(discovered.result_count, 1);
    const [triage] = discovered.results;
    assert.equal(triage.display_name.toLowerCase().includes('triage'), true);

    const advice = (await (
      await fetch(`${registryUrl}/v1/route`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ capability: 'triage.assess' }) })
    ).json()) as any;
    assert.equal(advice.resolved_target, triage.agent_id);
    assert.equal(advice.selected.url, `${service.gateway.url}/rpc/triage/`);

    const token = await issueMeshToken({ secret: loadMeshConfig(env).MESH_JWT_SECRET, sub: CALLER });
    const call = async (method: string, params: Record<string, unknown>) => {
      const response = await fetch(advice.selected.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'x-agent-id': CALLER },
        body: JSON.stringify({ jsonrpc: '2.0', id: method, method, params }),
      });
      assert.equal(response.status, 200);
      return (await response.json()) as { result: any; error?: unknown };
    };
    const sent = await call('tasks/send', {
      sender: CALLER,
      recipient: 'did:web:localhost:agents:triage',
      message: { kind: 'message', role: 'user', parts: [{ kind: 'text', text: JSON.stringify({ chief_complaint: 'chest pain', vital_signs: { heart_rate: 118, systolic_bp: 95 } }) }] },
    });
    assert.equal(sent.result.status, 'submitted');
    const task = await eventually(async () => {
      const now = (await call('tasks/get', { task_id: sent.result.task_id })).result;
      return ['completed', 'failed', 'canceled'].includes(now.status.state) ? now : undefined;
    }, 'the task to end');
    assert.equal(task.status.state, 'completed');
    assert.match(JSON.stringify(task.status.message), /Urgency: (high|emergency)/);
  });

  test('the official A2A client, with its defaults and only an auth hook, works from the URL routing advice gives', async (t) => {
    const { service, env } = await startFlowService(t);
    const advice = (await (
      await fetch(`${service.registry.ward.baseUrl()}/v1/route`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ capability: 'triage.assess' }) })
    ).json()) as any;
    const token = await issueMeshToken({ secret: loadMeshConfig(env).MESH_JWT_SECRET, sub: CALLER });
    const client = await officialA2aClient(advice.selected.url, { authorization: `Bearer ${token}`, 'x-agent-id': CALLER });

    const vitals = { chief_complaint: 'chest pain', vital_signs: { heart_rate: 118, systolic_bp: 95, respiratory_rate: 22, oxygen_saturation: 94 } };
    const done: any = await client.sendMessage(a2aUserMessage({ data: vitals }));
    assert.equal(done.status.state, TaskState.TASK_STATE_COMPLETED);
    assert.match(JSON.stringify(done.status.message), /Urgency: (critical|high|emergency)/);
    const read: any = await client.getTask({ id: done.id, tenant: '' });
    assert.equal(read.id, done.id);
    assert.equal(read.artifacts.length > 0, true);

    const events: string[] = [];
    for await (const event of client.sendMessageStream(a2aUserMessage({ data: vitals }))) events.push((event as any).payload.$case);
    assert.equal(events[0], 'task');
    assert.ok(events.includes('statusUpdate'));

    const waiting: any = await client.sendMessage(a2aUserMessage({ text: '' }));
    assert.equal(waiting.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    const canceled: any = await client.cancelTask({ id: waiting.id, tenant: '', metadata: undefined });
    assert.equal(canceled.status.state, TaskState.TASK_STATE_CANCELED);
  });

  test('starting again on the same data keeps one registration per agent and follows a new gateway port', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'ward-flow-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const env = { REGISTRY_DATA_DIR: dir, REGISTRY_PORT: '0', GATEWAY_PORT: '0', CONSOLE_PORT: '0', REGISTRY_LOG_LEVEL: 'warn', REGISTRY_HEALTH_PROBES: 'false' };
    const first = await startService(loadConfig(env), loadMeshConfig(env), env);
    const firstIds = first.agentIds;
    const firstGateway = first.gateway.url;
    await first.close();
    const second = await startService(loadConfig(env), loadMeshConfig(env), env);
    t.after(() => second.close());
    assert.deepEqual(second.agentIds, firstIds);
    const agents = ((await (await fetch(`${second.registry.ward.baseUrl()}/v1/agents?limit=100`)).json()) as any).agents;
    assert.equal(agents.length, firstIds.length);
    if (second.gateway.url !== firstGateway) {
      assert.ok(agents.every((a: { endpoints: Array<{ url: string }> }) => a.endpoints[0]?.url.startsWith(second.gateway.url)));
    }
  });
});
