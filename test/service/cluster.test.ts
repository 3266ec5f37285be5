/**
 * Three registry instances as real processes on one PostgreSQL schema and one Redis, behind HAProxy
 * from Debian's packages (src/service/cluster-up.ts), on loopback. What several instances must get
 * right, each shown through the real balancer or straight at one instance: one view of the data, one
 * answer per idempotency key, one rate limit per key, event streams that resume on another instance
 * without a gap, revocation everywhere at once, one ledger history, and no acknowledged write lost
 * when an instance is killed.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, after, describe, test } from 'node:test';
import pg from 'pg';
import { clusterUp, type Cluster } from '../../src/service/cluster-up.ts';
import { stopRegistryProcess } from '../../src/service/federation-up.ts';
import { agentBody } from '../helpers/registry.ts';
import { eventually } from '../helpers/eventually.ts';
import { runWard } from '../helpers/ward-process.ts';

const DATABASE_URL = process.env.TEST_DATABASE_URL;
const HAPROXY = ['/usr/sbin/haproxy', '/usr/bin/haproxy'].find((path) => existsSync(path));
const skip = !DATABASE_URL ? 'needs TEST_DATABASE_URL' : !HAPROXY ? 'needs haproxy (apt-get install haproxy; .ci/run installs it)' : false;

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: any }> {
  const response = await fetch(url, init);
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

function register(url: string, body: unknown, key = randomUUID(), headers: Record<string, string> = {}) {
  return json(`${url}/v1/agents`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-idempotency-key': key, ...headers }, body: JSON.stringify(body) });
}

/** Reads `event: agent.registered` frames from a stream until `count` arrived; answers their ids. */
async function readRegistered(url: string, lastEventId: string | undefined, count: number, seen: string[]): Promise<string | undefined> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 20_000);
  const response = await fetch(`${url}/v1/events/stream?event_types=agent.registered`, {
    headers: { accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
    signal: controller.signal,
  });
  assert.equal(response.status, 200);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let last = lastEventId;
  try {
    while (seen.length < count) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const id = /^id: (\S+)$/m.exec(frame)?.[1];
        if (id && /^event: agent\.registered$/m.test(frame)) {
          seen.push(id);
          last = id;
        }
      }
    }
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  return last;
}

describe('three registry instances behind HAProxy', { skip }, () => {
  let cluster: Cluster;
  let dataDir: string;
  const schema = `ward_cluster_${Date.now().toString(36)}`;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'ward-cluster-'));
    cluster = await clusterUp({ databaseUrl: DATABASE_URL as string, schema, redisUrl: 'redis://127.0.0.1:6379', dataDir, port: 0, haproxyPath: HAPROXY as string });
  });
  after(async () => {
    await cluster?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  });

  test('an agent written through one instance is read, discovered and routed through the others at once', async () => {
    const [one, two, three] = cluster.instances.map((instance) => instance.url) as [string, string, string];
    const created = await register(one, agentBody({ display_name: 'Cluster triage', capabilities: { protocols: ['mesh-a2a-jsonrpc'], skills: ['cluster.skill'] } }));
    assert.equal(created.status, 201, JSON.stringify(created.body));
    for (const url of [two, three]) {
      const read = await json(`${url}/v1/agents/${encodeURIComponent(created.body.agent_id)}`);
      assert.equal(read.status, 200, url);
      const found = await json(`${url}/v1/discover?capability=cluster.skill`);
      assert.deepEqual(found.body.results.map((result: any) => result.agent_id), [created.body.agent_id], url);
      const advice = await json(`${url}/v1/route`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ capability: 'cluster.skill' }) });
      assert.equal(advice.body.resolved_target, created.body.agent_id, url);
    }
  });

  test('/metrics through the balancer shows the request counts moving with the traffic', async () => {
    // Round-robin: three scrapes in a row reach the three instances, one each.
    const discoveries = async () => {
      let total = 0;
      for (let i = 0; i < 3; i += 1) {
        const text = await (await fetch(`${cluster.url}/metrics`)).text();
        const line = text.split('\n').find((l) => l.startsWith('ward_http_requests_total{') && l.includes('route="/v1/discover"') && l.includes('status="200"'));
        total += line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
      }
      return total;
    };
    const before = await discoveries();
    for (let i = 0; i < 60; i += 1) assert.equal((await fetch(`${cluster.url}/v1/discover?capability=metrics.skill`)).status, 200);
    const after = await discoveries();
    assert.ok(after - before >= 20, `the discovery counters moved by ${after - before} for 60 requests`);
  });

  test('the same idempotency key sent to two instances at the same moment makes one record', async () => {
    const [one, two] = cluster.instances.map((instance) => instance.url) as [string, string];
    const key = randomUUID();
    const body = agentBody({ display_name: 'Exactly once' });
    const answers = await Promise.all([register(one, body, key), register(two, body, key)]);
    const ids = new Set(answers.filter((answer) => answer.status < 300).map((answer) => answer.body.agent_id));
    assert.ok(answers.every((answer) => answer.status < 300 || answer.body.error.code === 'IDEMPOTENCY_KEY_IN_PROGRESS'), JSON.stringify(answers));
    assert.equal(ids.size, 1);
    const replay = await register(cluster.url, body, key);
    assert.equal(replay.status, 200);
    assert.ok(ids.has(replay.body.agent_id));
    const listed = await json(`${cluster.url}/v1/agents?q=${encodeURIComponent('Exactly once')}`);
    assert.equal(listed.body.agents.filter((agent: any) => agent.display_name === 'Exactly once').length, 1);
  });

  test("one key's rate limit holds across the three, not three times over; revoking it on one refuses it on the others", async () => {
    const created = await json(`${cluster.url}/v1/admin/billing/api-keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ org_id: 'org-cluster', display_name: 'limited', tier: 'enterprise', scopes: ['registry:read'], limits: { requests_per_minute: 12 } }),
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const key = created.body.raw_key as string;
    const statuses: number[] = [];
    for (let i = 0; i < 30; i += 1) {
      const url = cluster.instances[i % 3]?.url as string;
      statuses.push((await fetch(`${url}/v1/agents?limit=1`, { headers: { 'x-api-key': key } })).status);
    }
    assert.equal(statuses.filter((status) => status === 200).length, 12, statuses.join(','));
    assert.equal(statuses.filter((status) => status === 429).length, 18);

    const other = await json(`${cluster.url}/v1/admin/billing/api-keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ org_id: 'org-cluster', display_name: 'to revoke', scopes: ['registry:read'] }),
    });
    const [one, two, three] = cluster.instances.map((instance) => instance.url) as [string, string, string];
    assert.equal((await fetch(`${two}/v1/agents?limit=1`, { headers: { 'x-api-key': other.body.raw_key } })).status, 200);
    assert.equal((await fetch(`${one}/v1/admin/billing/api-keys/${other.body.key_id}`, { method: 'DELETE' })).status, 204);
    for (const url of [two, three]) assert.equal((await fetch(`${url}/v1/agents?limit=1`, { headers: { 'x-api-key': other.body.raw_key } })).status, 401, url);
  });

  test('writes on all three make one ledger history, which `ward ledger verify` accepts through the balancer', async (t) => {
    await Promise.all(cluster.instances.flatMap((instance, i) => Array.from({ length: 5 }, (_, n) => register(instance.url, agentBody({ display_name: `Ledgered ${i}-${n}` })))));
    // Every instance signs the same head: one tree, not three forks.
    const heads = await Promise.all(cluster.instances.map((instance) => json(`${instance.url}/v1/transparency/sth`)));
    assert.equal(new Set(heads.map((head) => `${head.body.tree_size}:${head.body.root_hash}`)).size, 1, JSON.stringify(heads.map((head) => head.body)));
    const verified = await runWard(t, ['ledger', 'verify', '--url', cluster.url, '--full']);
    assert.equal(verified.code, 0, verified.stdout + verified.stderr);
  });

  test('an event stream whose instance is killed resumes through the balancer with Last-Event-ID and misses nothing', async () => {
    const [one, , three] = cluster.instances as [Cluster['instances'][0], Cluster['instances'][0], Cluster['instances'][0]];
    const start = await json(`${one.url}/v1/transparency/sth`);
    assert.equal(start.status, 200);
    const seen: string[] = [];
    // Follow the stream on instance 3 from now (its first frames are after the current position).
    const head = (await json(`${one.url}/v1/events?limit=1`)).body.events?.[0]?.seq as number | undefined;
    const first = readRegistered(three.url, head === undefined ? undefined : String(head), 3, seen);
    for (let i = 0; i < 3; i += 1) assert.equal((await register(one.url, agentBody({ display_name: `Streamed ${i}` }))).status, 201);
    const lastId = await first;
    assert.equal(seen.length, 3);

    await stopRegistryProcess(three.process, 'SIGKILL');
    for (let i = 3; i < 6; i += 1) assert.equal((await register(one.url, agentBody({ display_name: `Streamed ${i}` }))).status, 201);
    await readRegistered(cluster.url, lastId, 6, seen);
    assert.equal(seen.length, 6);
    assert.equal(new Set(seen).size, 6, 'no duplicate');
    const recorded = (await json(`${one.url}/v1/events?event_types=agent.registered&limit=6`)).body.events.map((event: any) => String(event.seq)).reverse();
    assert.deepEqual(seen, recorded, 'exactly the registrations, in order');
  });

  test('a reader that leaves a stream through the balancer is dropped by its instance at once: the subscribers gauge falls, not at the next ping', async () => {
    const gauges = async () => {
      let total = 0;
      for (const instance of cluster.instances) {
        const text = await (await fetch(`${instance.url}/metrics`).catch(() => undefined))?.text();
        total += Number(/^ward_event_stream_subscribers(?:\{[^}]*\})? (\d+)$/m.exec(text ?? '')?.[1] ?? 0);
      }
      return total;
    };
    const before = await gauges();
    const controller = new AbortController();
    const response = await fetch(`${cluster.url}/v1/events/stream`, { headers: { accept: 'text/event-stream' }, signal: controller.signal });
    await (response.body as ReadableStream<Uint8Array>).getReader().read();
    assert.equal(await gauges(), before + 1);
    controller.abort();
    // The instances ping every 15 s: only the balancer passing the close on (option abortonclose)
    // drops the stream sooner. Without it the gauge held for 15 to 30 s.
    await eventually(async () => ((await gauges()) === before ? true : undefined), 'the subscribers gauge to fall', 10_000, 50);
  });

  test('killing an instance (SIGKILL) under write load loses no acknowledged write', async () => {
    const alive = cluster.instances.filter((instance) => instance.process.exitCode === null && instance.process.signalCode === null);
    assert.ok(alive.length >= 2);
    const victim = alive[1] as Cluster['instances'][0];
    const acknowledged: string[] = [];
    let stop = false;
    const writers = Array.from({ length: 6 }, async (_, w) => {
      for (let n = 0; !stop; n += 1) {
        const answer = await register(cluster.url, agentBody({ display_name: `Under load ${w}-${n}` })).catch(() => undefined);
        if (answer?.status === 201) acknowledged.push(answer.body.agent_id);
      }
    });
    // Under load: the kill comes once the writers have had 20 writes acknowledged (writes are in
    // flight on both instances then), and the load goes on until 20 more are, through the survivor.
    await eventually(() => (acknowledged.length >= 20 ? true : undefined), 'twenty writes acknowledged before the kill');
    await stopRegistryProcess(victim.process, 'SIGKILL');
    const atKill = acknowledged.length;
    await eventually(() => (acknowledged.length >= atKill + 20 ? true : undefined), 'twenty writes acknowledged after the kill');
    stop = true;
    await Promise.all(writers);
    const survivor = alive[0] as Cluster['instances'][0];
    for (const id of acknowledged) assert.equal((await fetch(`${survivor.url}/v1/agents/${encodeURIComponent(id)}`)).status, 200, id);
  });
});
