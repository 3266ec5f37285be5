/**
 * `ward cluster up` as an operator runs it (issue 35 item 2): a real `ward cluster up` process with
 * `--base-port`, the operator's settings passed to every instance (here: JWT authentication), an
 * instance SIGKILLed and restarted by the supervisor on its port, and `ward cluster status` reading it
 * all back. PostgreSQL, Redis and HAProxy are real, as in cluster.test.ts.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import pg from 'pg';
import { eventually } from '../helpers/eventually.ts';
import { cleanEnv, REPO_ROOT, runWard, WARD_CLI } from '../helpers/ward-process.ts';

const DATABASE_URL = process.env.TEST_DATABASE_URL;
const HAPROXY = ['/usr/sbin/haproxy', '/usr/bin/haproxy'].find((path) => existsSync(path));
const skip = !DATABASE_URL ? 'needs TEST_DATABASE_URL' : !HAPROXY ? 'needs haproxy (apt-get install haproxy; .ci/run installs it)' : false;

/** A port P with P to P+count all free a moment ago. */
async function freeRange(count: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const base = 20_000 + Math.floor(Math.random() * 30_000);
    const taken = await Promise.all(Array.from({ length: count + 1 }, (_, i) => isTaken(base + i)));
    if (!taken.some(Boolean)) return base;
  }
  throw new Error('no free range of ports');
}

function isTaken(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(true));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(false)));
  });
}

describe('ward cluster up, supervised, and ward cluster status', { skip }, () => {
  test('--base-port places the balancer and instances; the operator settings reach every instance; a killed instance comes back; status tells it all', async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ward-cluster-cli-'));
    const schema = `ward_cluster_cli_${Date.now().toString(36)}`;
    const base = await freeRange(2);
    const env = {
      ...cleanEnv(),
      DATABASE_URL: DATABASE_URL as string,
      DATABASE_SCHEMA: schema,
      REGISTRY_AUTH_MODE: 'jwt',
      REGISTRY_JWT_JWKS_URI: 'http://127.0.0.1:9/jwks.json',
      REGISTRY_JWT_ISSUER: 'https://issuer.example',
      REGISTRY_JWT_AUDIENCE: 'ward',
      REGISTRY_HEALTH_PROBES: 'false',
      PATH: `${join(HAPROXY as string, '..')}:${process.env.PATH ?? ''}`,
    };
    const up: ChildProcess = spawn(process.execPath, [WARD_CLI, 'cluster', 'up', '--instances', '2', '--base-port', String(base), '--data-dir', dataDir], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    up.stdout?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    up.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    t.after(async () => {
      if (up.exitCode === null && up.signalCode === null) {
        const exited = new Promise((resolve) => up.once('exit', resolve));
        up.kill('SIGTERM');
        await exited;
      }
      rmSync(dataDir, { recursive: true, force: true });
      const client = new pg.Client({ connectionString: DATABASE_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    });

    await eventually(() => (output.includes('Ward cluster: ') ? true : up.exitCode !== null ? assert.fail(output) : undefined), 'the cluster to start', 90_000, 100);
    const balancer = `http://127.0.0.1:${base}`;
    assert.match(output, new RegExp(`Ward cluster: ${balancer} `));
    assert.match(output, new RegExp(`instance 1: http://127.0.0.1:${base + 1}`));
    assert.match(output, new RegExp(`instance 2: http://127.0.0.1:${base + 2}`));

    // The operator's authentication mode reached each instance: no credential, no agents.
    for (const url of [balancer, `http://127.0.0.1:${base + 1}`, `http://127.0.0.1:${base + 2}`]) {
      assert.equal((await fetch(`${url}/v1/agents`)).status, 401, url);
      assert.equal((await fetch(`${url}/readyz`)).status, 200, url);
    }

    const before = await runWard(t, ['cluster', 'status', '--data-dir', dataDir, '--json']);
    assert.equal(before.code, 0, before.stderr);
    const known = JSON.parse(before.stdout);
    assert.deepEqual(known.instances.map((instance: any) => [instance.port, instance.state, instance.ready, instance.restarts]), [
      [base + 1, 'running', true, 0],
      [base + 2, 'running', true, 0],
    ]);

    // SIGKILL instance 1: the supervisor logs why, restarts it on its port, and status counts it.
    process.kill(known.instances[0].pid, 'SIGKILL');
    await eventually(async () => {
      const now = await runWard(t, ['cluster', 'status', '--data-dir', dataDir, '--json']);
      const first = JSON.parse(now.stdout || '{"instances":[]}').instances[0];
      return now.code === 0 && first?.restarts === 1 && first.state === 'running' && first.ready ? first : undefined;
    }, 'instance 1 to be restarted and ready', 60_000, 250);
    assert.match(output, /instance 1 was killed by SIGKILL after \d+ s/);
    assert.match(output, /instance 1: back on http:\/\/127\.0\.0\.1:\d+ \(restart 1\)/);
    assert.equal((await fetch(`http://127.0.0.1:${base + 1}/readyz`)).status, 200);

    const table = await runWard(t, ['cluster', 'status', '--data-dir', dataDir]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^instance\s+port\s+state\s+ready\s+uptime\s+restarts\s+last exit$/m);
    assert.match(table.stdout, new RegExp(`^1\\s+${base + 1}\\s+running\\s+yes\\s+\\S+\\s+1\\s+SIGKILL at `, 'm'));

    // Stopped: the instances go with the supervisor, and status says no cluster runs.
    const exited = new Promise((resolve) => up.once('exit', resolve));
    up.kill('SIGTERM');
    assert.equal(await exited, 0);
    assert.notEqual((await fetch(`http://127.0.0.1:${base + 1}/readyz`).catch(() => undefined))?.status, 200);
    const after = await runWard(t, ['cluster', 'status', '--data-dir', dataDir]);
    assert.equal(after.code, 1);
    assert.match(after.stderr, /no cluster runs from .*has stopped/);
  });

  test('usage: --base-port and --port together, and a base port with no room after it, are refused', async (t) => {
    const both = await runWard(t, ['cluster', 'up', '--base-port', '9000', '--port', '9001']);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /^ward cluster: give --base-port or --port, not both/);
    const cramped = await runWard(t, ['cluster', 'up', '--base-port', '65535']);
    assert.equal(cramped.code, 2);
    const none = await runWard(t, ['cluster', 'status', '--data-dir', join(tmpdir(), 'ward-no-cluster-here')]);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /no cluster runs from/);
  });
});
