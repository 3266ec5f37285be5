/**
 * `npm start` as a person runs it, as real processes: stopping it by npm's own PID (SIGTERM, as a
 * process manager or a terminal's kill does) stops everything it started — the registry, console and
 * gateway process and the mesh agents the gateway spawned — within seconds.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { loadMeshConfig } from '../../src/mesh/mesh-config.ts';
import { issueMeshToken } from '../../src/mesh/runtime/auth.ts';
import { groupAlive, groupExited } from '../helpers/ward-process.ts';

const root = new URL('../..', import.meta.url).pathname;
const CALLER = 'did:web:localhost:agents:signal-test';

describe('npm start and signals', () => {
  test('SIGTERM to npm stops the service and its agents', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'ward-npm-start-'));
    const env = { ...process.env, REGISTRY_DATA_DIR: dir, REGISTRY_PORT: '0', GATEWAY_PORT: '0', CONSOLE_PORT: '0', REGISTRY_HEALTH_PROBES: 'false', DATABASE_URL: '' };
    // Its own process group, so the test can see (and, if it fails, clean up) everything npm started.
    const npm = spawn('npm', ['start'], { cwd: root, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const pgid = npm.pid as number;
    t.after(() => {
      if (groupAlive(pgid)) process.kill(-pgid, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    });
    let output = '';
    const gatewayUrl = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`npm start did not come up:\n${output}`)), 60_000);
      npm.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = /Mesh gateway:\s+(http:\/\/\S+)/.exec(output);
        if (match && /Mesh agents registered/.test(output)) {
          clearTimeout(timer);
          resolve(match[1] as string);
        }
      });
      npm.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      npm.on('exit', (code) => reject(new Error(`npm start exited with ${code}:\n${output}`)));
    });

    // One agent started by the gateway as its own process.
    const token = await issueMeshToken({ secret: loadMeshConfig({}).MESH_JWT_SECRET, sub: CALLER });
    const call = await fetch(`${gatewayUrl}/rpc/consent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'x-agent-id': CALLER },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { task_id: 'none' } }),
    });
    assert.equal(call.status, 200);
    const health = (await (await fetch(`${gatewayUrl}/health`)).json()) as { agents: { alias: string; state: string; pid: number | null }[] };
    const agent = health.agents.find((entry) => entry.alias === 'consent');
    assert.equal(agent?.state, 'running');
    const agentPid = agent?.pid as number;

    const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
    process.kill(pgid, 'SIGTERM');
    await exited;
    await groupExited(pgid, 15_000);
    assert.equal(groupAlive(pgid), false, `processes of npm start still run after SIGTERM to npm:\n${output.slice(-2000)}`);
    assert.throws(() => process.kill(agentPid, 0), /ESRCH/, 'the agent process is gone');
  });
});
