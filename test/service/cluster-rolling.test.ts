/**
 * Rolling restart and rolling upgrade with no failed request (issue 35, item 3): three `ward registry`
 * processes on one PostgreSQL schema and one Redis behind HAProxy (the cluster's configuration,
 * src/service/cluster-up.ts), a bounded mixed load through the balancer (registrations with keys,
 * reads, discovery, lists) and an event-stream subscriber through the balancer that resumes with
 * Last-Event-ID. The balancer neither retries nor redispatches (stricter than the cluster's), so only
 * the drain keeps requests off an instance that closes. Each instance in turn: SIGTERM (it drains: /readyz 503 while it still serves, until
 * HAProxy marks it DOWN), it exits, it starts again on its port, HAProxy marks it UP. The upgrade does
 * the same between an expanding `ward migrate` of the next build (a column and an index) and its
 * contracting one, which is refused while an instance of the old build is alive. Figures (requests,
 * failures, events) are printed as diagnostics.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { after, before, describe, test, type TestContext } from 'node:test';
import pg from 'pg';
import { freePort } from '../../src/core/http/free-port.ts';
import { haproxyConfig } from '../../src/service/cluster-up.ts';
import { startRegistryProcess, stopRegistryProcess } from '../../src/service/federation-up.ts';
import { eventually } from '../helpers/eventually.ts';
import { agentBody } from '../helpers/registry.ts';
import { REPO_ROOT, WARD_CLI, runScript } from '../helpers/ward-process.ts';
import { CONTRACT, EXPAND } from '../fixtures/upgrade-migrations.ts';

const DATABASE_URL = process.env.TEST_DATABASE_URL;
const HAPROXY = ['/usr/sbin/haproxy', '/usr/bin/haproxy'].find((path) => existsSync(path));
const skip = !DATABASE_URL ? 'needs TEST_DATABASE_URL' : !HAPROXY ? 'needs haproxy (apt-get install haproxy)' : false;
const NEXT_BUILD = join(REPO_ROOT, 'test', 'fixtures', 'upgraded-ward.ts');
/** Two clients, each waiting this long between requests: a few hundred requests over a roll. */
const CLIENTS = 2;
const PACE_MS = 100;

type Member = { port: number; dataDir: string; process: ChildProcess };

/** Three instances of `script` behind HAProxy on a fresh schema; `roll` replaces one in place. */
async function startCluster(t: TestContext, schema: string, root: string) {
  const env = { DATABASE_URL: DATABASE_URL as string, DATABASE_SCHEMA: schema, REDIS_URL: 'redis://127.0.0.1:6379', REGISTRY_SHUTDOWN_DRAIN_MS: '2000' };
  const start = async (port: number, dataDir: string, script = WARD_CLI) =>
    (await startRegistryProcess({ tier: 'organisational', name: 'rolling', jurisdiction: 'GB' }, { port, dataDir, env, script })).process;
  const members: Member[] = [];
  const running: { balancer?: ChildProcess } = {};
  t.after(async () => {
    running.balancer?.kill('SIGTERM');
    await Promise.all(members.map((member) => stopRegistryProcess(member.process, 'SIGKILL')));
  });
  mkdirSync(root, { recursive: true });
  for (let i = 0; i < 3; i += 1) {
    const port = await freePort();
    const dataDir = join(root, `instance-${i + 1}`);
    members.push({ port, dataDir, process: await start(port, dataDir) });
  }
  const port = await freePort();
  const socket = join(root, 'haproxy.sock');
  const config = join(root, 'haproxy.cfg');
  // Stricter than the cluster's balancer: no retry and no redispatch, so a request sent to an instance
  // that has stopped listening fails here instead of being saved by the balancer. The drain alone
  // must keep requests off an instance before it closes.
  const strict = haproxyConfig(port, members.map((member) => `127.0.0.1:${member.port}`), { statsSocket: socket })
    .replace('  option redispatch\n', '')
    .replace('  retries 2\n', '  retries 0\n');
  assert.ok(strict.includes('retries 0') && !strict.includes('redispatch'));
  writeFileSync(config, strict);
  running.balancer = spawn(HAPROXY as string, ['-f', config, '-db'], { stdio: 'ignore' });
  const states = () => serverStates(socket);
  await eventually(async () => ((await states().catch(() => [])).filter((state) => state === 'UP').length === 3 ? true : undefined), 'HAProxy to see three instances up', 30_000, 100);
  return {
    url: `http://127.0.0.1:${port}`,
    members,
    env,
    /** Drain, stop, start (with `script`), ready: one instance replaced while the others serve. */
    async roll(index: number, script = WARD_CLI): Promise<{ sawDraining: boolean }> {
      const member = members[index] as Member;
      const exited = new Promise((resolve) => member.process.once('exit', resolve));
      member.process.kill('SIGTERM');
      // The drain: /readyz at 503 while it still serves, until the balancer takes it out.
      const readiness = await fetch(`http://127.0.0.1:${member.port}/readyz`).then((response) => response.status).catch(() => 0);
      await eventually(async () => ((await states())[index] === 'DOWN' ? true : undefined), `HAProxy to take instance ${index + 1} out`, 30_000, 50);
      await exited;
      member.process = await start(member.port, member.dataDir, script);
      await eventually(async () => ((await states())[index] === 'UP' ? true : undefined), `HAProxy to take instance ${index + 1} back`, 30_000, 50);
      return { sawDraining: readiness === 503 };
    },
  };
}

/** Each server's state as HAProxy's runtime API says (`show stat`): UP, DOWN, or a transition. */
function serverStates(socket: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const connection = connect(socket);
    let text = '';
    connection.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    connection.on('error', reject);
    connection.on('end', () => {
      const [header, ...rows] = text.trim().split('\n');
      const columns = (header ?? '').replace(/^# /, '').split(',');
      const [px, sv, status] = ['pxname', 'svname', 'status'].map((name) => columns.indexOf(name)) as [number, number, number];
      resolve(
        rows
          .map((row) => row.split(','))
          .filter((cells) => cells[px] === 'registries' && cells[sv]?.startsWith('instance-'))
          .sort((a, b) => Number(a[sv]?.slice(9)) - Number(b[sv]?.slice(9)))
          .map((cells) => cells[status] ?? ''),
      );
    });
    connection.write('show stat\n');
  });
}

/** A mixed load through the balancer until stopped: every answer that is not 2xx, or no answer, is a failure. */
function startLoad(url: string) {
  const figures = { requests: 0, failures: 0, registered: 0, failed: [] as string[] };
  const ids: string[] = [];
  let stopped = false;
  const call = async (what: string, path: string, init?: RequestInit) => {
    figures.requests += 1;
    try {
      const response = await fetch(`${url}${path}`, init);
      const text = await response.text();
      if (response.status >= 300) throw new Error(`${response.status} ${text.slice(0, 200)}`);
      return text ? JSON.parse(text) : null;
    } catch (error) {
      figures.failures += 1;
      if (figures.failed.length < 5) figures.failed.push(`${what}: ${(error as Error).message}`);
      return undefined;
    }
  };
  const client = async (c: number) => {
    for (let n = 0; !stopped; n += 1) {
      const kind = n % 4;
      if (kind === 0) {
        const created = await call('register', '/v1/agents', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-idempotency-key': randomUUID() },
          body: JSON.stringify(agentBody({ display_name: `Rolling ${c}-${n}`, capabilities: { protocols: ['mesh-a2a-jsonrpc'], skills: ['rolling.skill'] } })),
        });
        if (created) {
          figures.registered += 1;
          ids.push(created.agent_id);
        }
      } else if (kind === 1 && ids.length > 0) await call('read', `/v1/agents/${encodeURIComponent(ids[n % ids.length] as string)}`);
      else if (kind === 2) await call('discover', '/v1/discover?capability=rolling.skill');
      else await call('list', '/v1/agents?limit=5');
      // The simulated clients' pace (the load the restart runs under), not a wait for background work.
      await new Promise((resolve) => setTimeout(resolve, PACE_MS));
    }
  };
  const clients = Array.from({ length: CLIENTS }, (_, c) => client(c));
  return {
    figures,
    async stop() {
      stopped = true;
      await Promise.all(clients);
      return figures;
    },
  };
}

/** An `agent.registered` subscriber through the balancer that resumes with Last-Event-ID whenever its stream ends. */
function subscribe(url: string) {
  const seen: number[] = [];
  let last = '0';
  let reconnects = -1;
  let stopped = false;
  const controller = new AbortController();
  const run = async () => {
    while (!stopped) {
      reconnects += 1;
      try {
        const response = await fetch(`${url}/v1/events/stream?event_types=agent.registered`, {
          headers: { accept: 'text/event-stream', 'last-event-id': last },
          signal: controller.signal,
        });
        if (response.status !== 200) throw new Error(`stream answered ${response.status}`);
        const reader = (response.body as ReadableStream<Uint8Array>).getReader();
        const decoder = new TextDecoder();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += decoder.decode(value, { stream: true });
          let end;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const frame = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const id = /^id: (\d+)$/m.exec(frame)?.[1];
            if (id && /^event: agent\.registered$/m.test(frame)) {
              seen.push(Number(id));
              last = id;
            }
          }
        }
      } catch {
        // Cut off (the instance stopped, or this subscriber did): resume from `last`.
      }
      // The simulated subscriber's pause before it reconnects (its behaviour), not a wait for background work.
      if (!stopped) await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };
  const running = run();
  return {
    seen,
    reconnects: () => reconnects,
    async stop() {
      stopped = true;
      controller.abort();
      await running;
    },
  };
}

describe('rolling restart and upgrade behind HAProxy', { skip }, () => {
  let root: string;
  let client: pg.Client;
  const schemas: string[] = [];

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'ward-rolling-'));
    client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
  });
  after(async () => {
    for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
    rmSync(root, { recursive: true, force: true });
  });

  /** Stops load and subscriber, then checks and prints the figures: no failure, every registration event once, in order. */
  async function finish(t: TestContext, name: string, schema: string, load: ReturnType<typeof startLoad>, subscriber: ReturnType<typeof subscribe>) {
    const figures = await load.stop();
    const { rows } = await client.query(`select seq from "${schema}".events where type = 'agent.registered' order by seq`);
    const recorded = rows.map((row) => Number(row.seq));
    await eventually(() => (subscriber.seen.length >= recorded.length ? true : undefined), 'the subscriber to catch up', 30_000, 50);
    await subscriber.stop();
    const lost = recorded.filter((seq) => !subscriber.seen.includes(seq)).length;
    const duplicates = subscriber.seen.length - new Set(subscriber.seen).size;
    t.diagnostic(
      `${name}: ${figures.requests} requests (${figures.registered} registrations), ${figures.failures} failed; ` +
        `events: ${recorded.length} recorded, ${subscriber.seen.length} received, ${lost} lost, ${duplicates} duplicated, ` +
        `subscriber resumed ${subscriber.reconnects()} time(s)`,
    );
    assert.deepEqual(figures.failed, [], 'no failed request');
    assert.equal(figures.failures, 0);
    assert.ok(figures.registered > 0);
    assert.deepEqual(subscriber.seen, recorded, 'every registration event, once, in order');
  }

  test('restarting every instance one by one under load fails no request and loses no event', async (t) => {
    const schema = `ward_rolling_${Date.now().toString(36)}`;
    schemas.push(schema);
    const cluster = await startCluster(t, schema, join(root, 'restart'));
    const load = startLoad(cluster.url);
    const subscriber = subscribe(cluster.url);
    await eventually(() => (load.figures.registered >= 5 && subscriber.seen.length >= 3 ? true : undefined), 'the load and the stream to run');
    const drained: boolean[] = [];
    for (let i = 0; i < 3; i += 1) drained.push((await cluster.roll(i)).sawDraining);
    t.diagnostic(`/readyz of each instance right after its SIGTERM answered 503 (draining): ${drained.join(', ')}`);
    await finish(t, 'rolling restart', schema, load, subscriber);
  });

  test('an upgrade (expand, roll, contract) under load fails no request and loses no event; the contract waits for the old build', async (t) => {
    const schema = `ward_upgrade_${Date.now().toString(36)}`;
    schemas.push(schema);
    const cluster = await startCluster(t, schema, join(root, 'upgrade'));
    const load = startLoad(cluster.url);
    const subscriber = subscribe(cluster.url);
    const migrate = () => runScript(t, NEXT_BUILD, ['migrate'], { DATABASE_URL: DATABASE_URL as string, DATABASE_SCHEMA: schema });
    await eventually(() => (load.figures.registered >= 5 && subscriber.seen.length >= 3 ? true : undefined), 'the load and the stream to run');

    // Expand while the old build serves; its contracting step is refused: three old instances live.
    const expand = await migrate();
    assert.equal(expand.code, 3, expand.stdout + expand.stderr);
    assert.match(expand.stdout, new RegExp(`pending: ${EXPAND} \\(expand\\)\\npending: ${CONTRACT} \\(contract\\)\\napplied: ${EXPAND}`));
    assert.match(expand.stderr, new RegExp(`refused ${CONTRACT} \\(contract\\): 3 live instance\\(s\\) run an older build`));
    const index = await client.query(`select indexdef from pg_indexes where schemaname = $1 and indexname = 'agents_upgrade_note'`, [schema]);
    assert.equal(index.rows.length, 1, 'the expanding step added the index');

    // Roll to the next build; half-way the contract is still refused.
    await cluster.roll(0, NEXT_BUILD);
    const halfway = await migrate();
    assert.equal(halfway.code, 3, halfway.stdout + halfway.stderr);
    assert.match(halfway.stderr, /2 live instance\(s\) run an older build/);
    await cluster.roll(1, NEXT_BUILD);
    await cluster.roll(2, NEXT_BUILD);

    // Every instance runs the next build: the contracting step runs.
    const contract = await migrate();
    assert.equal(contract.code, 0, contract.stdout + contract.stderr);
    assert.match(contract.stdout, new RegExp(`applied: ${CONTRACT}`));
    const column = await client.query(`select is_nullable, column_default from information_schema.columns where table_schema = $1 and table_name = 'agents' and column_name = 'upgrade_note'`, [schema]);
    assert.deepEqual(column.rows, [{ is_nullable: 'NO', column_default: "''::text" }]);
    // Served through the contract too: a registration after it.
    await eventually(() => (load.figures.registered >= 3 ? true : undefined), 'registrations after the contract');
    const registeredBefore = load.figures.registered;
    await eventually(() => (load.figures.registered > registeredBefore ? true : undefined), 'a registration after the contract');
    await finish(t, 'rolling upgrade', schema, load, subscriber);
  });
});
