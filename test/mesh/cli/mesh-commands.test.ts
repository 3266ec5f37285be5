/** `ward agent` and `ward gateway` as real commands (contract §1). */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { authHeaders, eventually, post, tempDir } from '../helpers.ts';
import { isAlive } from '../gateway/gateway-helpers.ts';

const WARD = join(fileURLToPath(new URL('../../../', import.meta.url)), 'src', 'cli', 'ward.ts');

function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^(REGISTRY_|DATABASE_|MESH_|GATEWAY_|AGENT_|DID_)/.test(key)) env[key] = value;
  }
  return env;
}

/** Starts `ward …`; output is collected; the process is killed when the test ends. */
function ward(t: TestContext, args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [WARD, ...args], { env: { ...cleanEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output.stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output.stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return { child, output, exited };
}

describe('mesh commands', () => {
  test('ward agent <alias> serves one agent on AGENT_PORT and logs its address', async (t) => {
    const run = ward(t, ['agent', 'triage'], { MESH_DATA_DIR: tempDir(t), AGENT_PORT: '0' });
    const url = await eventually(() => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(run.output.stdout)?.[1], 'the agent listening line');
    const health: any = await (await fetch(`${url}/health`)).json();
    assert.equal(health.alias, 'triage');
    assert.equal(health.name, 'Ward Triage Assistant');
    run.child.kill('SIGTERM');
    assert.equal(await run.exited, 0, 'a signal stops it cleanly');
  });

  test('ward agent tck runs the agent the A2A TCK checks, from its own manifest, and answers ListTasks', async (t) => {
    const run = ward(t, ['agent', 'tck'], { MESH_DATA_DIR: tempDir(t), AGENT_PORT: '0' });
    const url = await eventually(() => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(run.output.stdout)?.[1], 'the agent listening line');
    const card: any = await (await fetch(`${url}/.well-known/agent-card.json`)).json();
    assert.equal(card.name, 'Ward TCK agent');
    const answer = await post(url, { jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} }, await authHeaders());
    assert.deepEqual(answer.body.result, { tasks: [], nextPageToken: '', pageSize: 0, totalSize: 0 });
    run.child.kill('SIGTERM');
    assert.equal(await run.exited, 0);
  });

  test('ward agent without an alias exits 2; with an unknown alias exits 1 naming it', async (t) => {
    assert.equal(await ward(t, ['agent'], {}).exited, 2);
    const unknown = ward(t, ['agent', 'nobody'], { MESH_DATA_DIR: tempDir(t) });
    assert.equal(await unknown.exited, 1);
    assert.match(unknown.output.stderr, /unknown agent "nobody"/);
  });

  test('ward gateway listens on GATEWAY_PORT and answers /health', async (t) => {
    const run = ward(t, ['gateway'], { MESH_DATA_DIR: tempDir(t), GATEWAY_PORT: '0', MESH_LOG_LEVEL: 'warn' });
    const url = await eventually(() => /Ward mesh gateway: (http:\/\/\S+)/.exec(run.output.stdout)?.[1], 'the gateway URL');
    const health: any = await (await fetch(`${url}/health`)).json();
    assert.deepEqual(health.agents.map((agent: { alias: string }) => agent.alias), ['clinician_avatar', 'consent', 'triage']);
  });

  test('agents started by ward gateway exit when the gateway dies abruptly (no orphans)', async (t) => {
    const run = ward(t, ['gateway'], { MESH_DATA_DIR: tempDir(t), GATEWAY_PORT: '0', MESH_LOG_LEVEL: 'warn' });
    const url = await eventually(() => /Ward mesh gateway: (http:\/\/\S+)/.exec(run.output.stdout)?.[1], 'the gateway URL');
    const answer = await post(`${url}/rpc/triage`, { jsonrpc: '2.0', id: 1, method: 'triage/assess', params: { chief_complaint: 'cough' } }, await authHeaders());
    assert.equal(answer.body.result.urgency, 'low');
    const health: any = await (await fetch(`${url}/health`)).json();
    // Only triage and its dependency were started; the avatar has no process yet.
    const pids: number[] = health.agents.filter((agent: { pid?: number | null }) => typeof agent.pid === 'number').map((agent: { pid: number }) => agent.pid);
    assert.equal(pids.length, 2);
    run.child.kill('SIGKILL');
    await run.exited;
    await eventually(() => (pids.every((pid) => !isAlive(pid)) ? true : undefined), 'the agents to exit');
  });

  for (const [name, env] of [
    ['the default secret', {}],
    ['a secret under 32 bytes', { MESH_JWT_SECRET: 'short-secret' }],
  ] as const) {
    for (const command of [['gateway'], ['agent', 'consent']]) {
      test(`production refuses ${name} for ward ${command.join(' ')}, naming MESH_JWT_SECRET`, async (t) => {
        const run = ward(t, command, { REGISTRY_ENV: 'production', MESH_DATA_DIR: tempDir(t), GATEWAY_PORT: '0', AGENT_PORT: '0', ...env });
        assert.equal(await run.exited, 1);
        assert.match(run.output.stderr, /configuration error: MESH_JWT_SECRET/);
      });
    }
  }
});
