/**
 * The registry's probes and metrics (docs/operations.md): /livez answers while the process does;
 * /readyz checks storage, migrations, Redis and draining, answering 503 in the envelope when one fails;
 * /metrics is Prometheus text whose request histogram moves with traffic, needs registry:admin when
 * authentication is on, and never carries a raw path.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { AUDIENCE, ISSUER, makeSigningKey, signToken, startJwksServer, tokenClaims } from '../credentials/fixtures.ts';
import { registerOverHttp, startRegistries, testScope } from '../../helpers/listening.ts';
import { BACKENDS, agentBody } from '../../helpers/registry.ts';
import { createServer } from 'node:http';

/** The value of one sample line of a Prometheus exposition (0 when absent). */
function sample(text: string, name: string, labels: Record<string, string>): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const body = line.slice(name.length + 1, line.indexOf('}'));
    if (Object.entries(labels).every(([key, value]) => body.includes(`${key}="${value}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

for (const backend of BACKENDS) {
  describe(`registry probes and metrics [${backend}]`, () => {
    test('livez and readyz; metrics follow the traffic by route template', async (t) => {
      const scope = testScope(t);
      const [registry] = await startRegistries(scope, backend);
      assert.ok(registry);
      const live = await fetch(`${registry.baseUrl}/livez`);
      assert.equal(live.status, 200);
      assert.deepEqual(await live.json(), { status: 'ok' });
      const ready = await fetch(`${registry.baseUrl}/readyz`);
      assert.equal(ready.status, 200);
      const readiness = (await ready.json()) as any;
      assert.equal(readiness.status, 'ready');
      assert.equal(readiness.checks.storage.ok, true);
      assert.match(readiness.checks.migrations.detail, /^(\d+) of \1 applied$/);
      assert.deepEqual(readiness.checks.redis, { ok: true, detail: 'not configured' });

      const before = await (await fetch(`${registry.baseUrl}/metrics`)).text();
      const uri = await registerOverHttp(registry.baseUrl, 'Metered');
      await fetch(`${registry.baseUrl}/v1/agents/${encodeURIComponent(uri)}`);
      await fetch(`${registry.baseUrl}/v1/agents/NHS-943-476-5919`);
      const response = await fetch(`${registry.baseUrl}/metrics`);
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
      const after = await response.text();
      const registered = { method: 'POST', route: '/v1/agents', status: '201' };
      assert.equal(sample(after, 'ward_http_requests_total', registered) - sample(before, 'ward_http_requests_total', registered), 1);
      assert.ok(sample(after, 'ward_http_request_duration_seconds_count', { method: 'GET', route: '/v1/agents/:id', status_class: '4xx' }) >= 1);
      assert.ok(sample(after, 'ward_write_commit_seconds_count', {}) >= 1);
      assert.ok(sample(after, 'ward_http_refusals_total', { code: 'PHI_DETECTED' }) + sample(after, 'ward_http_refusals_total', { code: 'AGENT_NOT_FOUND' }) + sample(after, 'ward_http_refusals_total', { code: 'VALIDATION_ERROR' }) >= 1);
      assert.match(after, /process_resident_memory_bytes\{server="registry"\}/);
      if (backend === 'postgres') {
        // The pool: its maximum (the test storage opens 8), and connections in use plus idle never above it.
        const max = sample(after, 'ward_db_pool_connections', { state: 'max' });
        assert.equal(max, 8);
        const open = sample(after, 'ward_db_pool_connections', { state: 'in_use' }) + sample(after, 'ward_db_pool_connections', { state: 'idle' });
        assert.ok(open >= 1 && open <= max, `${open} connections open`);
        assert.match(after, /ward_db_pool_connections\{state="waiting"[^}]*\} 0/);
      } else {
        assert.doesNotMatch(after, /ward_db_pool_connections/, 'SQLite has no pool');
      }

      // A probe round: one endpoint answering, one refusing, each counted by outcome.
      const peer = createServer((_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}'));
      await new Promise<void>((resolve) => peer.listen(0, '127.0.0.1', resolve));
      t.after(() => new Promise<void>((resolve) => peer.close(() => resolve())));
      const healthy = `http://127.0.0.1:${(peer.address() as { port: number }).port}/health`;
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const refused = `http://127.0.0.1:${(closed.address() as { port: number }).port}/health`;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      for (const health_url of [healthy, refused]) {
        const created: Response = await fetch(`${registry.baseUrl}/v1/agents`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-idempotency-key': crypto.randomUUID() },
          body: JSON.stringify(agentBody({ endpoints: [{ url: 'https://agents.example.org/fhir', protocol: 'fhir-rest', priority: 10, health_url }], capabilities: { protocols: ['fhir-rest'], skills: ['triage.assess'] } })),
        });
        assert.equal(created.status, 201);
      }
      await registry.app.ward.healthProber.runOnce();
      const probed = await (await fetch(`${registry.baseUrl}/metrics`)).text();
      assert.equal(sample(probed, 'ward_health_probes_total', { outcome: 'healthy' }), 1);
      assert.equal(sample(probed, 'ward_health_probes_total', { outcome: 'unreachable' }), 1);
      assert.match(after, /nodejs_eventloop_lag_seconds/);
      assert.ok(!after.includes('943-476-5919') && !after.includes('Metered'), 'no raw path or content in the metrics');
    });

    test('readyz answers 503 in the envelope when the database is behind this build, and while draining', async (t) => {
      const scope = testScope(t);
      const [registry] = await startRegistries(scope, backend);
      assert.ok(registry);
      await sql`delete from ward_migrations where name = '008-computer-use'`.execute(registry.storage.db);
      const behind = await fetch(`${registry.baseUrl}/readyz`);
      assert.equal(behind.status, 503);
      const envelope = (await behind.json()) as any;
      assert.equal(envelope.error.code, 'SERVICE_UNAVAILABLE');
      assert.match(envelope.error.message, /migrations \(1 pending \(008-computer-use\); run ward migrate\)/);
      assert.equal(envelope.error.details.checks.storage.ok, true);
      assert.equal((await fetch(`${registry.baseUrl}/livez`)).status, 200, 'alive all the same');
    });
  });
}

describe('registry metrics need registry:admin when authentication is on', () => {
  test('jwt mode: anonymous 401, a read token 403, an admin token 200; the probes stay public', async (t) => {
    const signing = makeSigningKey('ES256');
    const jwks = await startJwksServer(t, [signing]);
    const scope = testScope(t);
    const [registry] = await startRegistries(scope, 'sqlite', {
      env: { REGISTRY_AUTH_MODE: 'jwt', REGISTRY_JWT_JWKS_URI: jwks.jwksUri, REGISTRY_JWT_ISSUER: ISSUER, REGISTRY_JWT_AUDIENCE: AUDIENCE },
    });
    assert.ok(registry);
    const now = Math.floor(Date.now() / 1000);
    const token = (scope: string) => signToken(signing, tokenClaims({ iat: now, exp: now + 300, scope }));
    const metrics = (headers: Record<string, string> = {}) => fetch(`${registry.baseUrl}/metrics`, { headers });
    assert.equal((await metrics()).status, 401);
    assert.equal((await metrics({ authorization: `Bearer ${await token('registry:read')}` })).status, 403);
    const admitted = await metrics({ authorization: `Bearer ${await token('registry:admin')}` });
    assert.equal(admitted.status, 200);
    assert.match(await admitted.text(), /ward_http_requests_total\{/);
    assert.equal((await fetch(`${registry.baseUrl}/livez`)).status, 200);
    assert.equal((await fetch(`${registry.baseUrl}/readyz`)).status, 200);
  });
});
