import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test, type TestContext } from 'node:test';
import { listEvents } from '../../../../src/registry/storage/stores/event-store.ts';
import { createHealthProber } from '../../../../src/registry/agents/health/health-prober.ts';
import { probeEndpoint } from '../../../../src/registry/agents/health/probe.ts';
import { BACKENDS, buildTestRegistry, registerAgent, ulidOf } from '../../../helpers/registry.ts';

type Behaviour = 'ok' | 'down-500' | 'auth' | 'hang' | 'no-card' | 'bad-card';

/** A real HTTP server on loopback whose behaviour a test switches; `stop()` makes it unreachable. */
async function peer(t: TestContext, initial: Behaviour = 'ok') {
  let behaviour: Behaviour = initial;
  const handler = (request: IncomingMessage, response: ServerResponse) => {
    const isCard = request.url?.endsWith('/.well-known/agent-card.json');
    if (behaviour === 'hang') return; // never answers
    if (behaviour === 'down-500') return void response.writeHead(500).end();
    if (behaviour === 'auth') return void response.writeHead(401).end();
    if (isCard) {
      if (behaviour === 'no-card') return void response.writeHead(404).end();
      if (behaviour === 'bad-card') return void response.writeHead(200, { 'content-type': 'text/html' }).end('<html>hello</html>');
      return void response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ name: 'x', protocol: 'mesh-a2a-jsonrpc', methods: ['tasks/send'] }));
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
  };
  let server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const stop = () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); });
  t.after(stop);
  return {
    url: `http://127.0.0.1:${port}`,
    set: (next: Behaviour) => void (behaviour = next),
    stop,
    async start() {
      server = createServer(handler);
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    },
  };
}

const FAST = { timeoutMs: 300, allowPrivate: true };

describe('endpoint probe', () => {
  test('classifies healthy, http_error, auth_required, timeout, unreachable, not_protocol', async (t) => {
    const server = await peer(t);
    const mesh = { url: `${server.url}/rpc/consent`, protocol: 'mesh-a2a-jsonrpc', health_url: `${server.url}/health` };
    const plain = { ...mesh, protocol: 'fhir-rest' };
    assert.deepEqual({ ...(await probeEndpoint(mesh, FAST)), latency_ms: 0 }, { status: 'healthy', reason: null, latency_ms: 0 });
    for (const [behaviour, reason] of [['down-500', 'http_error'], ['auth', 'auth_required'], ['hang', 'timeout'], ['no-card', 'not_protocol'], ['bad-card', 'not_protocol']] as const) {
      server.set(behaviour);
      assert.equal((await probeEndpoint(mesh, FAST)).reason, reason, behaviour);
    }
    server.set('no-card');
    assert.equal((await probeEndpoint(plain, FAST)).status, 'healthy', 'only mesh endpoints must serve a card');
    await server.stop();
    assert.equal((await probeEndpoint(mesh, FAST)).reason, 'unreachable');
  });

  test('private and loopback targets are refused unless allowed, by name and by literal address', async (t) => {
    const server = await peer(t);
    const port = new URL(server.url).port;
    for (const host of ['127.0.0.1', 'localhost', '[::1]', '10.1.2.3', '192.168.0.10']) {
      const target = { url: `http://${host}:${port}/`, protocol: 'fhir-rest', health_url: `http://${host}:${port}/health` };
      assert.equal((await probeEndpoint(target, { timeoutMs: 300, allowPrivate: false })).reason, 'private_address', host);
    }
  });
});

for (const backend of BACKENDS) {
  describe(`health prober [${backend}]`, () => {
    test('records readings, ranks agents by health and emits agent.health_changed only on a change', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const server = await peer(t);
      const agent = await registerAgent(registry, {
        capabilities: { skills: ['probe.me'] },
        endpoints: [
          { url: `${server.url}/rpc/a`, protocol: 'mesh-a2a-jsonrpc', health_url: `${server.url}/health`, priority: 1 },
          { url: 'https://no-health-url.example.org', protocol: 'fhir-rest' },
        ],
      });
      const prober = createHealthProber({ storage: registry.storage, clock: registry.app.ward.clock, options: { ...FAST, intervalMs: 30_000, concurrency: 4 } });
      assert.equal(await prober.runOnce(), 1);
      const read = async () => (await registry.call({ method: 'GET', url: `/v1/agents/${ulidOf(agent.agent_id)}` })).body;
      const first = await read();
      assert.equal(first.endpoints[0].health.status, 'healthy');
      assert.equal(typeof first.endpoints[0].health.latency_ms, 'number');
      assert.equal(first.endpoints[1].health.status, 'unknown');
      assert.equal(first.version, 1, 'health is not an owner write');
      const ranked = (await registry.call({ method: 'GET', url: '/v1/discover?capability=probe.me' })).body.results[0];
      assert.equal(ranked.score_breakdown.health, 200);

      await prober.runOnce();
      server.set('down-500');
      await prober.runOnce();
      const down = await read();
      assert.deepEqual([down.endpoints[0].health.status, down.endpoints[0].health.reason], ['unhealthy', 'http_error']);
      server.set('ok');
      await prober.runOnce();
      const changes = (await listEvents(registry.storage.db, { afterSeq: 0, limit: 100, types: ['agent.health_changed'] })).map((e) => [e.data.from, e.data.to, e.data.reason]);
      assert.deepEqual(changes, [['unknown', 'healthy', null], ['healthy', 'unhealthy', 'http_error'], ['unhealthy', 'healthy', null]]);
    });

    test('a server that goes away and comes back is followed, and routing avoids it meanwhile', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const [a, b] = [await peer(t), await peer(t)];
      const agent = await registerAgent(registry, {
        endpoints: [
          { url: `${a.url}/x`, protocol: 'fhir-rest', health_url: `${a.url}/health`, priority: 1 },
          { url: `${b.url}/x`, protocol: 'fhir-rest', health_url: `${b.url}/health`, priority: 2 },
        ],
      });
      const prober = createHealthProber({ storage: registry.storage, clock: registry.app.ward.clock, options: { ...FAST, intervalMs: 30_000, concurrency: 2 } });
      const selected = async () => (await registry.call({ method: 'POST', url: '/v1/route', payload: { target: agent.agent_id } })).body.selected.url;
      await prober.runOnce();
      assert.equal(await selected(), `${a.url}/x`);
      await a.stop();
      await prober.runOnce();
      assert.equal(await selected(), `${b.url}/x`, 'the unhealthy primary is skipped');
      await a.start();
      await prober.runOnce();
      assert.equal(await selected(), `${a.url}/x`);
    });

    test('only the lease holder probes when several instances share the database', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const server = await peer(t);
      await registerAgent(registry, { endpoints: [{ url: `${server.url}/x`, protocol: 'fhir-rest', health_url: `${server.url}/health` }] });
      const options = { ...FAST, intervalMs: 30_000, concurrency: 2 };
      const one = createHealthProber({ storage: registry.storage, clock: registry.app.ward.clock, options });
      const two = createHealthProber({ storage: registry.storage, clock: registry.app.ward.clock, options });
      assert.equal(await one.runOnce(), 1);
      assert.equal(await two.runOnce(), 0, 'the second instance does not probe while the lease is held');
      assert.equal(await one.runOnce(), 1, 'the holder renews its lease');
      let now = Date.now() + 2 * options.intervalMs + 1000;
      const later = createHealthProber({ storage: registry.storage, clock: { now: () => new Date(now) }, options });
      assert.equal(await later.runOnce(), 1, 'a lapsed lease is taken over');
      now += 1;
    });
  });
}
